import type { EventStore, Sql, SuiteVersions, SuiteVersionWithCases } from '@evals/persistence';
import { SUITE_STREAM_CODES, SuiteCompileError, SuiteStreamError } from '@evals/domain';
import { RunCatalog } from './run-catalog';

/** A suite repository of versions with `sizes[key]` cases each, counting its reads. */
function repository(sizes: Record<string, number>): { repo: SuiteVersions; reads: string[] } {
  const reads: string[] = [];
  const repo = {
    async find(_sql: Sql, project: string, key: string, version: number): Promise<SuiteVersionWithCases | null> {
      reads.push(project === 'default' ? key : `${project}:${key}`);
      const n = sizes[key];
      if (n === undefined) return null;
      return {
        suite_key: key,
        version,
        default_scorer: { type: 'exact' },
        cases: Array.from({ length: n }, (_, i) => ({ case_id: `c${i}`, input: 'q', expected: `a${i}`, scorer: null, tags: [] })),
      } as unknown as SuiteVersionWithCases;
    },
  } as unknown as SuiteVersions;
  return { repo, reads };
}

const sql = {} as Sql;
const events = {} as EventStore;

describe('RunCatalog: compiled suite versions (issue 15: bounded by cases)', () => {
  it('compiles a version once and serves it from memory', async () => {
    const { repo, reads } = repository({ a: 3 });
    const catalog = new RunCatalog(events, repo);
    const first = await catalog.suite(sql, 'default', 'a', 1);
    expect(first?.cases.size).toBe(3);
    expect(await catalog.suite(sql, 'default', 'a', 1)).toBe(first);
    expect(reads).toEqual(['a']);
  });

  it('keeps the same suite key of two projects apart (issue 30)', async () => {
    const { repo, reads } = repository({ a: 3 });
    const catalog = new RunCatalog(events, repo);
    const mine = await catalog.suite(sql, 'default', 'a', 1);
    const theirs = await catalog.suite(sql, 'team-b', 'a', 1);
    expect(theirs).not.toBe(mine);
    expect(reads).toEqual(['a', 'team-b:a']);
  });

  it('forgets the least recently used versions once their cases exceed the bound', async () => {
    const { repo, reads } = repository({ a: 100, b: 100, c: 100 });
    const catalog = new RunCatalog(events, repo, 250);
    await catalog.suite(sql, 'default', 'a', 1);
    await catalog.suite(sql, 'default', 'b', 1);
    await catalog.suite(sql, 'default', 'a', 1); // a is now the most recent
    await catalog.suite(sql, 'default', 'c', 1); // 300 cases: b goes
    await catalog.suite(sql, 'default', 'a', 1);
    await catalog.suite(sql, 'default', 'c', 1);
    expect(reads).toEqual(['a', 'b', 'c']);
    await catalog.suite(sql, 'default', 'b', 1); // read again; a (least recent) goes
    await catalog.suite(sql, 'default', 'c', 1);
    await catalog.suite(sql, 'default', 'a', 1);
    expect(reads).toEqual(['a', 'b', 'c', 'b', 'a']);
  });

  it('keeps a version larger than the bound alone while it is the one in use', async () => {
    const { repo, reads } = repository({ big: 500, small: 10 });
    const catalog = new RunCatalog(events, repo, 250);
    await catalog.suite(sql, 'default', 'big', 1);
    await catalog.suite(sql, 'default', 'big', 1);
    expect(reads).toEqual(['big']);
    await catalog.suite(sql, 'default', 'small', 1); // the big one goes: 510 > 250
    await catalog.suite(sql, 'default', 'small', 1);
    await catalog.suite(sql, 'default', 'big', 1);
    expect(reads).toEqual(['big', 'small', 'big']);
  });

  it('caches nothing for a version that is not stored', async () => {
    const { repo, reads } = repository({});
    const catalog = new RunCatalog(events, repo);
    expect(await catalog.suite(sql, 'default', 'missing', 1)).toBeNull();
    expect(await catalog.suite(sql, 'default', 'missing', 1)).toBeNull();
    expect(reads).toEqual(['missing', 'missing']);
  });

  it('refuses a suite stream that does not fold as not scorable (issue 27: dead-lettered, never retried)', async () => {
    const broken = { find: async () => Promise.reject(new SuiteStreamError(SUITE_STREAM_CODES.incomplete, 'suite a v1: 3 cases of 4')) } as unknown as SuiteVersions;
    const catalog = new RunCatalog(events, broken);
    const error = await catalog.suite(sql, 'default', 'a', 1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SuiteCompileError);
    expect((error as Error).message).toContain('SUITE_STREAM_INCOMPLETE');
  });
});

describe('RunCatalog: runs (issue 28: a batch of new runs read in one query)', () => {
  const opened = (runId: string) => ({
    position: 1,
    stream_id: `run-${runId}`,
    stream_version: 1,
    type: 'run.opened',
    version: 1,
    data: {
      run_id: runId,
      suite_key: 's',
      suite_version: 1,
      suite_content_hash: 'sha256:x',
      pass_threshold: 0.5,
      regression_threshold: 0.1,
      subject_kind: 'agent',
      subject_id: 'bot',
      variant: null,
      baseline_run_id: null,
      source: 'ci',
      case_count: 1,
      scorer_versions: { exact: '1.0.0' },
    },
    metadata: { message_id: '00000000-0000-4000-8000-000000000001', correlation_id: 'c', causation_id: 'c', occurred_at: '2026-12-04T00:00:00.000Z' },
  });

  /** Run streams of the opened runs `known`, counting single and multi-stream reads. */
  function store(known: string[]) {
    const reads = { one: 0, many: 0 };
    const stream = (id: string) => (known.includes(id.replace(/^run-/, '')) ? [opened(id.replace(/^run-/, ''))] : []);
    const events = {
      async readStream(_sql: Sql, id: string) {
        reads.one++;
        return stream(id);
      },
      async readStreams(_sql: Sql, ids: readonly string[]) {
        reads.many++;
        return new Map(ids.filter((id) => stream(id).length > 0).map((id) => [id, stream(id)]));
      },
    } as unknown as EventStore;
    return { events, reads };
  }

  it('prefetch reads the runs not cached in one query; run() then answers them from memory; an unknown run is asked again later', async () => {
    const { events, reads } = store(['r1', 'r2', 'r3']);
    const catalog = new RunCatalog(events, repository({}).repo);
    await catalog.prefetch(sql, ['r1', 'r2', 'r3', 'unknown']);
    expect(reads).toEqual({ one: 0, many: 1 });
    for (const id of ['r1', 'r2', 'r3']) expect((await catalog.run(sql, id))?.opened.run_id).toBe(id);
    expect(reads).toEqual({ one: 0, many: 1 });
    // Not opened yet: nothing remembered, so it is read again (it may be opened since).
    expect(await catalog.run(sql, 'unknown')).toBeNull();
    expect(reads).toEqual({ one: 1, many: 1 });
    // All cached already: no query at all.
    await catalog.prefetch(sql, ['r1', 'r2']);
    expect(reads).toEqual({ one: 1, many: 1 });
  });
});
