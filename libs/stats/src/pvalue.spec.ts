import { newcombeDiff } from './newcombe';
import { normalQuantile, normalUpperTail, Z_95 } from './normal';
import { pairedDiff } from './paired';
import { newcombeDiffPValue, pairedDiffPValue } from './pvalue';

/**
 * The p-values the gate adjusts by Holm (GT7). The reference values below were computed another way: in
 * Python, with the intervals re-implemented from Newcombe's formulas, the crossing found by
 * scipy.optimize.brentq (xtol 1e-15) and the tail by scipy.stats.norm.sf (scipy 1.17.1) - a root finder and
 * a normal tail that share no code with these.
 */
describe('normalUpperTail', () => {
  it('matches scipy.stats.norm.sf and inverts normalQuantile (AS 241, independent code)', () => {
    const sf: Array<[number, number]> = [
      [0, 0.5],
      [0.5, 0.3085375387259869],
      [Z_95, 0.025],
      [3, 0.0013498980316300933],
      [7.5, 3.1908916729108844e-14],
      [10, 7.61985302416047e-24],
    ];
    // Relative error below 1e-13 up to z = 3; the continued fraction beyond 7.07 is good to about 1e-8 relative.
    for (const [z, q] of sf) expect(Math.abs(normalUpperTail(z) - q) / q).toBeLessThan(z <= 3 ? 1e-13 : 1e-7);
    for (const p of [0.001, 0.01, 0.025, 0.2, 0.5, 0.8, 0.975, 0.999]) expect(normalUpperTail(normalQuantile(1 - p))).toBeCloseTo(p, 14);
    expect(normalUpperTail(-1) + normalUpperTail(1)).toBeCloseTo(1, 15);
    expect(normalUpperTail(38)).toBe(0);
    expect(() => normalUpperTail(Number.NaN)).toThrow(/NaN/);
  });
});

describe('newcombeDiffPValue / pairedDiffPValue (GT7)', () => {
  it('p < 0.05 exactly when the 95% interval excludes zero, on every table of a grid', () => {
    let checked = 0;
    for (const n of [5, 12, 30]) {
      for (let x1 = 0; x1 <= n; x1++) {
        for (let x2 = 0; x2 <= n; x2 += 1) {
          const p = newcombeDiffPValue(x1, n, x2, n + 3).p!;
          expect([x1, x2, n, p < 0.05]).toEqual([x1, x2, n, newcombeDiff(x1, n, x2, n + 3).excludesZero]);
          checked++;
        }
      }
    }
    for (let a = 0; a <= 6; a++) {
      for (let b = 0; b <= 6; b++) {
        for (let c = 0; c <= 9; c++) {
          for (const d of [0, 2, 7]) {
            if (a + b + c + d === 0) continue;
            const p = pairedDiffPValue({ a, b, c, d }).p!;
            expect([a, b, c, d, p < 0.05]).toEqual([a, b, c, d, pairedDiff({ a, b, c, d }).excludesZero]);
            checked++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(1000);
  });

  it('the interval at the crossing z* has zero as its bound, and at the p-value\'s own confidence too', () => {
    const r = newcombeDiffPValue(40, 50, 48, 50);
    expect(Math.abs(newcombeDiff(40, 50, 48, 50, { z: r.z! }).upper)).toBeLessThan(1e-12);
    expect(Math.abs(newcombeDiff(40, 50, 48, 50, { confidence: 1 - r.p! }).upper)).toBeLessThan(1e-9);
    const q = pairedDiffPValue({ a: 40, b: 1, c: 8, d: 1 });
    expect(Math.abs(pairedDiff({ a: 40, b: 1, c: 8, d: 1 }, { z: q.z! }).upper)).toBeLessThan(1e-12);
  });

  it('matches values computed another way (scipy brentq + norm.sf)', () => {
    expect(newcombeDiffPValue(40, 50, 48, 50).p).toBeCloseTo(0.01757317205186278, 12);
    expect(pairedDiffPValue({ a: 40, b: 1, c: 8, d: 1 }).p).toBeCloseTo(0.028111325902342162, 12);
    // ratesci's and Fagerland et al.'s (1, 1, 7, 12): 95% interval -0.507 to -0.026 (statistics.md), so p < 0.05.
    expect(pairedDiffPValue({ a: 1, b: 1, c: 7, d: 12 }).p).toBeCloseTo(0.03179890603417741, 12);
  });

  it('a documented closed form: 0/n against n/n crosses zero at z*^2 = n / (sqrt 2 - 1)', () => {
    // diff = -1; the Wilson bounds at 0/n and n/n are z^2/(n+z^2) from the ends, so the upper limit is
    // -1 + sqrt(2) z^2/(n + z^2), zero at z^2 = n / (sqrt(2) - 1). n = 1: z* = 1.5537739740300376 and
    // p = 2 Q(z*) = 0.12023834065689731 (scipy).
    for (const n of [1, 4, 9]) {
      const zStar = Math.sqrt(n / (Math.SQRT2 - 1));
      const r = newcombeDiffPValue(0, n, n, n);
      expect(r.z).toBeCloseTo(zStar, 12);
      expect(normalQuantile(1 - r.p! / 2)).toBeCloseTo(zStar, 9);
    }
    expect(newcombeDiffPValue(0, 1, 1, 1).p).toBeCloseTo(0.12023834065689731, 13);
  });

  it('is monotone in the effect: more failures in the run, smaller p (a drop); mirrored for a rise', () => {
    let last = 1.0000001;
    for (let x = 48; x >= 0; x--) {
      const p = newcombeDiffPValue(x, 50, 48, 50).p!;
      expect(p).toBeLessThanOrEqual(last);
      last = p;
    }
    last = 1.0000001;
    for (let c = 0; c <= 20; c++) {
      const p = pairedDiffPValue({ a: 30, b: 0, c, d: 5 }).p!;
      expect(p).toBeLessThanOrEqual(last);
      last = p;
    }
    expect(newcombeDiffPValue(40, 50, 48, 50).p).toBeCloseTo(newcombeDiffPValue(48, 50, 40, 50).p!, 12);
  });

  it('edge cases: no difference gives 1, an empty sample null, an overwhelming one about 0', () => {
    expect(newcombeDiffPValue(7, 10, 14, 20)).toEqual({ p: 1, z: null });
    expect(pairedDiffPValue({ a: 5, b: 2, c: 2, d: 1 })).toEqual({ p: 1, z: null });
    expect(newcombeDiffPValue(0, 0, 3, 5)).toEqual({ p: null, z: null, reason: 'empty' });
    expect(pairedDiffPValue({ a: 0, b: 0, c: 0, d: 0 })).toEqual({ p: null, z: null, reason: 'empty' });
    expect(newcombeDiffPValue(0, 100000, 100000, 100000).p).toBeLessThan(1e-300);
  });
});
