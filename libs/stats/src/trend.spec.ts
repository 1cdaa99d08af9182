import fc from 'fast-check';
import { TREND_FLAT_EPSILON, leastSquaresTrend } from './trend';

describe('leastSquaresTrend (SC1)', () => {
  it('SC1: a steady rise of 0.1 per run is improving with slope 0.1 and intercept 0.5', () => {
    const t = leastSquaresTrend([0.5, 0.6, 0.7, 0.8]);
    expect(t.slope).toBeCloseTo(0.1, 14);
    expect(t.intercept).toBeCloseTo(0.5, 14);
    expect(t).toMatchObject({ n: 4, direction: 'improving' });
  });

  it('SC1: hand-computed decline', () => {
    // mean x = 1.5, mean y = 0.8125; dx = -1.5, -0.5, 0.5, 1.5; dy = 0.0875, -0.0125, 0.0375, -0.1125
    // sxy = -0.275, sxx = 5, slope = -0.055, intercept = 0.8125 + 0.055 * 1.5 = 0.895
    const t = leastSquaresTrend([0.9, 0.8, 0.85, 0.7]);
    expect(t.slope).toBeCloseTo(-0.055, 14);
    expect(t.intercept).toBeCloseTo(0.895, 14);
    expect(t.direction).toBe('declining');
  });

  it('SC1: noise smaller than the flatness epsilon is flat', () => {
    // slope = -0.0005 / 5 = -0.0001
    const t = leastSquaresTrend([0.8, 0.802, 0.798, 0.801]);
    expect(t.slope).toBeCloseTo(-0.0001, 14);
    expect(t.direction).toBe('flat');
  });

  it('the epsilon is 0.005 per run, exclusive: |slope| < epsilon is flat', () => {
    expect(TREND_FLAT_EPSILON).toBe(0.005);
    expect(leastSquaresTrend([0, 0.005]).slope).toBe(0.005);
    expect(leastSquaresTrend([0, 0.005]).direction).toBe('improving');
    expect(leastSquaresTrend([0, 0.004]).direction).toBe('flat');
    expect(leastSquaresTrend([0, 0.004], { flatEpsilon: 0.001 }).direction).toBe('improving');
    expect(leastSquaresTrend([0.5, 0.5, 0.5], { flatEpsilon: 0 }).direction).toBe('flat');
  });

  it('fewer than minPoints runs is insufficient_data with null slope', () => {
    expect(leastSquaresTrend([])).toStrictEqual({ slope: null, intercept: null, n: 0, direction: 'insufficient_data', reason: 'empty' });
    expect(leastSquaresTrend([0.7])).toStrictEqual({
      slope: null,
      intercept: null,
      n: 1,
      direction: 'insufficient_data',
      reason: 'insufficient_data',
    });
    expect(leastSquaresTrend([0.7, 0.9], { minPoints: 3 }).direction).toBe('insufficient_data');
    expect(leastSquaresTrend([0.7, 0.9]).slope).toBeCloseTo(0.2, 14);
  });

  it('shifting all values leaves the slope; reversing the runs negates it', () => {
    const ys = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 2, maxLength: 50 });
    fc.assert(
      fc.property(ys, fc.double({ min: -1, max: 1, noNaN: true }), (values, shift) => {
        const t = leastSquaresTrend(values);
        expect(leastSquaresTrend(values.map((v) => v + shift)).slope).toBeCloseTo(t.slope as number, 12);
        expect(leastSquaresTrend([...values].reverse()).slope).toBeCloseTo(-(t.slope as number), 12);
      }),
    );
  });
});
