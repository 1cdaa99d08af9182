/**
 * Bounded retries with exponential backoff and jitter, on HTTP 429 and 5xx only. Randomness and sleeping
 * are injected so tests run without waiting and assert the delays.
 */

export interface BackoffPolicy {
  /** Delay before the first retry, before jitter. */
  readonly baseMs: number;
  /** No delay exceeds this. */
  readonly capMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = Object.freeze({ baseMs: 500, capMs: 20_000 });

/**
 * "Equal jitter": the exponential delay min(cap, base * 2^(retry-1)) is halved, and a random share of the
 * other half added, so retries of many callers spread out but never come back immediately.
 * `retry` counts from 1; `random` returns a number in [0, 1).
 */
export function backoffDelayMs(retry: number, policy: BackoffPolicy, random: () => number): number {
  const exp = Math.min(policy.capMs, policy.baseMs * 2 ** Math.max(0, retry - 1));
  const r = random();
  const jitter = Number.isFinite(r) ? Math.min(Math.max(r, 0), 1) : 0;
  return Math.round(exp / 2 + jitter * (exp / 2));
}

/** The delay a provider asked for (`Retry-After` in seconds, or `retry-after-ms`), or null. */
export function retryAfterMs(error: unknown): number | null {
  const headers = (error as { headers?: unknown } | null)?.headers;
  if (!headers || typeof headers !== 'object') return null;
  const read = (name: string): string | null => {
    const h = headers as { get?: (n: string) => string | null } & Record<string, unknown>;
    if (typeof h.get === 'function') return h.get(name);
    const v = h[name];
    return typeof v === 'string' ? v : null;
  };
  const ms = read('retry-after-ms');
  if (ms !== null && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const s = read('retry-after');
  if (s !== null && /^\d+(\.\d+)?$/.test(s.trim())) return Math.ceil(Number(s) * 1000);
  return null;
}

/** The wait before retry number `retry`: the backoff, or what the provider asked for if longer, capped. */
export function retryDelayMs(retry: number, error: unknown, policy: BackoffPolicy, random: () => number): number {
  const backoff = backoffDelayMs(retry, policy, random);
  const asked = retryAfterMs(error);
  return Math.min(policy.capMs, asked === null ? backoff : Math.max(backoff, asked));
}

export function realSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
