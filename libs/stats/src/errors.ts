/**
 * Invalid input is a programming error in the caller (a negative count, more successes than trials,
 * arrays of different lengths), so it throws. An input that is valid but leaves a statistic undefined
 * (no data, constant input, chance agreement of one) is data, so it returns `null` with a reason instead.
 */

/** Stable error codes: callers and checks match on these, never on the message text. */
export type StatsErrorCode =
  | 'NOT_FINITE'
  | 'NOT_INTEGER'
  | 'NEGATIVE_COUNT'
  | 'SUCCESSES_EXCEED_N'
  | 'LENGTH_MISMATCH'
  | 'NOT_SQUARE'
  | 'NOT_BINARY'
  | 'NOT_BOOLEAN'
  | 'INVALID_CONFIDENCE'
  | 'INVALID_PROBABILITY'
  | 'INVALID_SIZE'
  | 'INVALID_OPTION'
  | 'INVALID_SEED';

export class StatsInputError extends Error {
  override readonly name = 'StatsInputError';

  constructor(
    readonly code: StatsErrorCode,
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

/**
 * Why a statistic is `null`. A fixed vocabulary so that evidence and UI can branch on it.
 * - `empty`: no observations (n = 0, or a zero denominator).
 * - `insufficient_data`: some observations, but fewer than the statistic needs (e.g. one point for a slope).
 * - `constant_input`: a variable has zero variance, so a correlation is 0/0.
 * - `expected_agreement_is_one`: both raters used one and the same class for every item, so kappa is 0/0.
 * - `youden_not_positive`: sensitivity + specificity - 1 <= 0, so the Rogan-Gladen correction is undefined.
 */
export type UndefinedReason =
  | 'empty'
  | 'insufficient_data'
  | 'constant_input'
  | 'expected_agreement_is_one'
  | 'youden_not_positive';

export function assertFinite(value: number, what: string): void {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new StatsInputError('NOT_FINITE', `${what} must be a finite number, got ${String(value)}`);
  }
}

/** Counts must be safe integers so that sums and products of them stay exact in a double. */
export function assertCount(value: number, what: string): void {
  assertFinite(value, what);
  if (!Number.isSafeInteger(value)) {
    throw new StatsInputError('NOT_INTEGER', `${what} must be an integer count, got ${value}`);
  }
  if (value < 0) {
    throw new StatsInputError('NEGATIVE_COUNT', `${what} must not be negative, got ${value}`);
  }
}

export function assertSameLength(a: ArrayLike<unknown>, b: ArrayLike<unknown>, what: string): void {
  if (a.length !== b.length) {
    throw new StatsInputError('LENGTH_MISMATCH', `${what}: lengths differ (${a.length} vs ${b.length})`);
  }
}

export function assertProbability(value: number, what: string): void {
  assertFinite(value, what);
  if (value < 0 || value > 1) {
    throw new StatsInputError('INVALID_PROBABILITY', `${what} must lie in [0, 1], got ${value}`);
  }
}

export function clamp(value: number, lo: number, hi: number): number {
  return value < lo ? lo : value > hi ? hi : value;
}
