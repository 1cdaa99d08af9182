import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { TABLE_OWNERS, createDataSource, migrate, tableSchema, type TableName } from '@evals/persistence';
import { runScript, startCluster, type AppCluster } from '../support/app-processes';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai';
import { createTestSchema, deleteTestStreams, testRedisPrefix, type TestSchema, uniqueSuffix } from '../support/isolation';
import { startEmbeddedServe, type EmbeddedServe } from '../support/embedded-process';
import { testServers } from '../support/servers';
import { comparable, mediaType, restoreSql, upgradeEnv, UPGRADE_FIXTURES, type CapturedView, type UpgradeFixture } from '../upgrade/upgrade-views';

/**
 * Issue 27 item 3, the upgrade path: a database the previous release populated (one schema, every table in
 * it; test/fixtures/upgrade, written by test/upgrade/upgrade-fixture.ts with that release's own apps) is
 * restored into a fresh schema, migrated in place by the CURRENT migrations (the tables move to their
 * owners' schemas, backfills append their facts), and read by the CURRENT apps connected as their roles.
 * Every view the old release's HTTP API gave of it must be given again, equal but for the volatile fields
 * (upgrade-views.ts), and no table may lose a row; then again after `npm run rebuild:read-model`.
 */
const fixtureDir = UPGRADE_FIXTURES;
/** Every release with fixtures (one, the previous release, unless older ones were kept beside it). */
const RELEASES = fs.readdirSync(fixtureDir).filter((f) => f.endsWith('.views.json')).map((f) => f.slice(0, -'.views.json'.length));
const root = path.resolve(__dirname, '../..');

jest.setTimeout(180_000);

/** Each row of each table as a digest over the columns it had in the previous release, found through the search_path wherever the table now lives. */
async function rowDigests(db: Client, columns: Map<string, string[]>): Promise<Map<string, string[]>> {
  const digests = new Map<string, string[]>();
  for (const [table, cols] of columns) {
    const row = cols.map((c) => `t."${c}"`).join(', ');
    const { rows } = await db.query(`SELECT md5(ROW(${row})::text) AS d FROM "${table}" t ORDER BY 1`);
    digests.set(table, rows.map((r) => r.d as string));
  }
  return digests;
}

/**
 * A captured view asked again of the current apps: the same status and media type, and every field (CSV
 * column, SSE frame field) the previous release answered, with the same value; a field added since is
 * not a difference (docs/testing.md).
 */
async function expectSameView(url: (route: string) => string, view: CapturedView): Promise<void> {
  const res = await fetch(url(view.route));
  const text = await res.text();
  const type = mediaType(res);
  expect({ status: res.status, type }).toEqual({ status: view.status, type: view.type });
  const now = comparable({ type, ...(type === 'application/json' ? { json: JSON.parse(text) } : { text }) });
  if (typeof now === 'string') expect(now).toEqual(comparable(view));
  else expect(now).toMatchObject(comparable(view) as object);
}

it('the fixtures of the previous release are there', () => {
  expect(RELEASES.length).toBeGreaterThan(0);
});

