/**
 * Who owns each table (issue 27, docs/adr/0006-each-app-owns-its-data.md, docs/architecture.md "Who owns
 * which table"). An app writes only its own tables and the shared infrastructure; what it needs of another
 * app's facts it learns from events in the shared log. The database enforces the map: each app has a login
 * role with privileges on its own tables only (`applyOwnershipGrants`, run by the migrations), and
 * ownership.spec.ts checks that the apps' code uses no repository of another app's tables beyond the
 * reads listed in FOREIGN_READS - a list that may only shrink.
 */

export const APPS = ['ingestion', 'scoring', 'regression', 'read_model'] as const;
export type AppName = (typeof APPS)[number];

/** The shared infrastructure every app appends to: the event log and its outbox, dead letters, the API keys every HTTP edge checks. */
export type TableOwner = AppName | 'shared';

export const TABLE_OWNERS = {
  // The log and its relay: every app appends its own event types (ownership.spec.ts checks which).
  events: 'shared',
  outbox: 'shared',
  dead_letters: 'shared',
  api_keys: 'shared',
  // Issue 30: the projects every key, request and message is scoped to.
  projects: 'shared',
  // The suite catalogue, the gate, its budgets and the monitor's windows: the ingestion's.
  suite_versions: 'ingestion',
  suite_cases: 'ingestion',
  suite_sources: 'ingestion',
  gate_verdicts: 'ingestion',
  gate_overrides: 'ingestion',
  budgets: 'ingestion',
  budget_spend: 'ingestion',
  budget_reservations: 'ingestion',
  monitor_windows: 'ingestion',
  // Per-case evidence: written only by the scoring worker.
  evidence: 'scoring',
  // The regression decision, baselines, findings and the judge's calibration.
  run_verdicts: 'regression',
  baseline_pins: 'regression',
  findings: 'regression',
  calibration_sets: 'regression',
  calibration_items: 'regression',
  calibration_reports: 'regression',
  comparison_reports: 'regression',
  // The query side, rebuilt from the log.
  runs: 'read_model',
  eval_results: 'read_model',
  read_run_verdicts: 'read_model',
  read_case_results: 'read_model',
  projection_checkpoints: 'read_model',
  projection_inbox: 'read_model',
} as const satisfies Record<string, TableOwner>;

export type TableName = keyof typeof TABLE_OWNERS;

/**
 * The reads of another app's table that remain, each with the event that is to replace it: none since issue
 * 27 landed - every fact an app needs of another crosses as events in the shared log. Kept as the one place
 * such a read would have to be declared: the database grants exactly these SELECTs beyond an app's own
 * tables, and ownership.spec.ts fails when an app reads a table not listed here.
 */
export interface ForeignRead {
  readonly app: AppName;
  readonly table: TableName;
  readonly why: string;
  readonly replacedBy: string;
}

export const FOREIGN_READS: readonly ForeignRead[] = [];

/**
 * Which app appends each event type to the shared log: the run model decides the event, and only the app
 * whose command it answers writes it. The database enforces it too: a trigger on `events` refuses, for an
 * app's role, a type that is not its own (`applyEventAuthorship`).
 */
export const EVENT_AUTHORS = {
  'run.opened': 'ingestion',
  'outputs.received': 'ingestion',
  'run.sealed': 'ingestion',
  'cases.scored': 'scoring',
  'run.scored': 'scoring',
  'run.compared': 'regression',
  // A judge's calibration report, folded by the gate and the read model (JudgeStatusRepository).
  'calibration.reported': 'regression',
  // A suite version's head and case pages, written with its rows; folded by the worker, regression and read model.
  'suite.published': 'ingestion',
  'suite.cases.published': 'ingestion',
} as const satisfies Record<string, AppName>;

/** The login role each app connects as (deploy/, scripts/start-services.js). Roles are cluster-wide; grants are per schema. */
export function appRole(app: AppName): string {
  return `evals_${app}`;
}

/**
 * The PostgreSQL schema each app's tables live in (issue 27: one owner per table, enforced by the database).
 * `base` is the deployment's schema - `public` by default, a test's own schema in the tests - and holds the
 * shared infrastructure (the log, the outbox, dead letters, API keys, the migrations table). Each app's
 * tables sit in a schema of their own beside it: `ingestion`, `scoring`, `regression`, `read_model` on
 * `public`, `<base>_<app>` on any other base, so that many test schemas share one server.
 */
export function appSchema(base: string, app: AppName): string {
  return base === 'public' ? app : `${base}_${app}`;
}

/** The schema `table` lives in under `base`: its owner's, or `base` for the shared ones. */
export function tableSchema(base: string, table: TableName): string {
  const owner: TableOwner = TABLE_OWNERS[table];
  return owner === 'shared' ? base : appSchema(base, owner);
}

/**
 * Every schema of a deployment, the shared one first: the search_path of every connection, so SQL names its
 * tables unqualified and the same statements run against any base. PostgreSQL skips a schema on the path
 * that the role has no USAGE on, so to another app's role an app's table is not even there (42P01); named
 * with its schema it is refused (42501).
 */
export function deploymentSchemas(base: string): string[] {
  return [base, ...APPS.map((app) => appSchema(base, app))];
}

/** What `app` may do on `table`: everything on its own and the shared tables, SELECT on the listed foreign reads, nothing else. */
export function privilegesOf(app: AppName, table: TableName): 'all' | 'select' | 'none' {
  const owner: TableOwner = TABLE_OWNERS[table];
  if (owner === app || owner === 'shared') return 'all';
  return FOREIGN_READS.some((r) => r.app === app && r.table === table) ? 'select' : 'none';
}

