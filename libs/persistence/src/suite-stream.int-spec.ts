import { DEFAULT_PROJECT } from '@evals/contracts';
import { compileSuite, SUITE_EVENTS, SUITE_PAGE_MAX_BYTES, SUITE_PAGE_MAX_CASES, SuiteStreamError, suiteStreamId } from '@evals/domain';
import type { DataSource } from 'typeorm';
import { migrate, migrations } from './data-source';
import { EventStore } from './event-store';
import { SuiteFacts1796400000700 } from './migrations/1796400000700-suite-facts.migration';
import type { Sql } from './sql';
import { SuiteEvents, SuiteVersions, loadSuite } from './suite-stream';
import { SuiteRepository, type SuiteCaseRecord, type SuiteVersionWithCases } from './suite.repository';
import { migratedDataSource, postgresDataSource } from './test-data-sources.testing';

/**
 * Issue 27: a suite version crosses from the ingestion to the other apps as its stream (`suite.published`,
 * then its case pages), written with its rows; folded, it is what SuiteRepository.find reads from the
 * tables. An existing database gets the streams of every stored version from the backfill migration.
 */
const store = new EventStore();
const repo = new SuiteRepository();

function version(key: string, n: number, count: number, large = false): SuiteVersionWithCases {
  const cases: SuiteCaseRecord[] = Array.from({ length: count }, (_, i) => ({
    case_id: `c${count - i}`,
    input: i % 7 === 0 ? undefined : i % 2 ? `q${i} é` : { q: i, nested: [1, null, 'x'] },
    // Scorable as stored: no expected with its own `contains`, an authored null for `json_equal`, text for the default.
    expected: i % 3 === 0 ? undefined : i % 3 === 1 ? null : `a${i}`,
    scorer: i % 3 === 0 ? { type: 'contains', value: 'x' } : i % 3 === 1 ? { type: 'json_equal' } : null,
    tags: i % 4 ? [] : ['t', 'u'],
  }));
  // A case larger than a page travels in parts.
  if (large) cases[1] = { ...cases[1], input: '长'.repeat(SUITE_PAGE_MAX_BYTES / 2) };
  return { suite_key: key, version: n, content_hash: `${key}-${n}`.padEnd(64, '0'), description: n % 2 ? `v${n}` : null, default_scorer: { type: 'exact' }, pass_threshold: 0.8, regression_threshold: 0.1, golden_fixtures: n === 2, case_count: count, cases };
}

/** A compiled suite as it scores: each case's scorer and what it makes of one output (the scorers are closures). */
function scoring(suite: SuiteVersionWithCases) {
  const compiled = compileSuite(suite);
  const cases = [...compiled.cases.values()].map((c) => {
    const scorer = c.scorer as unknown as { name: string; version: string; score?: (output: string) => unknown };
    return [c.case_id, scorer.name, scorer.version, c.judge, scorer.score?.('x a2 {"q": 1}')];
  });
  return { scorer_versions: compiled.scorer_versions, cases };
}

async function streamOf(ds: DataSource, key: string, v: number) {
  return (await ds.query(`SELECT type, stream_version, data, octet_length(data::text) AS bytes FROM events WHERE stream_id = $1 ORDER BY stream_version`, [suiteStreamId(DEFAULT_PROJECT, key, v)])) as Array<{ type: string; stream_version: number; data: any; bytes: number }>;
}

