/**
 * The judge port (J1): what the `llm_judge` scorer (S3), the gate and calibration need of a judge, and
 * nothing of how it is reached. The adapter (libs/judge) implements it with LangChain chat models.
 *
 * Minimal data (D1, J2): a request carries the candidate output in, a verdict carries only the verdict, the
 * score and the bookkeeping out. The judge's reasoning never leaves the adapter, and no error message ever
 * quotes the output or the reply.
 */

export type PassFail = 'pass' | 'fail';

export interface JudgeRequest {
  /** The candidate output to grade. Never stored, logged or returned (D1). */
  readonly output: string;
  /** What a good answer does (the case's `rubric`). */
  readonly rubric: string;
  /** The case's `expected` value, when it has one: a string is shown as is, anything else as JSON. */
  readonly expected?: unknown;
  /** The task input the output answers, when the suite has one. */
  readonly input?: string;
}

export interface JudgeUsage {
  readonly input_tokens: number;
  readonly output_tokens: number;
}

export interface JudgePricing {
  /** US dollars per million input (prompt) tokens. */
  readonly input_per_mtok_usd: number;
  /** US dollars per million output (completion) tokens. */
  readonly output_per_mtok_usd: number;
}

export interface JudgeVerdict {
  readonly verdict: PassFail;
  /** In [0, 1]. */
  readonly score: number;
  /** The exact model pin that produced the verdict, e.g. `gpt-4o-2024-08-06`. */
  readonly model: string;
  /** The prompt version id, e.g. `judge-v1`. */
  readonly prompt_version: string;
  /** Tokens of this call (all zero on a cache hit: nothing was spent). */
  readonly usage: JudgeUsage;
  /** True when the provider reported no usage and the tokens were estimated as ceil(chars / 4). */
  readonly usage_estimated: boolean;
  readonly cost_usd: number;
  /** True when the verdict is a recorded one from the verdict cache (J6, gate only). */
  readonly cached: boolean;
}

export interface JudgeCallOptions {
  /** Gate only (J6): look the verdict up in the verdict cache first, and record it on a miss. */
  readonly useCache?: boolean;
  /**
   * Which of a case's `repeats` this call is (0-based; issue 13). The verdict cache keys it too, so the k
   * repeats of a case are k recorded verdicts, not one verdict read back k times.
   */
  readonly repeat?: number;
  /** The project of the run judged (issue 30): the verdict cache is keyed per project. Absent: `default`. */
  readonly project?: string;
}

export interface JudgePort {
  /** The exact model pin every verdict of this judge carries. */
  readonly model: string;
  /** The prompt version every verdict of this judge carries. */
  readonly promptVersion: string;
  /** Resolves with a verdict or rejects with a `JudgeError`; never resolves with a made-up pass (J3). */
  judge(request: JudgeRequest, options?: JudgeCallOptions): Promise<JudgeVerdict>;
}

export const JUDGE_ERROR_CODES = [
  'judge_unparseable',
  'judge_timeout',
  'judge_rate_limited',
  'judge_unavailable',
  'judge_credential_missing',
] as const;

export type JudgeErrorCode = (typeof JUDGE_ERROR_CODES)[number];

/** What an error may say beyond its code: fixed vocabulary and numbers only, never text of the output or reply. */
export interface JudgeErrorDetails {
  /** A fixed-vocabulary reason, e.g. `verdict_not_last`, `http_status`, `retries_exhausted`. */
  readonly reason?: string;
  /** The provider's HTTP status, when there was one. */
  readonly status?: number;
  /** How many calls were made (1 + retries). */
  readonly attempts?: number;
  /** What a call that did answer (e.g. an unparseable reply) cost. */
  readonly usage?: JudgeUsage;
  readonly usage_estimated?: boolean;
  readonly cost_usd?: number;
}

/** A judge call that produced no verdict (J3: an error for that case, never a pass). */
export class JudgeError extends Error {
  override readonly name = 'JudgeError';

  constructor(
    readonly code: JudgeErrorCode,
    message: string,
    readonly details: JudgeErrorDetails = {},
  ) {
    super(`${code}: ${message}`);
  }
}

export function isJudgeError(value: unknown): value is JudgeError {
  return value instanceof JudgeError;
}

/** S3: a judged case passes when the verdict is pass and the score is at least `min_score`. */
export function judgePassed(result: { readonly verdict: PassFail; readonly score: number }, minScore: number): boolean {
  return result.verdict === 'pass' && result.score >= minScore;
}

/** Labels a judged case can carry in evidence: a fixed vocabulary that never quotes anything (D1, D2). */
export const JUDGE_LABELS = {
  pass: 'judge_pass',
  fail: 'judge_fail',
  belowMinScore: 'judge_below_min_score',
} as const;

export interface JudgeOutcome {
  readonly score: number;
  readonly passed: boolean;
  /** `judge_pass`, `judge_fail`, `judge_below_min_score`, or the error code. */
  readonly label: string;
}

/**
 * The case result of a judge call (S3, J3): a verdict becomes its score and the S3 pass rule; an error
 * scores 0, fails, and carries its code as the label, so an unparseable verdict is never a pass.
 */
export function judgeOutcome(result: JudgeVerdict | JudgeError, minScore: number): JudgeOutcome {
  if (result instanceof JudgeError) return { score: 0, passed: false, label: result.code };
  const passed = judgePassed(result, minScore);
  const label = passed ? JUDGE_LABELS.pass : result.verdict === 'pass' ? JUDGE_LABELS.belowMinScore : JUDGE_LABELS.fail;
  return { score: result.score, passed, label };
}

/** Tokens estimated from characters when a provider reports none: ceil(chars / 4). */
export function estimateTokens(chars: number): number {
  return chars <= 0 ? 0 : Math.ceil(chars / 4);
}

/** The cost of one call from the judge's pricing (US dollars per million tokens). */
export function judgeCost(usage: JudgeUsage, pricing: JudgePricing): number {
  return (usage.input_tokens * pricing.input_per_mtok_usd + usage.output_tokens * pricing.output_per_mtok_usd) / 1_000_000;
}
