import fc from 'fast-check';
import { correctedPassRate, type CorrectedPassRateInput } from './corrected-pass-rate';
import { StatsInputError } from './errors';
import { Z_95 } from './normal';
import { roganGladen } from './rogan-gladen';
import { wilson } from './wilson';

/** A count of successes with its denominator, n >= min. */
const counts = (min: number, max: number) =>
  fc.integer({ min, max }).chain((n) => fc.record({ x: fc.integer({ min: 0, max: n }), n: fc.constant(n) }));

/** Judged cases with a possibly fractional x in [0, n] (a judged rate times n). */
const judged = fc
  .integer({ min: 1, max: 5000 })
  .chain((n) =>
    fc.record({ n: fc.constant(n), x: fc.oneof(fc.integer({ min: 0, max: n }), fc.double({ min: 0, max: n, noNaN: true })) }),
  );

const anyInput: fc.Arbitrary<CorrectedPassRateInput> = fc
  .tuple(judged, counts(0, 400), counts(0, 400))
  .map(([j, se, sp]) => ({ x: j.x, n: j.n, se, sp }));

/**
 * The Lang-Reiczigel interval re-derived independently of the implementation: the pseudo-counts are written
 * as "add z^2/2 passes and fails to the judged sample, one of each to each calibration sample", and the
 * variance is the delta method applied numerically, by central differences with Richardson extrapolation, to
 * the Rogan-Gladen function at the adjusted values. So eq. 4 of the paper (including its (1 - P)^2 term) is
 * recomputed, not copied. Nothing is clamped.
 */
function independentBounds(i: CorrectedPassRateInput, z = Z_95): [number, number] {
  type Sample = { passes: number; fails: number };
  const rg = (v: readonly number[]) => (v[0]! + v[2]! - 1) / (v[1]! + v[2]! - 1);
  const rate = (c: Sample) => c.passes / (c.passes + c.fails);
  const binVar = (c: Sample) => (rate(c) * (1 - rate(c))) / (c.passes + c.fails);
  const samples: Sample[] = [
    { passes: i.x + (z * z) / 2, fails: i.n - i.x + (z * z) / 2 },
    { passes: i.se.x + 1, fails: i.se.n - i.se.x + 1 },
    { passes: i.sp.x + 1, fails: i.sp.n - i.sp.x + 1 },
  ];
  const at = samples.map(rate);
  // The step scales with the adjusted Youden index so that it never reaches the pole of the map.
  const h = 1e-3 * (at[1]! + at[2]! - 1);
  const central = (k: number, step: number) => {
    const up = [...at];
    const down = [...at];
    up[k] = at[k]! + step;
    down[k] = at[k]! - step;
    return (rg(up) - rg(down)) / (2 * step);
  };
  let variance = 0;
  for (let k = 0; k < 3; k++) {
    const g = (4 * central(k, h / 2) - central(k, h)) / 3;
    variance += g * g * binVar(samples[k]!);
  }
  const p = rg(at);
  // Eq. 17: the shift of the centre.
  const shift = 2 * z * z * (p * binVar(samples[1]!) - (1 - p) * binVar(samples[2]!));
  return [p + shift - z * Math.sqrt(variance), p + shift + z * Math.sqrt(variance)];
}

const clamp01 = (v: number) => Math.min(1, Math.max(0, v));

