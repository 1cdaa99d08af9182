import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { DEFAULT_PROJECT } from '@evals/contracts';
import { JudgeStatusRepository } from './judge-status.repository';
import { testServers } from '../../../test/support/servers';
import { APPS, EVENT_AUTHORS, TABLE_OWNERS, appRole, appSchema, applyOwnershipGrants, deploymentSchemas, privilegesOf, schemaUsageOf, tableSchema, type AppName, type TableName } from './ownership';
import { migrate } from './data-source';
import { migratedDataSource, postgresDataSource } from './test-data-sources.testing';

/**
 * Issue 27: the grants bite. Each app's role, connected as itself to a freshly migrated schema, reads and
 * writes its own and the shared tables, reads only the foreign tables ownership.ts still lists, and is
 * refused (42501, insufficient_privilege) everything else - SELECT and INSERT alike.
 */
describe('table ownership, enforced by PostgreSQL grants (int)', () => {
  const dataSource = migratedDataSource(() => postgresDataSource('own'));
  const clients = new Map<AppName, Client>();

  beforeAll(async () => {
    const schema = (dataSource().options as { schema: string }).schema;
    for (const app of APPS) {
      const url = new URL(testServers.postgres.url);
      url.username = appRole(app);
      url.password = '';
      const client = new Client({ connectionString: url.toString(), options: `-c search_path=${deploymentSchemas(schema).join(',')}` });
      await client.connect();
      clients.set(app, client);
    }
  });
  afterAll(async () => {
    for (const client of clients.values()) await client.end();
  });

  async function sqlState(client: Client, sql: string): Promise<string | null> {
    await client.query('BEGIN');
    try {
      await client.query(sql);
      return null;
    } catch (error) {
      return (error as { code?: string }).code ?? 'unknown';
    } finally {
      await client.query('ROLLBACK');
    }
  }

  it('every table the migrations create has exactly one owner in the map, and lives in its owner\'s schema', async () => {
    const schema = (dataSource().options as { schema: string }).schema;
    const rows = (await dataSource().query(
      `SELECT table_schema || '.' || table_name AS name FROM information_schema.tables WHERE table_schema = ANY($1) AND table_name <> 'schema_migrations' ORDER BY 1`,
      [deploymentSchemas(schema)],
    )) as Array<{ name: string }>;
    const expected = (Object.keys(TABLE_OWNERS) as TableName[]).map((table) => `${tableSchema(schema, table)}.${table}`);
    expect(rows.map((r) => r.name)).toEqual(expected.sort());
    expect(new Set(expected.map((name) => name.split('.')[0]))).toEqual(new Set(deploymentSchemas(schema)));
  });

  it.each(APPS)('%s has USAGE on the shared schema, its own and those of its listed foreign reads, no other', async (app) => {
    const schema = (dataSource().options as { schema: string }).schema;
    const rows = (await dataSource().query(`SELECT s AS name FROM unnest($1::text[]) s WHERE has_schema_privilege($2, s, 'USAGE') ORDER BY 1`, [deploymentSchemas(schema), appRole(app)])) as Array<{ name: string }>;
    expect(rows.map((r) => r.name)).toEqual([schema, ...schemaUsageOf(app).map((a) => appSchema(schema, a))].sort());
    expect(rows.map((r) => r.name)).toContain(appSchema(schema, app));
  });

  const cases = APPS.flatMap((app) => (Object.keys(TABLE_OWNERS) as TableName[]).map((table) => [app, table, privilegesOf(app, table)] as const));

  it.each(cases)('%s on %s: %s', async (app, table, privileges) => {
    const client = clients.get(app)!;
    // Named with its schema: refused by the schema's or the table's grant (42501), never just not found.
    const qualified = `"${tableSchema((dataSource().options as { schema: string }).schema, table)}".${table}`;
    const select = await sqlState(client, `SELECT * FROM ${qualified} LIMIT 1`);
    const insert = await sqlState(client, `INSERT INTO ${qualified} DEFAULT VALUES`);
    if (privileges === 'none') {
      expect(select).toBe('42501');
      expect(insert).toBe('42501');
    } else {
      expect(select).toBeNull();
      // A row of defaults may break a NOT NULL or check constraint; what matters is that it is not a privilege error.
      // events: the authorship trigger refuses a row without a type of the app's own (the next tests).
      if (privileges === 'all' && table !== 'events') expect(insert).not.toBe('42501');
      else expect(insert).toBe('42501');
    }
  });

  const appends = APPS.flatMap((app) => [...Object.keys(EVENT_AUTHORS), 'something.else'].map((type) => [app, type, EVENT_AUTHORS[type as keyof typeof EVENT_AUTHORS] === app] as const));

  it.each(appends)('%s appends %s to the log: allowed %s', async (app, type, allowed) => {
    const state = await sqlState(clients.get(app)!, `INSERT INTO events (stream_id, stream_version, type, version, data, metadata, message_id) VALUES ('run-x', 1, '${type}', 1, '{}', '{}', gen_random_uuid())`);
    expect(state).toBe(allowed ? null : '42501');
  });

  it('the admin (and the all-in-one\'s one user) appends any type', async () => {
    await expect(dataSource().query(`INSERT INTO events (stream_id, stream_version, type, version, data, metadata, message_id) VALUES ('run-admin', 1, 'run.compared', 1, '{}', '{}', gen_random_uuid())`)).resolves.toBeDefined();
  });

  it('the grants are idempotent: migrating again changes nothing the roles see', async () => {
    const schema = (dataSource().options as { schema: string }).schema;
    await applyOwnershipGrants({ query: (sql: string, params?: unknown[]) => dataSource().query(sql, params) }, schema);
    // Named with its schema: the scoring role has no USAGE on the ingestion's (unqualified, it is not even there: 42P01).
    expect(await sqlState(clients.get('scoring')!, `SELECT * FROM "${tableSchema(schema, 'gate_verdicts')}".gate_verdicts LIMIT 1`)).toBe('42501');
    expect(await sqlState(clients.get('scoring')!, 'SELECT * FROM gate_verdicts LIMIT 1')).toBe('42P01');
    expect(await sqlState(clients.get('scoring')!, 'SELECT * FROM evidence LIMIT 1')).toBeNull();
  });

  it('the suite tables are the ingestion\'s alone: the worker, regression and read model fold suite.published instead (issue 27)', async () => {
    const schema = (dataSource().options as { schema: string }).schema;
    for (const table of ['suite_versions', 'suite_cases', 'suite_sources'] as const) {
      const qualified = `"${tableSchema(schema, table)}".${table}`;
      for (const app of ['scoring', 'regression', 'read_model'] as const) expect([app, table, await sqlState(clients.get(app)!, `SELECT * FROM ${qualified} LIMIT 1`)]).toEqual([app, table, '42501']);
      expect(await sqlState(clients.get('ingestion')!, `SELECT * FROM ${qualified} LIMIT 1`)).toBeNull();
    }
    // What they read instead: the version's stream in the shared log.
    for (const app of ['scoring', 'regression', 'read_model'] as const) expect(await sqlState(clients.get(app)!, `SELECT data FROM events WHERE type = 'suite.published' LIMIT 1`)).toBeNull();
  });
});

