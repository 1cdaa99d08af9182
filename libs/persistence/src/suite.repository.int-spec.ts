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
    const stored = await repo.find(ds, 'big');
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
    expect(await repo.find(ds, 'half')).toBeNull();
  });

  it('GET /v1/suites: one row per key with its latest version, case count and number of versions, by key, paged', async () => {
    await ds.transaction((m) => repo.insert(m, version('alpha', 1, 3)));
    await ds.transaction((m) => repo.insert(m, version('alpha', 2, 5)));
    const all = await repo.list(ds, 0, 50);
    expect(all.total).toBe(2);
    expect(all.items.map((s) => [s.suite_key, s.latest_version, s.case_count, s.versions, s.description])).toEqual([
      ['alpha', 2, 5, 2, 'v2'],
      ['big', 1, 4_500, 1, 'v1'],
    ]);
    expect(all.items[0]!.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(all.items[0]!.first_created_at <= all.items[0]!.created_at).toBe(true);
    expect((await repo.list(ds, 1, 1)).items.map((s) => s.suite_key)).toEqual(['big']);
    expect(await repo.list(ds, 2, 10)).toEqual({ items: [], total: 2, offset: 2, limit: 10 });
  });
});
