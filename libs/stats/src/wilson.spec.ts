import fc from 'fast-check';
import { readReference } from '../../../test/support/reference';
import { newcombeDiff } from './newcombe';
import { Z_95, zForConfidence } from './normal';
import { wilson } from './wilson';

const trials = fc.integer({ min: 0, max: 5000 }).chain((n) => fc.tuple(fc.integer({ min: 0, max: n }), fc.constant(n)));
const nonEmptyTrials = fc
  .integer({ min: 1, max: 5000 })
  .chain((n) => fc.tuple(fc.integer({ min: 0, max: n }), fc.constant(n)));

describe('wilson (R2, SC1, GT6)', () => {
  it('R2: n = 0 is the honest "we know nothing" interval, not a point', () => {
    expect(wilson(0, 0)).toStrictEqual({ estimate: null, lower: 0, upper: 1, successes: 0, n: 0, reason: 'empty' });
  });

  it('reports the estimate with its denominator and no reason when defined', () => {
    const w = wilson(3, 4);
    expect(w.estimate).toBe(0.75);
    expect(w.successes).toBe(3);
    expect(w.n).toBe(4);
    expect('reason' in w).toBe(false);
  });

  it('is exactly 0 at 0/n and exactly 1 at n/n', () => {
    expect(wilson(0, 7).lower).toBe(0);
    expect(wilson(7, 7).upper).toBe(1);
    expect(wilson(0, 7).upper).toBeGreaterThan(0);
    expect(wilson(7, 7).lower).toBeLessThan(1);
  });

  it('matches a hand computation for 1/2 (centre 1/2, half-width z/(2 sqrt(n + z^2)))', () => {
    const n = 2;
    const half = Z_95 / (2 * Math.sqrt(n + Z_95 * Z_95));
    const w = wilson(1, n);
    expect(w.lower).toBeCloseTo(0.5 - half, 14);
    expect(w.upper).toBeCloseTo(0.5 + half, 14);
  });

  it('contains the estimate and lies in [0, 1]', () => {
    fc.assert(
      fc.property(trials, ([x, n]) => {
        const w = wilson(x, n);
        expect(w.lower).toBeGreaterThanOrEqual(0);
        expect(w.upper).toBeLessThanOrEqual(1);
        expect(w.lower).toBeLessThanOrEqual(w.upper);
        if (w.estimate !== null) {
          expect(w.lower).toBeLessThanOrEqual(w.estimate);
          expect(w.upper).toBeGreaterThanOrEqual(w.estimate);
        }
      }),
    );
  });

  it('lower and upper bounds are monotone non-decreasing in successes', () => {
    fc.assert(
      fc.property(nonEmptyTrials, ([x, n]) => {
        fc.pre(x < n);
        const a = wilson(x, n);
        const b = wilson(x + 1, n);
        expect(b.lower).toBeGreaterThanOrEqual(a.lower);
        expect(b.upper).toBeGreaterThanOrEqual(a.upper);
      }),
    );
  });

  it('is symmetric: wilson(x, n) mirrors wilson(n - x, n)', () => {
    fc.assert(
      fc.property(nonEmptyTrials, ([x, n]) => {
        const a = wilson(x, n);
        const b = wilson(n - x, n);
        expect(Math.abs(a.lower - (1 - b.upper))).toBeLessThan(1e-12);
        expect(Math.abs(a.upper - (1 - b.lower))).toBeLessThan(1e-12);
      }),
    );
  });

  it('each interior bound solves the score equation |p_hat - p| = z sqrt(p (1 - p) / n)', () => {
    fc.assert(
      fc.property(nonEmptyTrials, ([x, n]) => {
        fc.pre(x > 0 && x < n);
        const w = wilson(x, n);
        const pHat = x / n;
        for (const p of [w.lower, w.upper]) {
          const distance = Math.abs(pHat - p);
          const allowed = Z_95 * Math.sqrt((p * (1 - p)) / n);
          expect(Math.abs(distance - allowed)).toBeLessThanOrEqual(1e-9 * allowed);
        }
      }),
    );
  });

  it('a higher confidence level gives a wider interval', () => {
    fc.assert(
      fc.property(nonEmptyTrials, ([x, n]) => {
        const w95 = wilson(x, n);
        const w99 = wilson(x, n, { confidence: 0.99 });
        expect(w99.lower).toBeLessThanOrEqual(w95.lower);
        expect(w99.upper).toBeGreaterThanOrEqual(w95.upper);
        if (x > 0) expect(w99.lower).toBeLessThan(w95.lower);
      }),
    );
  });
});

describe('z = 1.959963984540054, not 1.96 (R2, G1)', () => {
  // 2 * Phi(1.96) - 1: the confidence level at which the exact quantile is 1.96.
  const confidenceOf196 = 0.950004209703559;
  const round4 = (v: number) => Math.round(v * 1e4) / 1e4;

  type IntervalEntry = { statistic: string; inputs: Record<string, number>; expected: [number, number]; source: string };
  const entries = readReference<IntervalEntry[]>('stats-reference.json').filter((e) => e.statistic === 'newcombe10_diff_95' || e.statistic === 'wilson_95');

  function bounds(e: IntervalEntry, confidence: number): [number, number] {
    const i = e.inputs;
    const r =
      e.statistic === 'wilson_95'
        ? wilson(i['x'] as number, i['n'] as number, { confidence })
        : newcombeDiff(i['x1'] as number, i['n1'] as number, i['x2'] as number, i['n2'] as number, { confidence });
    return [r.lower, r.upper];
  }

  it('the 1.96 shortcut is a different critical value', () => {
    expect(Math.abs(zForConfidence(confidenceOf196) - 1.96)).toBeLessThan(1e-12);
    expect(Z_95).not.toBe(1.96);
  });

  it('the exact z reproduces every published 4-decimal Wilson and Newcombe bound', () => {
    expect(entries.length).toBeGreaterThan(0);
    for (const e of entries) {
      expect(bounds(e, 0.95).map(round4)).toEqual(e.expected);
    }
  });

  it('1.96 changes a published value in the 4th decimal (Newcombe 1998 Table II example (c), upper 0.8062)', () => {
    const changed = entries.filter((e) => {
      const [lo, hi] = bounds(e, confidenceOf196).map(round4) as [number, number];
      return lo !== e.expected[0] || hi !== e.expected[1];
    });
    expect(changed.map((e) => e.source)).toContainEqual(expect.stringContaining('example (c)'));
    const c = newcombeDiff(6, 7, 2, 7);
    const c196 = newcombeDiff(6, 7, 2, 7, { confidence: confidenceOf196 });
    expect(round4(c.upper)).toBe(0.8062);
    expect(round4(c196.upper)).toBe(0.8063);
  });
});
