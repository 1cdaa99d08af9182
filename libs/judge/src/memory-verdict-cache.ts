import { type CachedVerdict, type VerdictCache, parseCachedVerdict } from '@evals/domain';

export interface MemoryVerdictCacheOptions {
  /** Entries kept at most; the least recently used goes first (default 10 000). */
  readonly maxEntries?: number;
  /** Time to live of an entry, in seconds (default 30 days, as in Redis). */
  readonly ttlSeconds?: number;
  /** Milliseconds since the epoch; injected so expiry is testable without waiting. */
  readonly now?: () => number;
}

/**
 * The verdict cache of the embedded all-in-one (docs/embedded.md): the same contract as RedisVerdictCache
 * (verdict-cache.contract.ts runs against both) - it stores `{verdict, score}` and nothing else, under the
 * keyed digest, for a TTL - in this process's memory, bounded. It does not survive a restart; a miss only
 * costs a judge call.
 */
export class MemoryVerdictCache implements VerdictCache {
  private readonly entries = new Map<string, { stored: string; expiresAt: number }>();
  private readonly maxEntries: number;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(options: MemoryVerdictCacheOptions = {}) {
    this.maxEntries = options.maxEntries ?? 10_000;
    this.ttlMs = (options.ttlSeconds ?? 30 * 24 * 3600) * 1000;
    this.now = options.now ?? Date.now;
    if (!Number.isSafeInteger(this.maxEntries) || this.maxEntries < 1) throw new RangeError('maxEntries must be an integer >= 1');
    if (!(this.ttlMs >= 1000)) throw new RangeError('ttlSeconds must be >= 1');
  }

  async get(key: string): Promise<CachedVerdict | null> {
    const entry = this.entries.get(key);
    if (!entry) return null;
    this.entries.delete(key);
    if (entry.expiresAt <= this.now()) return null;
    // Re-inserted so Map order is recency order, and eviction takes the first key.
    this.entries.set(key, entry);
    return parseCachedVerdict(entry.stored);
  }

  async set(key: string, value: CachedVerdict): Promise<void> {
    const stored = JSON.stringify({ verdict: value.verdict, score: value.score });
    if (parseCachedVerdict(stored) === null) throw new RangeError('a cached verdict must be pass/fail with a score in [0, 1]');
    this.entries.delete(key);
    this.entries.set(key, { stored, expiresAt: this.now() + this.ttlMs });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  /** Entries held, expired ones included until they are read or evicted. */
  get size(): number {
    return this.entries.size;
  }
}
