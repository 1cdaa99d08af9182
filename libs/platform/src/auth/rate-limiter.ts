import type Redis from 'ioredis';

/**
 * Per-key rate limits on write routes (docs/security.md): a token bucket of `perMinute` tokens per key,
 * refilled continuously at perMinute/60 per second; every write takes one. In Redis (one Lua script, the
 * server's clock) when REDIS_URL is set, so the limit holds across replicas; else in this process's memory.
 */
export interface RateDecision {
  readonly allowed: boolean;
  /** Whole tokens left after this request. */
  readonly remaining: number;
  /** When refused: seconds until one token is back (at least 1). */
  readonly retryAfterSeconds: number;
}

export interface RateLimiter {
  readonly perMinute: number;
  take(bucket: string): Promise<RateDecision>;
  close(): Promise<void>;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMs: number;

  constructor(
    readonly perMinute: number,
    private readonly now: () => number = Date.now,
    private readonly maxBuckets = 100_000,
  ) {
    if (!Number.isInteger(perMinute) || perMinute < 1) throw new RangeError('perMinute must be an integer >= 1');
    this.perMs = perMinute / 60_000;
  }

  async take(bucket: string): Promise<RateDecision> {
    return this.takeNow(bucket);
  }

  takeNow(bucket: string): RateDecision {
    const now = this.now();
    const b = this.buckets.get(bucket) ?? { tokens: this.perMinute, at: now };
    b.tokens = Math.min(this.perMinute, b.tokens + Math.max(0, now - b.at) * this.perMs);
    b.at = now;
    let decision: RateDecision;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      decision = { allowed: true, remaining: Math.floor(b.tokens), retryAfterSeconds: 0 };
    } else {
      decision = { allowed: false, remaining: 0, retryAfterSeconds: Math.max(1, Math.ceil((1 - b.tokens) / this.perMs / 1000)) };
    }
    this.buckets.delete(bucket); // re-insert: the map stays in least-recently-used order
    this.buckets.set(bucket, b);
    if (this.buckets.size > this.maxBuckets) {
      // The oldest entry has been idle longest; forgetting it hands that key a full bucket again.
      const oldest = this.buckets.keys().next().value;
      if (oldest !== undefined) this.buckets.delete(oldest);
    }
    return decision;
  }

  async close(): Promise<void> {
    this.buckets.clear();
  }
}

/** KEYS[1] the bucket; ARGV: capacity, refill per millisecond, key TTL in ms. Returns {allowed, remaining, wait_ms}. */
export const TOKEN_BUCKET_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil or at == nil then
  tokens = capacity
  at = now
end
local elapsed = now - at
if elapsed < 0 then elapsed = 0 end
tokens = math.min(capacity, tokens + elapsed * rate)
local allowed = 0
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
else
  wait = math.ceil((1 - tokens) / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {allowed, math.floor(tokens), wait}
`;

type BucketCommand = (key: string, capacity: string, ratePerMs: string, ttlMs: string) => Promise<[number, number, number]>;

export class RedisRateLimiter implements RateLimiter {
  private readonly perMs: number;
  private warned = false;
  private connecting: Promise<void> | undefined;

  constructor(
    private readonly redis: Redis,
    readonly perMinute: number,
    private readonly prefix: string,
    /** Used while Redis cannot answer, so a Redis outage neither blocks writes nor lifts every limit. */
    private readonly fallback: MemoryRateLimiter,
    private readonly onUnavailable: (error: unknown) => void = () => undefined,
  ) {
    if (!Number.isInteger(perMinute) || perMinute < 1) throw new RangeError('perMinute must be an integer >= 1');
    this.perMs = perMinute / 60_000;
    redis.defineCommand('evalsTokenBucket', { numberOfKeys: 1, lua: TOKEN_BUCKET_LUA });
    // Without a listener ioredis prints every connection error; one warning per outage is enough.
    redis.on('error', (error: unknown) => this.unavailable(error));
    redis.on('ready', () => {
      this.warned = false;
    });
  }

  async take(bucket: string): Promise<RateDecision> {
    try {
      if (this.redis.status === 'wait') this.connecting = this.redis.connect().finally(() => (this.connecting = undefined));
      // Requests arriving while the first connection is made wait for it, rather than counting in memory.
      if (this.connecting) await this.connecting;
      const command = (this.redis as unknown as { evalsTokenBucket: BucketCommand }).evalsTokenBucket;
      // An empty bucket is full again after 60 s; an idle key's bucket may then simply expire.
      const ttlMs = 61_000;
      const [allowed, remaining, waitMs] = await command.call(this.redis, `${this.prefix}${bucket}`, String(this.perMinute), String(this.perMs), String(ttlMs));
      return allowed === 1
        ? { allowed: true, remaining: Number(remaining), retryAfterSeconds: 0 }
        : { allowed: false, remaining: 0, retryAfterSeconds: Math.max(1, Math.ceil(Number(waitMs) / 1000)) };
    } catch (error) {
      this.unavailable(error);
      return this.fallback.takeNow(bucket);
    }
  }

  private unavailable(error: unknown): void {
    if (this.warned) return;
    this.warned = true;
    this.onUnavailable(error);
  }

  async close(): Promise<void> {
    if (this.redis.status === 'end' || this.redis.status === 'wait') {
      this.redis.disconnect();
      return;
    }
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
