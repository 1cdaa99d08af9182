/**
 * The verdict cache in Redis (J6). Key: `<prefix><hex digest>`, the digest being SHA-256 (or HMAC-SHA256
 * with a secret, so short outputs cannot be confirmed by hashing guesses) over the canonical JSON of the
 * output, rubric, expected, input, judge model pin, prompt version and scorer version. Value: JSON
 * `{"verdict", "score"}` and nothing else (D1, J2). Entries expire after a TTL.
 */
import { createHash, createHmac } from 'node:crypto';
import { type CachedVerdict, type VerdictCache, type VerdictCacheKeyParts, parseCachedVerdict, verdictCacheKeyMaterial } from '@evals/domain';
import type Redis from 'ioredis';

export const DEFAULT_VERDICT_CACHE_PREFIX = 'evals:judge:verdict:';
export const DEFAULT_VERDICT_CACHE_TTL_SECONDS = 30 * 24 * 3600;

/** The hex digest that names a cached verdict. */
export function verdictCacheKey(parts: VerdictCacheKeyParts, secret?: string): string {
  const material = verdictCacheKeyMaterial(parts);
  return (secret ? createHmac('sha256', secret) : createHash('sha256')).update(material, 'utf8').digest('hex');
}

export interface RedisVerdictCacheOptions {
  /** Key prefix (default `evals:judge:verdict:`). */
  readonly prefix?: string;
  /** Time to live of an entry, in seconds (default 30 days). */
  readonly ttlSeconds?: number;
}

export class RedisVerdictCache implements VerdictCache {
  readonly prefix: string;
  readonly ttlSeconds: number;

  constructor(
    private readonly redis: Redis,
    options: RedisVerdictCacheOptions = {},
  ) {
    this.prefix = options.prefix ?? DEFAULT_VERDICT_CACHE_PREFIX;
    this.ttlSeconds = options.ttlSeconds ?? DEFAULT_VERDICT_CACHE_TTL_SECONDS;
    if (!Number.isSafeInteger(this.ttlSeconds) || this.ttlSeconds < 1) throw new RangeError('ttlSeconds must be an integer >= 1');
  }

  /** A stored `{verdict, score}`, or null (absent, expired, or not exactly that shape). */
  async get(key: string): Promise<CachedVerdict | null> {
    return parseCachedVerdict(await this.redis.get(this.prefix + key));
  }

  async set(key: string, value: CachedVerdict): Promise<void> {
    // Only these two fields are written, whatever object the caller passes.
    const stored = JSON.stringify({ verdict: value.verdict, score: value.score });
    if (parseCachedVerdict(stored) === null) throw new RangeError('a cached verdict must be pass/fail with a score in [0, 1]');
    await this.redis.set(this.prefix + key, stored, 'EX', this.ttlSeconds);
  }
}
