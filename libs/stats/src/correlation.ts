import { StatsInputError, type UndefinedReason, assertFinite, assertSameLength, clamp } from './errors';

export interface CorrelationResult {
  /** In [-1, 1], or null when undefined. */
  readonly r: number | null;
  readonly n: number;
  /** `empty` (n = 0), `insufficient_data` (n = 1) or `constant_input` (a variable has no variance). */
  readonly reason?: Extract<UndefinedReason, 'empty' | 'insufficient_data' | 'constant_input'>;
}

/**
 * Pearson's product-moment correlation, two-pass: centre on the means first, then sum the products, which
 * avoids the catastrophic cancellation of the one-pass sum-of-squares formula. Each series is first scaled
 * by a power of two near its largest magnitude (exact in binary floating point), so neither very large nor
 * very small inputs overflow or underflow; r is invariant under that scaling.
 *
 * A constant series has zero variance and r = 0/0; that is null with `constant_input` (SciPy returns NaN
 * with a warning), decided by comparing the values themselves, not a rounded variance.
 */
export function pearson(xs: readonly number[], ys: readonly number[]): CorrelationResult {
  assertSameLength(xs, ys, 'pearson xs/ys');
  const n = xs.length;
  for (let i = 0; i < n; i++) {
    assertFinite(xs[i], `xs[${i}]`);
    assertFinite(ys[i], `ys[${i}]`);
  }
  if (n === 0) return { r: null, n, reason: 'empty' };
  if (n === 1) return { r: null, n, reason: 'insufficient_data' };
  if (isConstant(xs) || isConstant(ys)) return { r: null, n, reason: 'constant_input' };

  const dx = centred(xs);
  const dy = centred(ys);
  let sxx = 0;
  let syy = 0;
  let sxy = 0;
  for (let i = 0; i < n; i++) {
    const a = dx[i];
    const b = dy[i];
    sxx += a * a;
    syy += b * b;
    sxy += a * b;
  }
  // One sqrt of the product (safe after scaling: both sums lie far from the overflow and underflow
  // limits) rounds once, so exactly linear data gives exactly +-1.
  return { r: clamp(sxy / Math.sqrt(sxx * syy), -1, 1), n };
}

/**
 * Point-biserial correlation between a dichotomous and a continuous variable (J4 verbosity bias: a verdict
 * against output length). It is Pearson's r with the dichotomy coded 0/1, and is computed as exactly that.
 */
export function pointBiserial(
  binary: readonly (boolean | 0 | 1)[],
  continuous: readonly number[],
): CorrelationResult {
  assertSameLength(binary, continuous, 'pointBiserial binary/continuous');
  const coded = binary.map((v, i) => {
    if (v === true || v === 1) return 1;
    if (v === false || v === 0) return 0;
    throw new StatsInputError('NOT_BINARY', `binary[${i}] must be a boolean, 0 or 1, got ${String(v)}`);
  });
  return pearson(coded, continuous);
}

function isConstant(values: readonly number[]): boolean {
  const first = values[0];
  return values.every((v) => v === first);
}

function centred(values: readonly number[]): number[] {
  let maxAbs = 0;
  for (const v of values) maxAbs = Math.max(maxAbs, Math.abs(v));
  // log2 of the largest doubles rounds up to 1024, and 2^1024 is Infinity: keep the exponent in range.
  const exponent = maxAbs === 0 ? 0 : Math.min(1023, Math.max(-1074, Math.floor(Math.log2(maxAbs))));
  const scale = 2 ** exponent;
  const scaled = values.map((v) => v / scale);
  let mean = 0;
  for (const v of scaled) mean += v;
  mean /= scaled.length;
  // One correction pass removes most of the rounding error left in the first mean.
  let correction = 0;
  for (const v of scaled) correction += v - mean;
  mean += correction / scaled.length;
  return scaled.map((v) => v - mean);
}
