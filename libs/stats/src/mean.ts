import { assertFinite } from './errors';

/**
 * Arithmetic mean (R2 `score`, SC1 mean score), null for an empty list: the mean of nothing is unknown,
 * not 0. Neumaier-compensated summation keeps long runs of scores in [0, 1] exact to the last bit or two.
 */
export function mean(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  let sum = 0;
  let compensation = 0;
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i];
    assertFinite(x, `xs[${i}]`);
    const t = sum + x;
    compensation += Math.abs(sum) >= Math.abs(x) ? sum - t + x : x - t + sum;
    sum = t;
  }
  const result = (sum + compensation) / xs.length;
  if (Number.isFinite(result)) return result;
  // Only reachable with magnitudes near the double limit, where the sum overflows but the mean does not.
  let scaled = 0;
  for (const x of xs) scaled += x / xs.length;
  return scaled;
}