describe('correctedPassRate (J9: a judged pass rate corrected for the judge, with an interval)', () => {
  describe('published worked examples: Lang & Reiczigel (2014) Prev Vet Med 113:13-22', () => {
    // The five examples of the paper, with the limits as the paper reports them, from the documented
    // examples of the R package asht (M. P. Fay), man/prevSeSp.Rd ("Example 1 of Lang and Reiczigel, 2014
    // ... 95% CI should be 0.349, 0.372", etc.). Each limit must round to the published digits.
    const examples: ReadonlyArray<{ name: string; input: CorrectedPassRateInput; published: [number, number]; digits: number }> = [
      {
        name: 'Example 1: 4060 of 11284, Se 178/179, Sp 358/359 -> 0.349 to 0.372',
        input: { x: 4060, n: 11284, se: { x: 178, n: 179 }, sp: { x: 358, n: 359 } },
        published: [0.349, 0.372],
        digits: 3,
      },
      {
        name: 'Example 2: 51 of 2971, Se 32/33, Sp 20/20 -> 0 to 0.053',
        input: { x: 51, n: 2971, se: { x: 32, n: 33 }, sp: { x: 20, n: 20 } },
        published: [0, 0.053],
        digits: 3,
      },
      {
        // AP = 0.06 of 11862 is 711.72 apparent positives: the fractional x this function accepts.
        name: 'Example 3: AP 0.06 of 11862, Se 0.80 of 10, Sp 1 of 12 -> 0 to 0.147',
        input: { x: 0.06 * 11862, n: 11862, se: { x: 8, n: 10 }, sp: { x: 12, n: 12 } },
        published: [0, 0.147],
        digits: 3,
      },
      {
        name: 'Example 4 (first test): 259 of 509, Se 84/127, Sp 96/109 -> 0.58 to 0.87',
        input: { x: 259, n: 509, se: { x: 84, n: 127 }, sp: { x: 96, n: 109 } },
        published: [0.58, 0.87],
        digits: 2,
      },
      {
        name: 'Example 4 (second test): 51 of 509, Se 23/41, Sp 187/195 -> 0.037 to 0.195',
        input: { x: 51, n: 509, se: { x: 23, n: 41 }, sp: { x: 187, n: 195 } },
        published: [0.037, 0.195],
        digits: 3,
      },
    ];

    it.each(examples)('$name', ({ input, published, digits }) => {
      const r = correctedPassRate(input);
      expect(r.lower).toBeCloseTo(published[0], digits);
      expect(r.upper).toBeCloseTo(published[1], digits);
      // The point is the plain Rogan-Gladen estimate of the unadjusted rates.
      expect(r.point).toBe(roganGladen(input.x / input.n, input.se.x / input.se.n, input.sp.x / input.sp.n).corrected);
      expect('reason' in r).toBe(false);
    });

    it.each(examples)('$name: full precision equals the independent re-derivation', ({ input }) => {
      const r = correctedPassRate(input);
      const [lo, hi] = independentBounds(input);
      expect(Math.abs(r.lower - clamp01(lo))).toBeLessThan(1e-8);
      expect(Math.abs(r.upper - clamp01(hi))).toBeLessThan(1e-8);
    });

    it('Examples 2 and 3 reach 0 by clamping: the unclamped lower limit is negative', () => {
      expect(independentBounds(examples[1]!.input)[0]).toBeLessThan(0);
      expect(independentBounds(examples[2]!.input)[0]).toBeLessThan(0);
      expect(correctedPassRate(examples[1]!.input).lower).toBe(0);
      expect(correctedPassRate(examples[2]!.input).lower).toBe(0);
    });

    it('Example 3 point: (0.06 + 1 - 1) / (0.8 + 1 - 1) = 0.075 by hand', () => {
      expect(correctedPassRate(examples[2]!.input).point).toBeCloseTo(0.075, 14);
    });
  });

  describe('undefined results', () => {
    it('n = 0, or a calibration set with no human passes or no human fails, is empty', () => {
      const se = { x: 9, n: 10 };
      const sp = { x: 9, n: 10 };
      const empty = { point: null, lower: 0, upper: 1, reason: 'empty' };
      expect(correctedPassRate({ x: 0, n: 0, se, sp })).toStrictEqual(empty);
      expect(correctedPassRate({ x: 3, n: 10, se: { x: 0, n: 0 }, sp })).toStrictEqual(empty);
      expect(correctedPassRate({ x: 3, n: 10, se, sp: { x: 0, n: 0 } })).toStrictEqual(empty);
    });

    it('a chance-level or inverted judge (Se + Sp <= 1) is youden_not_positive, as in roganGladen', () => {
      const none = { point: null, lower: 0, upper: 1, reason: 'youden_not_positive' };
      expect(correctedPassRate({ x: 40, n: 100, se: { x: 5, n: 10 }, sp: { x: 5, n: 10 } })).toStrictEqual(none);
      expect(correctedPassRate({ x: 40, n: 100, se: { x: 2, n: 10 }, sp: { x: 7, n: 10 } })).toStrictEqual(none);
    });

    it('is youden_not_positive when only the adjusted J\' = Se\' + Sp\' - 1 is not positive', () => {
      // Se = 1/10, Sp = 1/1: J = 0.1 > 0, but Se' = 2/12 and Sp' = 2/3 give J' = -1/6.
      expect(roganGladen(0.4, 0.1, 1).corrected).not.toBeNull();
      expect(correctedPassRate({ x: 40, n: 100, se: { x: 1, n: 10 }, sp: { x: 1, n: 1 } })).toStrictEqual({
        point: null,
        lower: 0,
        upper: 1,
        reason: 'youden_not_positive',
      });
    });
  });

  describe('invalid input throws StatsInputError with a stable code', () => {
    const ok = { x: 3, n: 10, se: { x: 9, n: 10 }, sp: { x: 9, n: 10 } };
    const cases: ReadonlyArray<[string, () => unknown, string]> = [
      ['x is NaN', () => correctedPassRate({ ...ok, x: Number.NaN }), 'NOT_FINITE'],
      ['x is negative', () => correctedPassRate({ ...ok, x: -0.5 }), 'NEGATIVE_COUNT'],
      ['x exceeds n', () => correctedPassRate({ ...ok, x: 10.5 }), 'SUCCESSES_EXCEED_N'],
      ['n is fractional', () => correctedPassRate({ ...ok, n: 10.5 }), 'NOT_INTEGER'],
      ['n is negative', () => correctedPassRate({ ...ok, x: 0, n: -1 }), 'NEGATIVE_COUNT'],
      ['se.x is fractional', () => correctedPassRate({ ...ok, se: { x: 8.5, n: 10 } }), 'NOT_INTEGER'],
      ['se.x exceeds se.n', () => correctedPassRate({ ...ok, se: { x: 11, n: 10 } }), 'SUCCESSES_EXCEED_N'],
      ['sp.n is negative', () => correctedPassRate({ ...ok, sp: { x: 0, n: -2 } }), 'NEGATIVE_COUNT'],
      ['sp.x is infinite', () => correctedPassRate({ ...ok, sp: { x: Infinity, n: 10 } }), 'NOT_FINITE'],
      ['z is 0', () => correctedPassRate(ok, { z: 0 }), 'INVALID_OPTION'],
      ['z is NaN', () => correctedPassRate(ok, { z: Number.NaN }), 'INVALID_OPTION'],
      ['z and confidence together', () => correctedPassRate(ok, { z: 2, confidence: 0.95 }), 'INVALID_OPTION'],
      ['confidence is 1', () => correctedPassRate(ok, { confidence: 1 }), 'INVALID_CONFIDENCE'],
    ];
    it.each(cases)('%s', (_name, call, code) => {
      expect(call).toThrow(StatsInputError);
      expect(call).toThrow(expect.objectContaining({ code }));
    });
  });

  describe('the critical value', () => {
    const input = { x: 259, n: 509, se: { x: 84, n: 127 }, sp: { x: 96, n: 109 } };

    it('defaults to Z_95 exactly: same result as z: Z_95 and as confidence: 0.95', () => {
      expect(correctedPassRate(input)).toStrictEqual(correctedPassRate(input, { z: Z_95 }));
      expect(correctedPassRate(input)).toStrictEqual(correctedPassRate(input, { confidence: 0.95 }));
    });

    it('an explicit z is used as given, and a larger z widens the interval', () => {
      const r = correctedPassRate(input, { z: 2.5 });
      const [lo, hi] = independentBounds(input, 2.5);
      expect(r.lower).toBeCloseTo(lo, 8);
      expect(r.upper).toBeCloseTo(hi, 8);
      const r99 = correctedPassRate(input, { confidence: 0.99 });
      const r95 = correctedPassRate(input);
      expect(r99.lower).toBeLessThan(r95.lower);
      expect(r99.upper).toBeGreaterThan(r95.upper);
    });
  });

  describe('the interval always contains the point', () => {
    it('widens to the point when a tiny calibration class moves the adjusted centre past it', () => {
      // The judge got all 3 human passes and all 100 human fails right, so the point is the apparent
      // 980/1000 = 0.98; the pseudo-counts make Se' = 4/5, which moves the paper's interval to about
      // [0.983, 2.07]. Clamped and widened: [0.98, 1].
      const input = { x: 980, n: 1000, se: { x: 3, n: 3 }, sp: { x: 100, n: 100 } };
      const [lo, hi] = independentBounds(input);
      expect(lo).toBeGreaterThan(0.98);
      expect(hi).toBeGreaterThan(1);
      const r = correctedPassRate(input);
      expect(r.point).toBeCloseTo(0.98, 15);
      expect(r.lower).toBe(r.point);
      expect(r.upper).toBe(1);
    });

    it('elsewhere it is exactly the clamped Lang-Reiczigel interval (widening never narrows)', () => {
      fc.assert(
        fc.property(anyInput, (input) => {
          const r = correctedPassRate(input);
          fc.pre(r.point !== null);
          const [lo, hi] = independentBounds(input).map(clamp01) as [number, number];
          expect(r.lower).toBeLessThanOrEqual(lo + 1e-8);
          expect(r.upper).toBeGreaterThanOrEqual(hi - 1e-8);
          if (lo <= r.point! && r.point! <= hi) {
            expect(Math.abs(r.lower - lo)).toBeLessThan(1e-8);
            expect(Math.abs(r.upper - hi)).toBeLessThan(1e-8);
          }
        }),
      );
    });
  });

  describe('properties', () => {
    it('bounds lie in [0, 1], lower <= upper, and the point lies between them; null means the whole range', () => {
      fc.assert(
        fc.property(anyInput, (input) => {
          const r = correctedPassRate(input);
          expect(r.lower).toBeGreaterThanOrEqual(0);
          expect(r.upper).toBeLessThanOrEqual(1);
          expect(r.lower).toBeLessThanOrEqual(r.upper);
          if (r.point === null) {
            expect([r.lower, r.upper]).toEqual([0, 1]);
            expect(['empty', 'youden_not_positive']).toContain(r.reason);
          } else {
            expect(r.lower).toBeLessThanOrEqual(r.point);
            expect(r.upper).toBeGreaterThanOrEqual(r.point);
            expect('reason' in r).toBe(false);
          }
        }),
      );
    });

    it('mirrors when passes and fails swap roles (x -> n - x, Se <-> Sp)', () => {
      fc.assert(
        fc.property(anyInput, (input) => {
          const a = correctedPassRate(input);
          const b = correctedPassRate({ x: input.n - input.x, n: input.n, se: input.sp, sp: input.se });
          expect(b.reason).toBe(a.reason);
          if (a.point === null || b.point === null) return;
          expect(Math.abs(a.point - (1 - b.point))).toBeLessThan(1e-9);
          expect(Math.abs(a.lower - (1 - b.upper))).toBeLessThan(1e-9);
          expect(Math.abs(a.upper - (1 - b.lower))).toBeLessThan(1e-9);
        }),
      );
    });

    it('a perfect judge on a huge calibration set gives the Agresti-Coull interval: Wilson-like, at most ~1.21x as wide', () => {
      const big = 1e9;
      fc.assert(
        fc.property(
          fc.integer({ min: 1, max: 5000 }).chain((n) => fc.tuple(fc.integer({ min: 0, max: n }), fc.constant(n))),
          ([x, n]) => {
            const r = correctedPassRate({ x, n, se: { x: big, n: big }, sp: { x: big, n: big } });
            expect(r.point).toBeCloseTo(x / n, 12);
            // Agresti & Coull (1998): add z^2/2 passes and fails, then the Wald interval.
            const nt = n + Z_95 * Z_95;
            const pt = (x + (Z_95 * Z_95) / 2) / nt;
            const half = Z_95 * Math.sqrt((pt * (1 - pt)) / nt);
            expect(Math.abs(r.lower - clamp01(pt - half))).toBeLessThan(1e-7);
            expect(Math.abs(r.upper - clamp01(pt + half))).toBeLessThan(1e-7);
            // It contains the Wilson interval and is at most (1/2 + 1/sqrt 2) = 1.207x as wide (the ratio at x = 0).
            const w = wilson(x, n);
            expect(r.lower).toBeLessThanOrEqual(w.lower + 1e-7);
            expect(r.upper).toBeGreaterThanOrEqual(w.upper - 1e-7);
            expect(r.upper - r.lower).toBeLessThanOrEqual(1.21 * (w.upper - w.lower));
          },
        ),
      );
    });

    it('a larger calibration set (same Se and Sp, k times the items) narrows the interval', () => {
      // Holds for a judge better than chance in both classes (Se, Sp > 1/2) once each calibration class
      // has a few items and the interval is not clamped; at the extremes the pseudo-counts, which pull
      // Se and Sp towards 1/2, can make it widen slightly (documented in docs/statistics.md).
      const between = (nMin: number, nMax: number, lo: (n: number) => number, hi: (n: number) => number) =>
        fc.integer({ min: nMin, max: nMax }).chain((n) => fc.record({ x: fc.integer({ min: lo(n), max: hi(n) }), n: fc.constant(n) }));
      const better = (min: number) => between(min, 300, (n) => Math.floor(n / 2) + 1, (n) => n);
      fc.assert(
        fc.property(
          between(20, 2000, (n) => Math.ceil(0.2 * n), (n) => Math.floor(0.8 * n)),
          better(3),
          better(3),
          fc.integer({ min: 2, max: 10 }),
          (j, se, sp, k) => {
            const small = correctedPassRate({ ...j, se, sp });
            fc.pre(small.point !== null && small.lower > 0 && small.upper < 1);
            const large = correctedPassRate({ ...j, se: { x: k * se.x, n: k * se.n }, sp: { x: k * sp.x, n: k * sp.n } });
            expect(large.upper - large.lower).toBeLessThanOrEqual(small.upper - small.lower + 1e-12);
          },
        ),
      );
    });

    it('is wider than the interval that treats Se and Sp as known (Wilson bounds mapped through Rogan-Gladen)', () => {
      // Example 1 of the paper: with Se, Sp as exact constants the interval is the Wilson interval of
      // 4060/11284 pushed through the (increasing) Rogan-Gladen map; the calibration uncertainty widens it.
      const input = { x: 4060, n: 11284, se: { x: 178, n: 179 }, sp: { x: 358, n: 359 } };
      const w = wilson(input.x, input.n);
      const map = (p: number) => roganGladen(p, 178 / 179, 358 / 359).corrected!;
      const r = correctedPassRate(input);
      expect(r.upper - r.lower).toBeGreaterThan(map(w.upper) - map(w.lower));
    });
  });
});
