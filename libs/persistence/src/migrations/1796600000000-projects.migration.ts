import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The tables whose rows each belong to one project, with the keys that become unique per project. */
const PROJECT_OWNED = [
  'suite_versions',
  'suite_cases',
  'suite_sources',
  'gate_verdicts',
  'budgets',
  'budget_spend',
  'budget_reservations',
  'monitor_windows',
  'run_verdicts',
  'baseline_pins',
  'findings',
  'calibration_sets',
  'calibration_reports',
  'comparison_reports',
  'runs',
  'read_run_verdicts',
] as const;

/**
 * Issue 30 (docs/adr/0009-projects.md): projects. Creates the shared `projects` table with `default`, gives
 * every API key a project (NULL: a platform key, across projects; every existing key goes to `default`),
 * and gives every project-owned table a `project` column whose default puts every existing row in
 * `default`: PostgreSQL records the default in the catalogue, so no row is rewritten and nothing is lost.
 * What does take time on a large database: the new primary keys of the suite tables rebuild their indexes
 * (under the table's lock), and the id check scans each table once (without blocking writes).
 * The natural keys - a suite's key and version, a baseline's subject, a budget's scope, a source file's
 * hash - become unique per project, so two teams may use the same suite keys.
 */
export class Projects1796600000000 implements MigrationInterface {
  name = 'Projects1796600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE projects (
        id          text PRIMARY KEY CHECK (id ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
        name        text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
        created_at  timestamptz NOT NULL DEFAULT now(),
        created_by  text
      )`);
    await q.query(`INSERT INTO projects (id, name, created_by) VALUES ('default', 'default', 'migration Projects1796600000000')`);
    // A project is never renamed or deleted: its id is in every row it owns, and the guard caches the ones it found.
    await q.query(`CREATE TRIGGER projects_append_only BEFORE UPDATE OR DELETE ON projects FOR EACH ROW EXECUTE FUNCTION evals_refuse_mutation()`);
    await q.query(`CREATE TRIGGER projects_no_truncate BEFORE TRUNCATE ON projects FOR EACH STATEMENT EXECUTE FUNCTION evals_refuse_mutation()`);

    await q.query(`ALTER TABLE api_keys ADD COLUMN project text DEFAULT 'default' REFERENCES projects (id)`);
    // New keys name their project (or NULL, a platform key) explicitly: no default from here on.
    await q.query(`ALTER TABLE api_keys ALTER COLUMN project DROP DEFAULT`);
    // Revocation stays the only change a key allows: its project is as immutable as its tier.
    await q.query(apiKeysGuard(['id', 'name', 'tier', 'prefix', 'secret_hash', 'created_at', 'created_by', 'project']));

    for (const table of PROJECT_OWNED) {
      await q.query(`ALTER TABLE ${table} ADD COLUMN project text NOT NULL DEFAULT 'default'`);
      // Added NOT VALID, then validated: the scan of the existing rows holds no lock that stops the apps' writes.
      await q.query(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_project_id CHECK (project ~ '^[a-z0-9][a-z0-9-]{0,62}$') NOT VALID`);
      await q.query(`ALTER TABLE ${table} VALIDATE CONSTRAINT ${table}_project_id`);
    }

    // A suite version is (project, key, version); its cases and source files follow it.
    await q.query(`ALTER TABLE suite_cases DROP CONSTRAINT suite_cases_suite_key_suite_version_fkey`);
    await q.query(`ALTER TABLE suite_sources DROP CONSTRAINT suite_sources_suite_key_version_fkey`);
    await q.query(`ALTER TABLE suite_versions DROP CONSTRAINT suite_versions_pkey, ADD PRIMARY KEY (project, suite_key, version)`);
    await q.query(`ALTER TABLE suite_cases DROP CONSTRAINT suite_cases_pkey, ADD PRIMARY KEY (project, suite_key, suite_version, case_id)`);
    await q.query(`ALTER TABLE suite_cases DROP CONSTRAINT suite_cases_suite_key_suite_version_ordinal_key, ADD UNIQUE (project, suite_key, suite_version, ordinal)`);
    await q.query(`ALTER TABLE suite_cases ADD FOREIGN KEY (project, suite_key, suite_version) REFERENCES suite_versions (project, suite_key, version)`);
    await q.query(`ALTER TABLE suite_sources DROP CONSTRAINT suite_sources_pkey, ADD PRIMARY KEY (project, source_sha256)`);
    await q.query(`ALTER TABLE suite_sources ADD FOREIGN KEY (project, suite_key, version) REFERENCES suite_versions (project, suite_key, version)`);
    await q.query(`ALTER TABLE baseline_pins DROP CONSTRAINT baseline_pins_pkey, ADD PRIMARY KEY (project, suite_key, subject_kind, subject_id, variant)`);
    await q.query(`ALTER TABLE budgets DROP CONSTRAINT budgets_pkey, ADD PRIMARY KEY (project, scope)`);

    // The lists every page and route filters by project first.
    await q.query(`CREATE INDEX runs_project_opened ON runs (project, opened_at DESC)`);
    await q.query(`CREATE INDEX read_run_verdicts_project ON read_run_verdicts (project, suite_key, subject_kind, subject_id)`);
    await q.query(`CREATE INDEX findings_project ON findings (project, occurred_at DESC)`);
    await q.query(`CREATE INDEX run_verdicts_project ON run_verdicts (project, suite_key, subject_kind, subject_id)`);
    await q.query(`CREATE INDEX gate_verdicts_project ON gate_verdicts (project, recorded_at DESC)`);
    await q.query(`CREATE INDEX calibration_sets_project ON calibration_sets (project)`);
  }

  /**
   * Only for a database that never held another project: undone with several, their rows would merge into one
   * unscoped catalogue and their keys would read everything. Refused then, with nothing changed.
   */
  async down(q: QueryRunner): Promise<void> {
    const others = await q.query(`SELECT 1 FROM projects WHERE id <> 'default' LIMIT 1`);
    if (others.length > 0) throw new Error('Projects1796600000000 cannot be undone: projects other than default exist, and their data would merge');
    await q.query(`ALTER TABLE suite_cases DROP CONSTRAINT suite_cases_project_suite_key_suite_version_fkey`);
    await q.query(`ALTER TABLE suite_sources DROP CONSTRAINT suite_sources_project_suite_key_version_fkey`);
    await q.query(`ALTER TABLE suite_versions DROP CONSTRAINT suite_versions_pkey, ADD PRIMARY KEY (suite_key, version)`);
    await q.query(`ALTER TABLE suite_cases DROP CONSTRAINT suite_cases_pkey, ADD PRIMARY KEY (suite_key, suite_version, case_id)`);
    await q.query(`ALTER TABLE suite_cases DROP CONSTRAINT suite_cases_project_suite_key_suite_version_ordinal_key, ADD CONSTRAINT suite_cases_suite_key_suite_version_ordinal_key UNIQUE (suite_key, suite_version, ordinal)`);
    await q.query(`ALTER TABLE suite_cases ADD CONSTRAINT suite_cases_suite_key_suite_version_fkey FOREIGN KEY (suite_key, suite_version) REFERENCES suite_versions (suite_key, version)`);
    await q.query(`ALTER TABLE suite_sources DROP CONSTRAINT suite_sources_pkey, ADD PRIMARY KEY (source_sha256)`);
    await q.query(`ALTER TABLE suite_sources ADD CONSTRAINT suite_sources_suite_key_version_fkey FOREIGN KEY (suite_key, version) REFERENCES suite_versions (suite_key, version)`);
    await q.query(`ALTER TABLE baseline_pins DROP CONSTRAINT baseline_pins_pkey, ADD PRIMARY KEY (suite_key, subject_kind, subject_id, variant)`);
    await q.query(`ALTER TABLE budgets DROP CONSTRAINT budgets_pkey, ADD PRIMARY KEY (scope)`);
    for (const table of PROJECT_OWNED) await q.query(`ALTER TABLE ${table} DROP COLUMN project`);
    await q.query(apiKeysGuard(['id', 'name', 'tier', 'prefix', 'secret_hash', 'created_at', 'created_by']));
    await q.query(`ALTER TABLE api_keys DROP COLUMN project`);
    await q.query(`DROP TABLE projects`);
  }
}

/** The api_keys trigger function (ApiKeys1764461200000) over `columns`: revocation is the only change allowed. */
function apiKeysGuard(columns: readonly string[]): string {
  const of = (row: string) => columns.map((c) => `${row}.${c}`).join(', ');
  return `
    CREATE OR REPLACE FUNCTION evals_api_keys_guard() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'UPDATE' THEN
        IF OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL AND (${of('NEW')}) IS NOT DISTINCT FROM (${of('OLD')}) THEN
          RETURN NEW;
        END IF;
        RAISE EXCEPTION 'table api_keys: only revocation (revoked_at from NULL to a time) is allowed'
          USING ERRCODE = 'P0001', HINT = 'API_KEY_IMMUTABLE';
      END IF;
      RAISE EXCEPTION 'table api_keys: % refused (revoke a key instead)', TG_OP
        USING ERRCODE = 'P0001', HINT = 'API_KEY_IMMUTABLE';
    END $$`;
}
