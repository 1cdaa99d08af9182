import fc from 'fast-check';
import { newcombeDiff } from './newcombe';
import { wilson } from './wilson';

const sample = fc.integer({ min: 0, max: 3000 }).chain((n) => fc.tuple(fc.integer({ min: 0, max: n }), fc.constant(n)));
const nonEmpty = fc.integer({ min: 1, max: 3000 }).chain((n) => fc.tuple(fc.integer({ min: 0, max: n }), fc.constant(n)));

describe('newcombeDiff, method 10 (G1, G2, G3)', () => {
  it('G1: is built from the two Wilson intervals by the hybrid score formula', () => {
    const [x1, n1, x2, n2] = [56, 70, 48, 80];
    const w1 = wilson(x1, n1);
    const w2 = wilson(x2, n2);
    const p1 = x1 / n1;
    const p2 = x2 / n2;
    const d = newcombeDiff(x1, n1, x2, n2);
    expect(d.diff).toBe(p1 - p2);
    expect(d.lower).toBeCloseTo(p1 - p2 - Math.sqrt((p1 - w1.lower) ** 2 + (w2.upper - p2) ** 2), 15);
    expect(d.upper).toBeCloseTo(p1 - p2 + Math.sqrt((w1.upper - p1) ** 2 + (p2 - w2.lower) ** 2), 15);
    expect(d).toMatchObject({ p1, p2, x1, n1, x2, n2, excludesZero: true });
  });

  it('G2: a difference whose interval contains zero does not exclude zero', () => {
    const d = newcombeDiff(8, 10, 9, 10);
    expect(d.lower).toBeLessThan(0);
    expect(d.upper).toBeGreaterThan(0);
    expect(d.excludesZero).toBe(false);
    expect(newcombeDiff(0, 50, 50, 50).excludesZero).toBe(true);
  });

  it('G3: small suites give wider intervals for the same observed difference', () => {
    const small = newcombeDiff(7, 10, 9, 10);
    const large = newcombeDiff(70, 100, 90, 100);
    expect(small.diff).toBeCloseTo(large.diff as number, 15);
    expect(small.upper - small.lower).toBeGreaterThan(large.upper - large.lower);
    expect(small.excludesZero).toBe(false);
    expect(large.excludesZero).toBe(true);
  });

  it('an empty sample on either side gives diff null, the whole range and never excludes zero', () => {
    expect(newcombeDiff(0, 0, 3, 10)).toStrictEqual({
      diff: null,
      lower: -1,
      upper: 1,
      p1: null,
      p2: 0.3,
      x1: 0,
      n1: 0,
      x2: 3,
      n2: 10,
      excludesZero: false,
      reason: 'empty',
    });
    expect(newcombeDiff(5, 5, 0, 0)).toMatchObject({ diff: null, p1: 1, p2: null, excludesZero: false, reason: 'empty' });
    expect(newcombeDiff(0, 0, 0, 0)).toMatchObject({ diff: null, lower: -1, upper: 1, reason: 'empty' });
  });

  it('swapping the samples mirrors the result exactly', () => {
    fc.assert(
      fc.property(sample, sample, ([x1, n1], [x2, n2]) => {
        const d = newcombeDiff(x1, n1, x2, n2);
        const m = newcombeDiff(x2, n2, x1, n1);
        expect(m.lower === -d.upper).toBe(true);
        expect(m.upper === -d.lower).toBe(true);
        expect(d.diff === null ? m.diff === null : m.diff === -d.diff).toBe(true);
        expect(m.excludesZero).toBe(d.excludesZero);
      }),
    );
  });

  it('contains the difference, lies in [-1, 1], and excludesZero agrees with the bounds', () => {
    fc.assert(
      fc.property(nonEmpty, nonEmpty, ([x1, n1], [x2, n2]) => {
        const d = newcombeDiff(x1, n1, x2, n2);
        expect(d.lower).toBeGreaterThanOrEqual(-1);
        expect(d.upper).toBeLessThanOrEqual(1);
        expect(d.lower).toBeLessThanOrEqual(d.diff as number);
        expect(d.upper).toBeGreaterThanOrEqual(d.diff as number);
        expect(d.excludesZero).toBe(d.lower > 0 || d.upper < 0);
      }),
    );
  });

  it('is never narrower than the wider of the two Wilson half-widths on each side', () => {
    fc.assert(
      fc.property(nonEmpty, nonEmpty, ([x1, n1], [x2, n2]) => {
        const d = newcombeDiff(x1, n1, x2, n2);
        const p1 = x1 / n1;
        const p2 = x2 / n2;
        const w1 = wilson(x1, n1);
        const w2 = wilson(x2, n2);
        if (d.lower > -1) expect((d.diff as number) - d.lower).toBeGreaterThanOrEqual(Math.max(p1 - w1.lower, w2.upper - p2) - 1e-15);
        if (d.upper < 1) expect(d.upper - (d.diff as number)).toBeGreaterThanOrEqual(Math.max(w1.upper - p1, p2 - w2.lower) - 1e-15);
      }),
    );
  });
});