/**
 * The upgrade path: a database of the previous release (every migration before AppRoles, with rows in it)
 * takes the roles migration in place - no row changes - and the roles then read what the map gives them.
 */
describe('upgrading a database of the previous release to the ownership grants (int)', () => {
  const dataSource = migratedDataSource(() => postgresDataSource('ownup'));

  it('keeps every row, and the roles read their own rows right after', async () => {
    const ds = dataSource();
    const schema = (ds.options as { schema: string }).schema;
    const lastApplied = async () => ((await ds.query(`SELECT name FROM schema_migrations ORDER BY id DESC LIMIT 1`)) as Array<{ name: string }>)[0].name;
    while ((await lastApplied()) !== 'EvidenceJudgedIndex1796200000000') await ds.undoLastMigration();
    // A judge report of the previous release: the gate read it from calibration_reports, it now folds the log.
    const setId = randomUUID();
    const reportId = randomUUID();
    await ds.query(`INSERT INTO calibration_sets (id, name, suite_key, item_count) VALUES ($1, 'old set', 'support', 50)`, [setId]);
    await ds.query(
      `INSERT INTO calibration_reports (id, set_id, judge_model, prompt_version, scope, targets, report, status, created_at)
       VALUES ($1, $2, 'gpt-x', 'v1', 'suite:support', '{}', '{"n": 50, "kappa": 0.8}', 'certified', '2026-01-02T03:04:05.678901Z')`,
      [reportId, setId],
    );
    const standing = await new JudgeStatusRepository().status(ds, DEFAULT_PROJECT, 'gpt-x', 'v1', 'suite:support');
    expect(standing.status).toBe('uncalibrated');
    const runTypes = Object.keys(EVENT_AUTHORS).filter((type) => type !== 'calibration.reported');
    for (const [i, type] of runTypes.entries()) {
      await ds.query(`INSERT INTO events (stream_id, stream_version, type, version, data, metadata, message_id) VALUES ('run-up', $1, $2, 1, '{"n": 1}', '{}', gen_random_uuid())`, [i + 1, type]);
    }
    const digest = async () => ((await ds.query(`SELECT count(*)::int AS n, md5(string_agg(e::text, ',' ORDER BY position)) AS h FROM events e WHERE type <> 'calibration.reported'`)) as Array<{ n: number; h: string }>)[0];
    const logBefore = await digest();
    const where = async () => ((await ds.query(`SELECT schemaname AS s, count(*)::int AS n FROM pg_tables WHERE schemaname = ANY($1) GROUP BY 1 ORDER BY 1`, [deploymentSchemas(schema)])) as Array<{ s: string; n: number }>);
    // The previous release: one schema holds every table.
    // (Tables a later migration creates are not there yet: read_case_results, CaseOutcomes1796500000000; projects, Projects1796600000000.)
    expect(await where()).toEqual([{ s: schema, n: Object.keys(TABLE_OWNERS).filter((t) => t !== 'read_case_results' && t !== 'projects').length + 1 }]);
    await migrate(ds);
    expect(await digest()).toEqual(logBefore);
    // Every app's tables moved to its schema, rows and all (the log's digest above; the report below).
    const counts = (owner: string) => Object.values(TABLE_OWNERS).filter((o) => o === owner).length;
    expect(await where()).toEqual(
      deploymentSchemas(schema)
        .map((s, i) => ({ s, n: i === 0 ? counts('shared') + 1 : counts(APPS[i - 1]) }))
        .sort((a, b) => a.s.localeCompare(b.s)),
    );
    expect(logBefore.n).toBe(runTypes.length);
    // The earlier report got its fact: the gate's view of the judge is what the table said.
    const after = await new JudgeStatusRepository().status(ds, DEFAULT_PROJECT, 'gpt-x', 'v1', 'suite:support');
    expect({ status: after.status, report_id: after.report_id, set_id: after.set_id, calibrated_at: after.calibrated_at }).toEqual({ status: 'certified', report_id: reportId, set_id: setId, calibrated_at: '2026-01-02T03:04:05.678Z' });
    await migrate(ds);
    expect(((await ds.query(`SELECT count(*)::int AS n FROM events WHERE type = 'calibration.reported'`)) as Array<{ n: number }>)[0].n).toBe(1);

    const url = new URL(testServers.postgres.url);
    url.username = appRole('read_model');
    const client = new Client({ connectionString: url.toString(), options: `-c search_path=${deploymentSchemas(schema).join(',')}` });
    await client.connect();
    try {
      expect((await client.query('SELECT count(*)::int AS n FROM events')).rows[0].n).toBe(logBefore.n + 1);
      await expect(client.query(`SELECT * FROM "${tableSchema(schema, 'budgets')}".budgets LIMIT 1`)).rejects.toMatchObject({ code: '42501' });
    } finally {
      await client.end();
    }
  });
});
