import Redis from 'ioredis';
import { testRedisPrefix } from '../../../../test/support/isolation';
import { testServers } from '../../../../test/support/servers';
import { MemoryRateLimiter, RedisRateLimiter } from './rate-limiter';

describe('integration: per-key token bucket in Redis (limits hold across replicas)', () => {
  const clients: Redis[] = [];
  const prefix = testRedisPrefix('ratelimit');
  const make = (perMinute: number) => {
    const redis = new Redis(testServers.redis.url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    clients.push(redis);
    return new RedisRateLimiter(redis, perMinute, prefix, new MemoryRateLimiter(perMinute));
  };

  afterAll(async () => {
    const admin = new Redis(testServers.redis.url);
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.del(...keys);
    await admin.quit();
    for (const c of clients) c.disconnect();
  });

  it('two limiters (two replicas) share one bucket per key: the sixth write of 5/min is refused wherever it lands', async () => {
    const a = make(5);
    const b = make(5);
    const decisions = [];
    for (let i = 0; i < 6; i++) decisions.push(await (i % 2 === 0 ? a : b).take('key-1'));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false]);
    expect(decisions.slice(0, 5).map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0]);
    expect(decisions[5]!.retryAfterSeconds).toBeGreaterThanOrEqual(11);
    expect(decisions[5]!.retryAfterSeconds).toBeLessThanOrEqual(12);
    expect((await a.take('key-2')).allowed).toBe(true);
    const ttl = await clients[0]!.pttl(`${prefix}key-1`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(61_000);
  });

  it('a burst arriving before the connection is up waits for it instead of counting in memory', async () => {
    const warnings: unknown[] = [];
    const redis = new Redis(testServers.redis.url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    clients.push(redis);
    const limiter = new RedisRateLimiter(redis, 3, prefix, new MemoryRateLimiter(3), (e) => warnings.push(e));
    const burst = await Promise.all(Array.from({ length: 4 }, () => limiter.take('burst')));
    expect(burst.filter((d) => d.allowed)).toHaveLength(3);
    expect(warnings).toEqual([]);
    expect(await redis.exists(`${prefix}burst`)).toBe(1);
  });

  it('falls back to counting in memory when Redis cannot be reached, and says so once', async () => {
    const redis = new Redis('redis://127.0.0.1:1', { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    clients.push(redis);
    const warnings: unknown[] = [];
    const limiter = new RedisRateLimiter(redis, 2, prefix, new MemoryRateLimiter(2), (e) => warnings.push(e));
    const decisions = [await limiter.take('k'), await limiter.take('k'), await limiter.take('k')];
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, false]);
    expect(warnings).toHaveLength(1);
    await limiter.close();
  });
});
