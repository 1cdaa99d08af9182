import { MemoryRateLimiter } from './rate-limiter';

describe('in-memory token bucket (per key, writes)', () => {
  it('allows perMinute requests at once, then refuses with the wait for one token', () => {
    let now = 1_000_000;
    const limiter = new MemoryRateLimiter(5, () => now);
    const decisions = Array.from({ length: 6 }, () => limiter.takeNow('k'));
    expect(decisions.slice(0, 5).every((d) => d.allowed)).toBe(true);
    expect(decisions.map((d) => d.remaining).slice(0, 5)).toEqual([4, 3, 2, 1, 0]);
    expect(decisions[5]).toEqual({ allowed: false, remaining: 0, retryAfterSeconds: 12 }); // 5/min: one token per 12 s
    now += 6_000;
    expect(limiter.takeNow('k')).toMatchObject({ allowed: false, retryAfterSeconds: 6 });
    now += 6_000;
    expect(limiter.takeNow('k')).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('keeps one bucket per key', () => {
    const limiter = new MemoryRateLimiter(1, () => 0);
    expect(limiter.takeNow('a').allowed).toBe(true);
    expect(limiter.takeNow('a').allowed).toBe(false);
    expect(limiter.takeNow('b').allowed).toBe(true);
  });

  it('refills to the bucket size and no further', () => {
    let now = 0;
    const limiter = new MemoryRateLimiter(3, () => now);
    for (let i = 0; i < 3; i++) limiter.takeNow('k');
    now += 3_600_000;
    const after = Array.from({ length: 4 }, () => limiter.takeNow('k').allowed);
    expect(after).toEqual([true, true, true, false]);
  });

  it('never answers a retry of less than one second', () => {
    let now = 0;
    const limiter = new MemoryRateLimiter(100_000, () => now);
    for (let i = 0; i < 100_000; i++) limiter.takeNow('k');
    expect(limiter.takeNow('k')).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
  });

  it('forgets the least recently used bucket beyond its size bound', () => {
    const limiter = new MemoryRateLimiter(1, () => 0, 2);
    limiter.takeNow('a');
    limiter.takeNow('b');
    limiter.takeNow('c'); // evicts a
    expect(limiter.takeNow('a').allowed).toBe(true);
    expect(limiter.takeNow('c').allowed).toBe(false);
  });

  it('refuses a nonsensical size', () => {
    expect(() => new MemoryRateLimiter(0)).toThrow(RangeError);
    expect(() => new MemoryRateLimiter(1.5)).toThrow(RangeError);
  });
});
