import { MemoryVerdictCache } from './memory-verdict-cache';
import { verdictCacheContract } from './verdict-cache.contract';

verdictCacheContract('in memory', async () => {
  const cache = new MemoryVerdictCache();
  return {
    cache,
    // What the process holds is what get() can hand back: there is no other copy.
    raw: async (key) => {
      const hit = await cache.get(key);
      return hit === null ? null : JSON.stringify(hit);
    },
    teardown: async () => undefined,
  };
});

describe('unit: MemoryVerdictCache (embedded mode, J6)', () => {
  it('expires an entry after its TTL, by the injected clock', async () => {
    let now = 1_000_000;
    const cache = new MemoryVerdictCache({ ttlSeconds: 60, now: () => now });
    await cache.set('k', { verdict: 'pass', score: 1 });
    now += 59_999;
    expect(await cache.get('k')).toEqual({ verdict: 'pass', score: 1 });
    now += 1;
    expect(await cache.get('k')).toBeNull();
  });

  it('keeps at most maxEntries, evicting the least recently used', async () => {
    const cache = new MemoryVerdictCache({ maxEntries: 2 });
    await cache.set('a', { verdict: 'pass', score: 1 });
    await cache.set('b', { verdict: 'pass', score: 1 });
    await cache.get('a'); // a is now more recent than b
    await cache.set('c', { verdict: 'fail', score: 0 });
    expect(cache.size).toBe(2);
    expect(await cache.get('b')).toBeNull();
    expect(await cache.get('a')).not.toBeNull();
    expect(await cache.get('c')).not.toBeNull();
  });
});
