import { DEFAULT_PROJECT } from '@evals/contracts';
import { suiteStreamId } from '@evals/domain';
import type { DataSource } from 'typeorm';
import { createTestSchema, type TestSchema } from '../../../test/support/isolation';
import { testServers } from '../../../test/support/servers';
import { createDataSource, migrate } from './data-source';
import { SuiteRepository, type SuiteVersionWithCases } from './suite.repository';

/**
 * Suite storage on PostgreSQL (V1-V2, issue 15): a large version is written in several statements of one
 * transaction and read back whole, in authored order; the list of suites is one row per key with its latest
 * version.
 */
describe('integration: suite repository on PostgreSQL', () => {
  let schema: TestSchema;
  let ds: DataSource;
  const repo = new SuiteRepository();
  const D = DEFAULT_PROJECT;

  const version = (key: string, n: number, cases: number): SuiteVersionWithCases => ({
    suite_key: key,
    version: n,
    content_hash: `${key}-${n}`.padEnd(64, '0'),
    description: `v${n}`,
    default_scorer: { type: 'exact' },
    pass_threshold: 0.8,
    regression_threshold: 0.1,
    golden_fixtures: false,
    case_count: cases,
    cases: Array.from({ length: cases }, (_, i) => ({ case_id: `c${cases - i}`, input: i % 2 ? `q${i}` : { q: i }, expected: i % 3 ? `a${i}` : undefined, scorer: i % 5 ? null : { type: 'contains', value: 'x' }, tags: i % 4 ? [] : ['t'] })),
  });

  beforeAll(async () => {
    schema = await createTestSchema('suites');
    ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize: 2 });
    await ds.initialize();
    await migrate(ds);
  });

  afterAll(async () => {
    await ds?.destroy();
    await schema?.drop();
  });

  it('a version of 4 500 cases (three insert statements) reads back whole, in authored order', async () => {
    const big = version('big', 1, 4_500);
    await ds.transaction((m) => repo.insert(m, big));
    const stored = await repo.find(ds, D, 'big');
    expect(stored?.case_count).toBe(4_500);
    expect(stored?.cases.map((c) => c.case_id)).toEqual(big.cases.map((c) => c.case_id));
    expect(stored?.cases[2_001]).toEqual(big.cases[2_001]);
    expect(stored?.cases[4_499]).toEqual({ ...big.cases[4_499], tags: [] });
  });

  it('a failing statement part-way leaves nothing of the version (one transaction)', async () => {
    const bad = version('half', 1, 3_000);
    const cases = [...bad.cases];
    cases[2_500] = { ...cases[2_500]!, case_id: cases[10]!.case_id }; // a duplicate id in the second statement
    await expect(ds.transaction((m) => repo.insert(m, { ...bad, cases }))).rejects.toThrow();
    expect(await repo.find(ds, D, 'half')).toBeNull();
  });

  it('GET /v1/suites: one row per key with its latest version, case count and number of versions, by key, paged', async () => {
    await ds.transaction((m) => repo.insert(m, version('alpha', 1, 3)));
    await ds.transaction((m) => repo.insert(m, version('alpha', 2, 5)));
    const all = await repo.list(ds, D, 0, 50);
    expect(all.total).toBe(2);
    expect(all.items.map((s) => [s.suite_key, s.latest_version, s.case_count, s.versions, s.description])).toEqual([
      ['alpha', 2, 5, 2, 'v2'],
      ['big', 1, 4_500, 1, 'v1'],
    ]);
    expect(all.items[0]!.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(all.items[0]!.first_created_at <= all.items[0]!.created_at).toBe(true);
    expect((await repo.list(ds, D, 1, 1)).items.map((s) => s.suite_key)).toEqual(['big']);
    expect(await repo.list(ds, D, 2, 10)).toEqual({ items: [], total: 2, offset: 2, limit: 10 });
  });

  it('issue 28: heads answers many requests in one query, in their order - the latest version or the one named, null for none', async () => {
    await ds.query(`INSERT INTO projects (id, name) VALUES ('heads-a', 'A') ON CONFLICT DO NOTHING`);
    await ds.transaction((m) => repo.insert(m, version('heads-x', 1, 2)));
    await ds.transaction((m) => repo.insert(m, version('heads-x', 2, 3)));
    await ds.transaction((m) => repo.insert(m, { ...version('heads-x', 1, 4), project: 'heads-a', content_hash: 'c'.repeat(64) }));
    const requests = [
      { project: D, suiteKey: 'heads-x' },
      { project: D, suiteKey: 'heads-x', version: 1 },
      { project: D, suiteKey: 'heads-x', version: 3 },
      { project: 'heads-a', suiteKey: 'heads-x' },
      { project: D, suiteKey: 'heads-none' },
      { project: D, suiteKey: 'heads-x' },
    ];
    const heads = await repo.heads(ds, requests);
    expect(heads.map((h) => h && [h.version, h.case_count])).toEqual([[2, 3], [1, 2], null, [1, 4], null, [2, 3]]);
    // Each as `head` answers it alone.
    for (const [i, r] of requests.entries()) expect(heads[i]).toEqual(await repo.head(ds, r.project, r.suiteKey, r.version));
    expect(await repo.heads(ds, [])).toEqual([]);
  });

  it('issue 30: the same key in two projects is two suites, each its own version 1, read and listed in its project only', async () => {
    await ds.query(`INSERT INTO projects (id, name) VALUES ('suites-a', 'A'), ('suites-b', 'B') ON CONFLICT DO NOTHING`);
    const a = { ...version('shared', 1, 2), project: 'suites-a', content_hash: 'a'.repeat(64), description: 'of A' };
    const b = { ...version('shared', 1, 3), project: 'suites-b', content_hash: 'b'.repeat(64), description: 'of B' };
    await ds.transaction((m) => repo.insert(m, a));
    await ds.transaction((m) => repo.insert(m, b));
    expect(await repo.find(ds, 'suites-a', 'shared')).toMatchObject({ project: 'suites-a', version: 1, content_hash: a.content_hash, case_count: 2 });
    expect((await repo.find(ds, 'suites-b', 'shared', 1))!.cases).toHaveLength(3);
    expect(await repo.find(ds, D, 'shared')).toBeNull();
    expect(await repo.head(ds, D, 'shared')).toBeNull();
    expect((await repo.head(ds, 'suites-b', 'shared'))!.content_hash).toBe(b.content_hash);
    expect((await repo.caseScorers(ds, 'suites-a', 'shared', 1)).map((c) => c.case_id)).toEqual(a.cases.map((c) => c.case_id));
    expect((await repo.casesFrom(ds, 'suites-b', 'shared', 1, 0, 10)).map((c) => c.case_id)).toEqual(b.cases.map((c) => c.case_id));
    expect((await repo.versions(ds, 'suites-a', 'shared')).map((v) => v.content_hash)).toEqual([a.content_hash]);
    expect((await repo.list(ds, 'suites-a', 0, 50)).items.map((s) => [s.suite_key, s.description, s.case_count])).toEqual([['shared', 'of A', 2]]);
    expect((await repo.list(ds, D, 0, 50)).items.map((s) => s.suite_key)).not.toContain('shared');
    // The same source bytes recorded in A are unknown in B.
    await repo.recordSource(ds, 'suites-a', 'f'.repeat(64), 'shared', 1);
    expect(await repo.latestBySource(ds, 'suites-a', 'f'.repeat(64))).toMatchObject({ project: 'suites-a', suite_key: 'shared', version: 1 });
    expect(await repo.latestBySource(ds, 'suites-b', 'f'.repeat(64))).toBeNull();
    // Each version's events are in its project's stream, suite.published naming the project.
    const heads = await ds.query(`SELECT stream_id, data->>'project' AS project FROM events WHERE type = 'suite.published' AND data->>'suite_key' = 'shared' ORDER BY stream_id`);
    expect(heads).toEqual([
      { stream_id: suiteStreamId('suites-a', 'shared', 1), project: 'suites-a' },
      { stream_id: suiteStreamId('suites-b', 'shared', 1), project: 'suites-b' },
    ]);
    // A default version's head names no project, as before projects.
    expect(await ds.query(`SELECT data ? 'project' AS named FROM events WHERE type = 'suite.published' AND stream_id = $1`, [suiteStreamId(D, 'alpha', 1)])).toEqual([{ named: false }]);
  });
});
