import { assertProbability } from './errors';

/**
 * Holm's step-down adjusted p-values (GT7: one gate over several suites controls the family-wise error of
 * its regression tests). Holm S (1979), "A simple sequentially rejective multiple test procedure",
 * Scand J Statist 6:65-70. With the m raw p-values sorted ascending, p(1) <= ... <= p(m):
 *   adjusted(i) = min(1, max_{j <= i} (m - j + 1) p(j))
 * returned in the input's order. Rejecting every hypothesis whose adjusted value is <= alpha is exactly
 * Holm's procedure at level alpha, so one number per test carries the decision and can be reported.
 * Identical to R's `p.adjust(p, "holm")`: `pmin(1, cummax((m - i + 1) * p[o]))[order(o)]`.
 *
 * The running maximum makes the adjusted values monotone in the raw ones; ties get equal adjusted values
 * whatever their order, because the larger multiplier comes first. Never below the raw value, since the
 * multiplier is at least 1. An empty list gives an empty list. Each p must be a number in [0, 1]: NaN
 * throws `NOT_FINITE`, anything outside the range `INVALID_PROBABILITY`. R would pass an NA through; a
 * missing p-value here is a caller bug, not data.
 */
export function holm(pValues: readonly number[]): number[] {
  pValues.forEach((p, i) => assertProbability(p, `pValues[${i}]`));
  const m = pValues.length;
  // Ascending by p, ties by position, like R's stable order(); Array.prototype.sort is stable (ES2019).
  const order = pValues.map((_, i) => i).sort((i, j) => (pValues[i] as number) - (pValues[j] as number) || i - j);
  const adjusted = new Array<number>(m);
  let running = 0;
  order.forEach((index, rank) => {
    running = Math.max(running, (m - rank) * (pValues[index] as number));
    adjusted[index] = Math.min(1, running);
  });
  return adjusted;
}
