import fc from 'fast-check';
import { pearson, pointBiserial } from './correlation';

const finite = fc.double({ noNaN: true, noDefaultInfinity: true });
const pairsOf = (arb: fc.Arbitrary<number>) => fc.array(fc.tuple(arb, arb), { minLength: 0, maxLength: 40 });

describe('pearson and pointBiserial (J4 verbosity bias)', () => {
  it('matches a hand computation', () => {
    // x = 1, 2, 3; y = 1, 3, 2: dx = -1, 0, 1; dy = -1, 1, 0; sxy = 1, sxx = 2, syy = 2; r = 1/2.
    const r = pearson([1, 2, 3], [1, 3, 2]);
    expect(r.r).toBeCloseTo(0.5, 15);
    expect(r.n).toBe(3);
    expect(pearson([1, 2, 3], [6, 4, 2]).r).toBe(-1);
  });

  it('is null with constant_input when a series has no variance, even if its mean rounds', () => {
    // 0.1 * 3 / 3 != 0.1 in doubles: a rounded variance would not be exactly 0 here.
    expect(pearson([0.1, 0.1, 0.1], [1, 2, 3])).toStrictEqual({ r: null, n: 3, reason: 'constant_input' });
    expect(pearson([1, 2, 3], [7, 7, 7])).toStrictEqual({ r: null, n: 3, reason: 'constant_input' });
  });

  it('is null with empty for n = 0 and insufficient_data for n = 1', () => {
    expect(pearson([], [])).toStrictEqual({ r: null, n: 0, reason: 'empty' });
    expect(pearson([1], [2])).toStrictEqual({ r: null, n: 1, reason: 'insufficient_data' });
  });

  it('is stable far from the origin, where the one-pass formula cancels catastrophically', () => {
    const xs = [1, 2, 3, 4].map((v) => 1e9 + v);
    const ys = [2, 4, 7, 8].map((v) => 1e9 + v);
    expect(pearson(xs, ys).r).toBeCloseTo(pearson([1, 2, 3, 4], [2, 4, 7, 8]).r as number, 12);
  });

  it('does not overflow or underflow at the ends of the double range', () => {
    expect(pearson([1e300, 2e300, 3e300], [1e-300, 2e-300, 3e-300]).r).toBeCloseTo(1, 14);
    expect(pearson([-1.7e308, 1.7e308], [5e-324, 0]).r).toBeCloseTo(-1, 14);
    expect(pearson([0, 5e-324], [0, -Number.MAX_VALUE]).r).toBeCloseTo(-1, 14);
  });

  it('is symmetric and lies in [-1, 1] for any finite input', () => {
    fc.assert(
      fc.property(pairsOf(finite), (ps) => {
        const xs = ps.map((p) => p[0]);
        const ys = ps.map((p) => p[1]);
        const a = pearson(xs, ys);
        expect(pearson(ys, xs)).toStrictEqual(a);
        if (a.r !== null) {
          expect(Number.isFinite(a.r)).toBe(true);
          expect(Math.abs(a.r)).toBeLessThanOrEqual(1);
        } else {
          expect(a.reason).toEqual(expect.any(String));
        }
      }),
    );
  });

  it('is invariant under positive affine maps and flips sign under negation', () => {
    const small = fc.integer({ min: -1000, max: 1000 });
    fc.assert(
      fc.property(pairsOf(small), fc.integer({ min: 1, max: 50 }), small, (ps, a, b) => {
        const xs = ps.map((p) => p[0]);
        const ys = ps.map((p) => p[1]);
        const r = pearson(xs, ys).r;
        fc.pre(r !== null);
        expect(pearson(xs.map((x) => a * x + b), ys).r).toBeCloseTo(r as number, 12);
        expect(pearson(xs.map((x) => -x), ys).r).toBeCloseTo(-(r as number), 12);
        expect(pearson(xs, xs).r).toBeCloseTo(1, 14);
      }),
    );
  });

  it('pointBiserial is Pearson with the dichotomy coded 0/1, exactly', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), finite), { maxLength: 40 }), (ps) => {
        const binary = ps.map((p) => p[0]);
        const continuous = ps.map((p) => p[1]);
        const coded = binary.map((b) => (b ? 1 : 0));
        expect(pointBiserial(binary, continuous)).toStrictEqual(pearson(coded, continuous));
        expect(pointBiserial(coded, continuous)).toStrictEqual(pearson(coded, continuous));
      }),
    );
  });

  it('pointBiserial matches the closed form (M1 - M0) / s_n * sqrt(p q)', () => {
    const binary = [true, false, true, true, false, false, true];
    const lengths = [120, 80, 300, 95, 60, 110, 250];
    const ones = lengths.filter((_, i) => binary[i]);
    const zeros = lengths.filter((_, i) => !binary[i]);
    const avg = (v: number[]) => v.reduce((s, x) => s + x, 0) / v.length;
    const m = avg(lengths);
    const sn = Math.sqrt(avg(lengths.map((x) => (x - m) ** 2)));
    const p = ones.length / lengths.length;
    const expected = ((avg(ones) - avg(zeros)) / sn) * Math.sqrt(p * (1 - p));
    expect(pointBiserial(binary, lengths).r).toBeCloseTo(expected, 13);
  });

  it('a constant verdict (all pass) is constant_input', () => {
    expect(pointBiserial([true, true, true], [1, 2, 3])).toStrictEqual({ r: null, n: 3, reason: 'constant_input' });
  });
});