describe('integration: a suite version\'s stream on PostgreSQL (issue 27)', () => {
  const dataSource = migratedDataSource(() => postgresDataSource('suitestream'));

  it('a version written in one transaction folds back to what find reads, in pages within their bounds, never relayed', async () => {
    const ds = dataSource();
    const suite = version('big', 1, 4_500, true);
    await ds.transaction((m) => repo.insert(m, suite));
    const found = await repo.find(ds, DEFAULT_PROJECT, 'big', 1);
    const folded = await loadSuite(ds, store, DEFAULT_PROJECT, 'big', 1);
    expect(folded).toEqual(found);
    expect(folded!.cases).toHaveLength(4_500);
    expect(scoring(folded!)).toEqual(scoring(found!));
    const events = await streamOf(ds, 'big', 1);
    expect(events[0].type).toBe(SUITE_EVENTS.published);
    const pages = events.slice(1);
    expect(pages.every((e) => e.type === SUITE_EVENTS.casesPublished)).toBe(true);
    expect(pages.some((e) => e.data.part)).toBe(true);
    for (const page of pages) {
      expect(page.data.cases?.length ?? 1).toBeLessThanOrEqual(SUITE_PAGE_MAX_CASES);
      // jsonb text adds a space after each ':' and ','; the bound is on the compact JSON a relay would send.
      expect(Buffer.byteLength(JSON.stringify(page.data))).toBeLessThanOrEqual(SUITE_PAGE_MAX_BYTES + 1_024);
    }
    const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM outbox WHERE subject LIKE 'evals.event.suite.%'`);
    expect(n).toBe(0);
  });

  it('a version pushed slice by slice (insertHead, then insertCases from each ordinal) folds the same', async () => {
    const ds = dataSource();
    const suite = version('sliced', 1, 2_600);
    await ds.transaction(async (m) => {
      await repo.insertHead(m, suite);
      for (let from = 0; from < suite.cases.length; from += 700) await repo.insertCases(m, DEFAULT_PROJECT, 'sliced', 1, suite.cases.slice(from, from + 700), from);
    });
    expect(await loadSuite(ds, store, DEFAULT_PROJECT, 'sliced', 1)).toEqual(await repo.find(ds, DEFAULT_PROJECT, 'sliced', 1));
    expect((await streamOf(ds, 'sliced', 1)).slice(1).map((e) => e.data.from)).toEqual([0, 700, 1_400, 2_100]);
  });

  it('the latest version when none is given; null for a version or key not in the log', async () => {
    const ds = dataSource();
    for (const n of [1, 2, 3]) await ds.transaction((m) => repo.insert(m, version('multi', n, 3 + n)));
    expect((await loadSuite(ds, store, DEFAULT_PROJECT, 'multi'))!.version).toBe(3);
    expect(await loadSuite(ds, store, DEFAULT_PROJECT, 'multi')).toEqual(await repo.find(ds, DEFAULT_PROJECT, 'multi'));
    expect(await loadSuite(ds, store, DEFAULT_PROJECT, 'multi', 9)).toBeNull();
    expect(await loadSuite(ds, store, DEFAULT_PROJECT, 'nothing')).toBeNull();
  });

  it('SuiteVersions folds a version once and serves it from memory; the latest is looked up each time', async () => {
    const ds = dataSource();
    const statements: string[] = [];
    const counted: Sql = { query: (sql: string, params?: unknown[]) => (statements.push(sql), ds.query(sql, params)) } as Sql;
    const versions = new SuiteVersions(store);
    const first = await versions.find(counted, DEFAULT_PROJECT, 'multi', 2);
    const reads = statements.length;
    expect(await versions.find(counted, DEFAULT_PROJECT, 'multi', 2)).toBe(first);
    expect(statements.length).toBe(reads);
    await versions.find(counted, DEFAULT_PROJECT, 'multi');
    const latest = statements.length;
    expect(await versions.find(counted, DEFAULT_PROJECT, 'multi')).toBe(await versions.find(counted, DEFAULT_PROJECT, 'multi', 3));
    expect(statements.length).toBe(latest + 1);
  });

  it('a rolled-back push leaves no events; a stream cut short is refused with its code', async () => {
    const ds = dataSource();
    const bad = version('half', 1, 3_000);
    const cases = [...bad.cases];
    cases[2_500] = { ...cases[2_500], case_id: cases[10].case_id };
    await expect(ds.transaction((m) => repo.insert(m, { ...bad, cases }))).rejects.toThrow();
    expect(await streamOf(ds, 'half', 1)).toEqual([]);
    // The head alone (as if its pages had been lost): a fold refuses it rather than give a partial suite.
    await ds.transaction((m) => new SuiteEvents().published(m, { ...bad, version: 2, created_at: '2026-12-03T00:00:00.000Z' }));
    const refused = await loadSuite(ds, store, DEFAULT_PROJECT, 'half', 2).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SuiteStreamError);
    expect((refused as SuiteStreamError).code).toBe('SUITE_STREAM_INCOMPLETE');
  });
});

describe('integration: the backfill of suite streams on a database of the previous release (issue 27)', () => {
  const dataSource = migratedDataSource(() => postgresDataSource('suiteback'));
  /** The previous release's writer: the same rows (no `project`: its schema has none, issue 30), no events. */
  const oldInsert = async (m: Sql, suite: SuiteVersionWithCases): Promise<void> => {
    await m.query(
      `INSERT INTO suite_versions (suite_key, version, content_hash, description, default_scorer, pass_threshold, regression_threshold, golden_fixtures, case_count)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9)`,
      [suite.suite_key, suite.version, suite.content_hash, suite.description, JSON.stringify(suite.default_scorer), suite.pass_threshold, suite.regression_threshold, suite.golden_fixtures, suite.cases.length],
    );
    const c = suite.cases;
    await m.query(
      `INSERT INTO suite_cases (suite_key, suite_version, ordinal, case_id, input, expected, scorer, tags)
       SELECT $1, $2, t.ordinal, t.case_id, t.input, t.expected, t.scorer, ARRAY(SELECT jsonb_array_elements_text(t.tags))
       FROM unnest($3::int[], $4::text[], $5::jsonb[], $6::jsonb[], $7::jsonb[], $8::jsonb[]) AS t(ordinal, case_id, input, expected, scorer, tags)`,
      [
        suite.suite_key,
        suite.version,
        c.map((_, i) => i),
        c.map((x) => x.case_id),
        c.map((x) => (x.input === undefined ? null : JSON.stringify(x.input))),
        c.map((x) => (x.expected === undefined ? null : JSON.stringify(x.expected))),
        c.map((x) => (x.scorer ? JSON.stringify(x.scorer) : null)),
        c.map((x) => JSON.stringify(x.tags ?? [])),
      ],
    );
  };

  it('gives every stored version its stream: folded, each is what find reads; a second run writes nothing', async () => {
    const ds = dataSource();
    const lastApplied = async () => ((await ds.query(`SELECT name FROM schema_migrations ORDER BY id DESC LIMIT 1`)) as Array<{ name: string }>)[0].name;
    // Back to the release before: every migration up to the one before the backfill.
    const previous = new migrations[migrations.indexOf(SuiteFacts1796400000700) - 1]().name;
    while ((await lastApplied()) !== previous) await ds.undoLastMigration();
    const old = [version('alpha', 1, 5), version('alpha', 2, 2_300, true), version('beta', 1, 0), version('gamma', 1, 4_100)];
    for (const suite of old) await ds.transaction((m) => oldInsert(m, suite));
    const [{ n: before }] = await ds.query(`SELECT count(*)::int AS n FROM events`);
    expect(before).toBe(0);
    expect(await loadSuite(ds, store, DEFAULT_PROJECT, 'alpha', 1)).toBeNull();

    await migrate(ds);
    expect(((await ds.query(`SELECT name FROM schema_migrations`)) as Array<{ name: string }>).map((r) => r.name)).toContain('SuiteFacts1796400000700');
    const stored = (await ds.query(`SELECT suite_key, version FROM suite_versions ORDER BY suite_key, version`)) as Array<{ suite_key: string; version: number }>;
    expect(stored).toHaveLength(old.length);
    for (const { suite_key, version: v } of stored) {
      const found = await repo.find(ds, DEFAULT_PROJECT, suite_key, v);
      const folded = await loadSuite(ds, store, DEFAULT_PROJECT, suite_key, v);
      expect(folded).toEqual(found);
      // What the worker, calibration and comparison compile from it: as before.
      expect(scoring(folded!)).toEqual(scoring(found!));
    }
    expect((await loadSuite(ds, store, DEFAULT_PROJECT, 'alpha'))!.version).toBe(2);

    const [{ n: events }] = await ds.query(`SELECT count(*)::int AS n FROM events`);
    const runner = ds.createQueryRunner();
    try {
      await new SuiteFacts1796400000700().up(runner);
    } finally {
      await runner.release();
    }
    expect((await ds.query(`SELECT count(*)::int AS n FROM events`))[0].n).toBe(events);
    // A version pushed after the upgrade gets its stream from the push itself, not twice.
    await ds.transaction((m) => repo.insert(m, version('alpha', 3, 10)));
    expect((await streamOf(ds, 'alpha', 3)).filter((e) => e.type === SUITE_EVENTS.published)).toHaveLength(1);
  });
});