describe.each(RELEASES)(`e2e: a database of the previous release (%s) migrates in place, every view and row kept (issue 27; the views of R3, R6, SC1, G5, G6, GT5, J4, J5)`, (release) => {
  const fixture = JSON.parse(fs.readFileSync(path.join(fixtureDir, `${release}.views.json`), 'utf8')) as UpgradeFixture;
  let schema: TestSchema;
  let cluster: AppCluster;
  let fake: FakeOpenAI;
  let db: Client;
  const suffix = uniqueSuffix();
  const streamPrefix = `E2U_${suffix}_`;
  /** The previous release's tables and their columns, read from the restored schema before any migration. */
  const columns = new Map<string, string[]>();
  let before: Map<string, string[]>;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    schema = await createTestSchema('e2u');
    db = new Client({ connectionString: schema.url });
    await db.connect();
    await db.query(restoreSql(fixture, schema.schema));
    // The restore set an empty search_path for its statements; this session reads through the test's again.
    await db.end();
    db = new Client({ connectionString: schema.url });
    await db.connect();
    const { rows } = await db.query(
      `SELECT table_name, array_agg(column_name::text ORDER BY ordinal_position) AS cols FROM information_schema.columns WHERE table_schema = $1 GROUP BY 1 ORDER BY 1`,
      [schema.schema],
    );
    for (const r of rows) columns.set(r.table_name, r.cols);
    before = await rowDigests(db, columns);
  }, 120_000);

  afterAll(async () => {
    await cluster?.stopAll();
    await deleteTestStreams(streamPrefix);
    await db?.end();
    await schema?.drop();
    await fake?.close();
  });

  it('the fixture restores every row the previous release wrote, all tables in one schema', () => {
    expect(Object.fromEntries([...before].map(([table, rows]) => [table, rows.length]))).toEqual(fixture.rows);
    expect(fixture.rows.events).toBeGreaterThan(0);
  });

  it('the current migrations upgrade it in place: every table of the previous release keeps every row, column for column', async () => {
    const ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize: 1, applicationName: 'evals-e2e-upgrade' });
    await ds.initialize();
    try {
      expect((await migrate(ds)).length).toBeGreaterThan(0);
    } finally {
      await ds.destroy();
    }
    // Every table of the previous release is now in its owner's schema (ownership.ts); the rows below are read where it went.
    const { rows } = await db.query(`SELECT tablename, schemaname FROM pg_tables WHERE tablename = ANY($1) AND schemaname LIKE $2`, [[...columns.keys()], `${schema.schema}%`]);
    const placed = Object.fromEntries(rows.map((r) => [r.tablename, r.schemaname]));
    const owned = [...columns.keys()].filter((table) => table in TABLE_OWNERS);
    expect(owned.length).toBe(columns.size - 1); // all but schema_migrations, which stays in the shared schema
    expect(Object.fromEntries(owned.map((t) => [t, placed[t]]))).toEqual(Object.fromEntries(owned.map((t) => [t, tableSchema(schema.schema, t as TableName)])));
    const after = await rowDigests(db, columns);
    for (const [table, rowsBefore] of before) {
      const kept = new Set(after.get(table));
      // A backfill may add rows (e.g. facts appended to the log); none of the earlier ones may go or change.
      expect([table, rowsBefore.filter((d) => !kept.has(d))]).toEqual([table, []]);
    }
  });

  describe('the current apps, connected as their roles, answer every view as the previous release did', () => {
    beforeAll(async () => {
      cluster = await startCluster({
        schema: schema.schema,
        streamPrefix,
        subjectPrefix: `e2u_${suffix}`,
        apps: ['ingestion', 'scoring-worker', 'read-model', 'regression'],
        env: upgradeEnv(fake.baseUrl, testRedisPrefix('e2u')),
      });
    }, 120_000);

    it.each(fixture.views.map((v) => [`${v.app} GET ${v.route}`, v] as const))('%s', async (_, view) => {
      await expectSameView((route) => cluster.url(view.app, route), view);
    });

    it('reading every view called no judge', () => {
      expect(fake.requestCount).toBe(0);
    });
  });

  describe('after npm run rebuild:read-model, the read model answers the same again', () => {
    beforeAll(async () => {
      await cluster.stop('read-model');
      await runScript(root, 'apps/read-model/src/rebuild.ts', { DATABASE_URL: testServers.postgres.url, DATABASE_SCHEMA: schema.schema });
      await cluster.start('read-model');
    }, 120_000);

    it.each(fixture.views.filter((v) => v.app === 'read-model').map((v) => [`read-model GET ${v.route}`, v] as const))('%s', async (_, view) => {
      await expectSameView((route) => cluster.url(view.app, route), view);
    });

    it('every table outside the read model still holds every row of the previous release; the read model\'s projections as many rows', async () => {
      const after = await rowDigests(db, columns);
      // The rebuild truncates and replays the read model's projections: their rows may carry other bookkeeping
      // (a checkpoint's updated_at, a run's last_position once a backfill appended to its streams); what they
      // say is compared through the views above. Every other table's rows stay as the migration left them.
      const projection = (table: string) => (TABLE_OWNERS as Record<string, string>)[table] === 'read_model';
      for (const [table, rowsBefore] of before) {
        const rowsAfter = after.get(table)!;
        const kept = new Set(rowsAfter);
        const lost = projection(table) ? Math.max(0, rowsBefore.length - rowsAfter.length) : rowsBefore.filter((d) => !kept.has(d)).length;
        expect([table, lost]).toEqual([table, 0]);
      }
      expect(after.get('runs')).toHaveLength(fixture.rows.runs!);
    });
  });
});

/**
 * The embedded default (`evals serve`, docs/embedded.md) keeps the same tables in PGlite's `public`: a data
 * directory of the previous release takes the current migrations on its next start, and the one process
 * answers every view the previous release's apps gave.
 */
describe.each(RELEASES)('e2e: an embedded data directory of the previous release (%s) migrates in place on the next evals serve (issue 27)', (release) => {
  const fixture = JSON.parse(fs.readFileSync(path.join(fixtureDir, `${release}.views.json`), 'utf8')) as UpgradeFixture;
  let dir: string;
  let serve: EmbeddedServe | undefined;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-upgrade-embedded-'));
    fs.mkdirSync(path.join(dir, 'data'), { mode: 0o700 });
    await runScript(root, 'test/upgrade/restore-pglite.ts', { UPGRADE_RELEASE: release, UPGRADE_PGDATA: path.join(dir, 'data', 'postgres') });
    serve = await startEmbeddedServe({ dataDir: path.join(dir, 'data'), env: upgradeEnv('http://127.0.0.1:9/v1', testRedisPrefix('e2ue')) });
  }, 180_000);

  afterAll(async () => {
    await serve?.stop('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it.each(fixture.views.map((v) => [`GET ${v.route} (the ${v.app}'s)`, v] as const))('%s', async (_, view) => {
    await expectSameView((route) => `${serve!.url}${route}`, view);
  });
});