/** The app schemas `app` may look into: its own, and those holding a table of a listed foreign read. */
export function schemaUsageOf(app: AppName): AppName[] {
  const others = FOREIGN_READS.filter((r) => r.app === app).map((r) => TABLE_OWNERS[r.table] as AppName);
  return APPS.filter((a) => a === app || others.includes(a));
}

/** A minimal query runner: what the migrations and the tests hand in. */
export interface GrantSql {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Puts every table of the map into its owner's schema under `base`, creating the app schemas when missing.
 * Migrations create tables unqualified, so a new table lands in `base` (first on the search_path) and is
 * moved here; a table already in place is left alone. ALTER TABLE ... SET SCHEMA keeps the rows, indexes,
 * triggers, owned sequences and grants: an existing single-schema database is upgraded in place.
 */
export async function placeOwnedTables(sql: GrantSql, base: string): Promise<void> {
  const statements = APPS.map((app) => `CREATE SCHEMA IF NOT EXISTS ${quote(appSchema(base, app))}`);
  const inBase = (await sql.query(`SELECT tablename FROM pg_tables WHERE schemaname = $1`, [base])) as Array<{ tablename: string }>;
  for (const { tablename } of inBase) {
    if (!(tablename in TABLE_OWNERS)) continue;
    const target = tableSchema(base, tablename as TableName);
    if (target !== base) statements.push(`ALTER TABLE ${quote(base)}.${quote(tablename)} SET SCHEMA ${quote(target)}`);
  }
  await sql.query(statements.join(';\n'));
}

/**
 * Creates the four login roles when missing, puts the tables in their owners' schemas (placeOwnedTables)
 * and sets every schema's and table's grants under `base` to the map, revoking what the map no longer gives:
 * idempotent, so any later migration that changes the map calls it again (and migrate() does after any
 * migration ran, so a new table is placed and granted). A migrator that may not create roles (a managed
 * database) creates none and grants to those that exist; docs/deploy.md says to create them beforehand there.
 */
export async function applyOwnershipGrants(sql: GrantSql, base: string): Promise<void> {
  await placeOwnedTables(sql, base);
  const present = new Set(
    ((await sql.query(`SELECT schemaname || '.' || tablename AS name FROM pg_tables WHERE schemaname = ANY($1)`, [deploymentSchemas(base)])) as Array<{ name: string }>).map((r) => r.name),
  );
  // One simple-protocol round trip per role: the migrations of every test schema run this.
  for (const app of APPS) {
    const role = appRole(app);
    await sql.query(`DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${role}')
     AND EXISTS (SELECT 1 FROM pg_roles WHERE rolname = current_user AND (rolsuper OR rolcreaterole)) THEN
    CREATE ROLE ${quote(role)} LOGIN;
  END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$`);
    const exists = (await sql.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role])) as unknown[];
    if (exists.length === 0) continue;
    const r = quote(role);
    const b = quote(base);
    // schema_migrations: an app started with EVALS_MIGRATE=job checks, and only checks, that nothing is pending.
    const statements = [`GRANT USAGE ON SCHEMA ${b} TO ${r}`, `GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA ${b} TO ${r}`, `GRANT SELECT ON ${b}."schema_migrations" TO ${r}`];
    const usage = schemaUsageOf(app);
    for (const other of APPS) {
      const s = quote(appSchema(base, other));
      statements.push(`REVOKE ALL ON SCHEMA ${s} FROM ${r}`, `REVOKE ALL ON ALL SEQUENCES IN SCHEMA ${s} FROM ${r}`);
      if (usage.includes(other)) statements.push(`GRANT USAGE ON SCHEMA ${s} TO ${r}`);
      if (other === app) statements.push(`GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA ${s} TO ${r}`);
    }
    for (const table of Object.keys(TABLE_OWNERS) as TableName[]) {
      // Before its migration ran (an older migration calling this), a table is in neither place: skipped.
      const schema = [tableSchema(base, table), base].find((s) => present.has(`${s}.${table}`));
      if (schema === undefined) continue;
      const target = `${quote(schema)}.${quote(table)}`;
      statements.push(`REVOKE ALL ON ${target} FROM ${r}`);
      const privileges = privilegesOf(app, table);
      // TRUNCATE: the read model's rebuild empties its projections.
      if (privileges === 'all') statements.push(`GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON ${target} TO ${r}`);
      if (privileges === 'select') statements.push(`GRANT SELECT ON ${target} TO ${r}`);
    }
    await sql.query(statements.join(';\n'));
  }
}

/**
 * The trigger that makes EVENT_AUTHORS bite: an app's role appending another app's event type (or a type
 * nobody owns) is refused with 42501; any other user (the admin, the all-in-one's single user) is not
 * checked. Created or replaced in `schema`, so a later change of the map is one more call.
 */
export async function applyEventAuthorship(sql: GrantSql, schema: string): Promise<void> {
  const s = quote(schema);
  const allowed = APPS.map((app) => {
    const types = Object.entries(EVENT_AUTHORS).filter(([, author]) => author === app).map(([type]) => `'${type}'`);
    return `WHEN '${appRole(app)}' THEN NEW.type IN (${types.length > 0 ? types.join(', ') : 'NULL'})`;
  });
  await sql.query(`CREATE OR REPLACE FUNCTION ${s}.evals_event_author() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT COALESCE(CASE current_user ${allowed.join(' ')} ELSE TRUE END, FALSE) THEN
    RAISE EXCEPTION 'event type % may not be appended by %', NEW.type, current_user USING ERRCODE = '42501';
  END IF;
  RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS events_author ON ${s}.events;
CREATE TRIGGER events_author BEFORE INSERT ON ${s}.events FOR EACH ROW EXECUTE FUNCTION ${s}.evals_event_author()`);
}
