/**
 * The verdict cache (J6), pure part: what a key is made of and what a value holds. The adapter hashes the
 * key material (SHA-256, or HMAC-SHA256 with a secret) and stores the value in Redis.
 *
 * The key covers everything a verdict depends on: the output's content, the rubric, the expected value and
 * the task input (all in full - the hash is what is stored, never the text), the exact judge model pin, the
 * prompt version and the `llm_judge` scorer version. Changing any of them is a miss.
 *
 * The value is the verdict and score only: never the output, the reasoning or the reply (D1, J2).
 *
 * The cache is per project (issue 30, docs/adr/0009-projects.md): the project joins the key material, so
 * a hit never tells one team that another judged the same output with the same rubric. `default` adds
 * nothing, so the keys written before projects keep matching.
 */
import { projectField } from '@evals/contracts';
import { canonicalJson } from '../suites/canonical-json';
import type { JudgeRequest, PassFail } from './judge.port';

/** Bumped if the key material's shape ever changes, so old entries simply stop matching. */
export const VERDICT_CACHE_KEY_SCHEME = 'evals.judge-verdict.v1';

export interface VerdictCacheKeyParts {
  readonly request: JudgeRequest;
  readonly model: string;
  readonly prompt_version: string;
  readonly scorer_version: string;
  /** The repeat index (issue 13); 0 or absent is the single call, whose key stays as it always was. */
  readonly repeat?: number;
  /** The project of the run judged (issue 30); `default` or absent adds nothing, so its keys stay as they were. */
  readonly project?: string;
}

/** Canonical JSON of everything the cache key covers (hash it; never store it). */
export function verdictCacheKeyMaterial(parts: VerdictCacheKeyParts): string {
  const { request } = parts;
  return canonicalJson({
    scheme: VERDICT_CACHE_KEY_SCHEME,
    output: request.output,
    rubric: request.rubric,
    // `undefined` (no expected) and an authored JSON null are different cases: keep them apart.
    expected: request.expected === undefined ? { absent: true } : { value: request.expected },
    input: request.input === undefined ? { absent: true } : { value: request.input },
    model: parts.model,
    prompt_version: parts.prompt_version,
    scorer_version: parts.scorer_version,
    // Only repeats after the first add the index: existing entries (one call per case) keep matching.
    ...(parts.repeat !== undefined && parts.repeat > 0 ? { repeat: parts.repeat } : {}),
    // Likewise only a project other than `default`: entries written before projects keep matching.
    ...projectField(parts.project),
  });
}

/** What the cache records of a verdict: nothing else. */
export interface CachedVerdict {
  readonly verdict: PassFail;
  readonly score: number;
}

/** Reads a stored value back; anything but exactly a valid `{verdict, score}` is treated as absent. */
export function parseCachedVerdict(raw: string | null): CachedVerdict | null {
  if (raw === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length !== 2 || !keys.includes('verdict') || !keys.includes('score')) return null;
  const { verdict, score } = record;
  if (verdict !== 'pass' && verdict !== 'fail') return null;
  if (typeof score !== 'number' || !Number.isFinite(score) || score < 0 || score > 1) return null;
  return { verdict, score };
}

/** The cache port: keys are opaque hex digests, values `{verdict, score}`. */
export interface VerdictCache {
  get(key: string): Promise<CachedVerdict | null>;
  set(key: string, value: CachedVerdict): Promise<void>;
}
