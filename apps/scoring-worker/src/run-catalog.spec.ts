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
