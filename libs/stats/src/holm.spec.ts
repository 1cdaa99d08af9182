import fc from 'fast-check';
import { StatsInputError } from './errors';
import { holm } from './holm';
import * as stats from './index';

/**
 * Published Holm adjustments. statsmodels' stats/tests/test_multi.py checks `multipletests(method="h")`
 * against R's multtest package (mt.rawp2adjp, column "Holm"), which gives the same values as R's
 * p.adjust(p, "holm"); the three cases below are that file's res_multtest1, res_multtest2 and
 * res_multtest3, raw p-values and their Holm column as printed there.
 */
describe('holm (GT7)', () => {
  it('R multtest via statsmodels res_multtest1: ten p-values in their original, unsorted order', () => {
    const raw = [
      0.838541367553, 0.642193923795, 0.680845947633, 0.967833824309, 0.71626938238, 0.177096952723, 5.23656777208e-5,
      0.0202732688798, 0.00028140506198, 0.0149877310796,
    ];
    // The Holm column of res_multtest1 lists the sorted p-values' adjustments: 5.2365677720800005e-04,
    // 2.5326455578199999e-03, 1.1990184863680001e-01, 1.4191288215860001e-01, then 1 six times. Mapped back
    // to the input order:
    const expected = [1, 1, 1, 1, 1, 1, 5.2365677720800005e-4, 1.4191288215860001e-1, 2.5326455578199999e-3, 1.1990184863680001e-1];
    const adjusted = holm(raw);
    expect(adjusted).toHaveLength(raw.length);
    adjusted.forEach((v, i) => expect(Math.abs(v - (expected[i] as number))).toBeLessThanOrEqual(1e-15 * Math.max(1, expected[i] as number)));
  });

  it('R multtest via statsmodels res_multtest2: 0.002, ..., 0.012 -> 0.012, 0.02, 0.024, 0.024, 0.024, 0.024', () => {
    // 0.01 * 2 = 0.02 < 0.024: the running maximum carries the earlier 0.024 forward (step-down monotonicity).
    const adjusted = holm([0.002, 0.004, 0.006, 0.008, 0.01, 0.012]);
    [0.012, 0.02, 0.024, 0.024, 0.024, 0.024].forEach((e, i) => expect(adjusted[i]).toBeCloseTo(e, 15));
  });

  it('R multtest via statsmodels res_multtest3: a gap between small and large p-values', () => {
    const adjusted = holm([0.001, 0.002, 0.003, 0.004, 0.005, 0.05, 0.06, 0.07, 0.08, 0.09]);
    [0.01, 0.018, 0.024, 0.028, 0.03, 0.25, 0.25, 0.25, 0.25, 0.25].forEach((e, i) => expect(adjusted[i]).toBeCloseTo(e, 15));
  });

  it('edge cases: empty, one p-value (unchanged), ties (equal adjusted values), zeros and ones', () => {
    expect(holm([])).toEqual([]);
    expect(holm([0.03])).toEqual([0.03]);
    expect(holm([0.02, 0.02, 0.5])).toEqual([0.06, 0.06, 0.5]);
    expect(holm([0, 1, 0])).toEqual([0, 1, 0]);
  });

  it('invalid p throws StatsInputError: NaN is NOT_FINITE, outside [0, 1] is INVALID_PROBABILITY', () => {
    const code = (p: number[]) => {
      try {
        holm(p);
      } catch (e) {
        return e instanceof StatsInputError ? e.code : 'other';
      }
      return 'no error';
    };
    expect(code([0.1, Number.NaN])).toBe('NOT_FINITE');
    expect(code([1.5])).toBe('INVALID_PROBABILITY');
    expect(code([-0.01, 0.2])).toBe('INVALID_PROBABILITY');
    expect(code([Number.POSITIVE_INFINITY])).toBe('NOT_FINITE');
  });

  it('does not modify its input and is exported from the package index', () => {
    const raw = [0.04, 0.01, 0.03];
    holm(raw);
    expect(raw).toEqual([0.04, 0.01, 0.03]);
    expect(stats.holm).toBe(holm);
  });

  describe('properties', () => {
    const pValues = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 40 });

    it('never below the raw value, never above 1, and monotone in the raw order', () => {
      fc.assert(
        fc.property(pValues, (raw) => {
          const adjusted = holm(raw);
          raw.forEach((p, i) => {
            expect(adjusted[i]).toBeGreaterThanOrEqual(p);
            expect(adjusted[i]).toBeLessThanOrEqual(1);
            raw.forEach((q, j) => {
              if (p <= q) expect(adjusted[i]).toBeLessThanOrEqual(adjusted[j] as number);
            });
          });
        }),
      );
    });

    it('equals the definition min(1, max_{j <= i} (m - j + 1) p(j)) and follows any permutation of the input', () => {
      fc.assert(
        fc.property(pValues, fc.integer({ min: 0, max: 1000 }), (raw, shift) => {
          const m = raw.length;
          const adjusted = holm(raw);
          raw.forEach((p, i) => {
            // Brute force: every p(j) <= p(i) in sorted position j contributes (m - j) p(j), 0-based.
            const sorted = [...raw].sort((x, y) => x - y);
            const rank = sorted.lastIndexOf(p);
            let best = 0;
            for (let j = 0; j <= rank; j++) best = Math.max(best, (m - j) * (sorted[j] as number));
            expect(adjusted[i]).toBe(Math.min(1, best));
          });
          const rotated = raw.map((_, i) => raw[(i + shift) % m] as number);
          const rotatedAdjusted = holm(rotated);
          rotated.forEach((_, i) => expect(rotatedAdjusted[i]).toBe(adjusted[(i + shift) % m]));
        }),
      );
    });
  });
});
