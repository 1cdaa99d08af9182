import type { CachedVerdict, JudgePort, JudgeRequest, JudgeVerdict, VerdictCache } from '@evals/domain';
import { CachedJudge } from './cached-judge';

class MemoryCache implements VerdictCache {
  readonly map = new Map<string, CachedVerdict>();
  failReads = false;
  async get(key: string) {
    if (this.failReads) throw new Error('cache down');
    return this.map.get(key) ?? null;
  }
  async set(key: string, value: CachedVerdict) {
    this.map.set(key, value);
  }
}

class CountingJudge implements JudgePort {
  calls = 0;
  constructor(
    readonly model = 'm-2024-01-01',
    readonly promptVersion = 'judge-v1',
  ) {}
  async judge(_r: JudgeRequest): Promise<JudgeVerdict> {
    this.calls++;
    return { verdict: 'pass', score: 0.8, model: this.model, prompt_version: this.promptVersion, usage: { input_tokens: 10, output_tokens: 5 }, usage_estimated: false, cost_usd: 0.001, cached: false };
  }
}

const request = { output: 'an output', rubric: 'a rubric' };

describe('CachedJudge (J6)', () => {
  it('issue 13: each repeat of a case is its own entry (the key carries the repeat index); repeat 0 keeps the single call\'s key', async () => {
    const inner = new CountingJudge();
    const cache = new MemoryCache();
    const judge = new CachedJudge(inner, cache, { scorerVersion: '1.0.0' });
    expect(judge.keyOf(request, 0)).toBe(judge.keyOf(request));
    expect(new Set([judge.keyOf(request, 0), judge.keyOf(request, 1), judge.keyOf(request, 2)]).size).toBe(3);
    for (const repeat of [0, 1, 2]) await judge.judge(request, { useCache: true, repeat });
    expect(inner.calls).toBe(3);
    expect(cache.map.size).toBe(3);
    for (const repeat of [0, 1, 2]) expect((await judge.judge(request, { useCache: true, repeat })).cached).toBe(true);
    expect(inner.calls).toBe(3);
  });

  it('gate: a miss calls and records, a hit returns the recorded verdict without calling', async () => {
    const inner = new CountingJudge();
    const cache = new MemoryCache();
    const judge = new CachedJudge(inner, cache, { scorerVersion: '1.0.0' });
    const first = await judge.judge(request, { useCache: true });
    expect(first.cached).toBe(false);
    const second = await judge.judge(request, { useCache: true });
    expect(inner.calls).toBe(1);
    expect(second).toEqual({ verdict: 'pass', score: 0.8, model: 'm-2024-01-01', prompt_version: 'judge-v1', usage: { input_tokens: 0, output_tokens: 0 }, usage_estimated: false, cost_usd: 0, cached: true });
    expect(judge.stats()).toEqual({ hits: 1, misses: 1, stores: 1, errors: 0 });
    expect([...cache.map.values()]).toEqual([{ verdict: 'pass', score: 0.8 }]);
  });

  it('outside the gate the judge is always called and nothing is recorded', async () => {
    const inner = new CountingJudge();
    const cache = new MemoryCache();
    const judge = new CachedJudge(inner, cache, { scorerVersion: '1.0.0' });
    await judge.judge(request);
    await judge.judge(request, { useCache: false });
    expect(inner.calls).toBe(2);
    expect(cache.map.size).toBe(0);
  });

  it('a cache that cannot be read is a miss, never a failure', async () => {
    const inner = new CountingJudge();
    const cache = new MemoryCache();
    cache.failReads = true;
    const judge = new CachedJudge(inner, cache, { scorerVersion: '1.0.0' });
    await expect(judge.judge(request, { useCache: true })).resolves.toMatchObject({ cached: false });
    expect(judge.stats()).toMatchObject({ misses: 1, errors: 1 });
  });

  it('issue 30: the same request in two projects is two entries; the default project keeps its key', async () => {
    const inner = new CountingJudge();
    const cache = new MemoryCache();
    const judge = new CachedJudge(inner, cache, { scorerVersion: '1.0.0' });
    expect(judge.keyOf(request, 0, 'default')).toBe(judge.keyOf(request));
    expect(judge.keyOf(request, 0, 'team-a')).not.toBe(judge.keyOf(request, 0, 'team-b'));
    await judge.judge(request, { useCache: true, project: 'team-a' });
    // Team b's gate judges the same output with the same rubric: a miss (a hit would tell it team a did).
    expect((await judge.judge(request, { useCache: true, project: 'team-b' })).cached).toBe(false);
    // Nor does either project's entry answer the default project.
    expect((await judge.judge(request, { useCache: true })).cached).toBe(false);
    expect(inner.calls).toBe(3);
    expect(cache.map.size).toBe(3);
    expect((await judge.judge(request, { useCache: true, project: 'team-a' })).cached).toBe(true);
    expect((await judge.judge(request, { useCache: true, project: 'default' })).cached).toBe(true);
    expect(inner.calls).toBe(3);
  });

  it('keys change with the scorer version and the key secret', () => {
    const inner = new CountingJudge();
    const cache = new MemoryCache();
    const a = new CachedJudge(inner, cache, { scorerVersion: '1.0.0' }).keyOf(request);
    expect(new CachedJudge(inner, cache, { scorerVersion: '1.0.1' }).keyOf(request)).not.toBe(a);
    expect(new CachedJudge(inner, cache, { scorerVersion: '1.0.0', keySecret: 's' }).keyOf(request)).not.toBe(a);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
  });
});
