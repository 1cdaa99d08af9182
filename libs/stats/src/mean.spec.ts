import fc from 'fast-check';
import { mean } from './mean';

describe('mean (R2 score, SC1 mean score)', () => {
  it('is null for no values, not 0', () => {
    expect(mean([])).toBeNull();
  });

  it('matches hand computations', () => {
    expect(mean([1, 2, 3, 4])).toBe(2.5);
    expect(mean([0, 1, 1, 0, 1])).toBe(0.6);
  });

  it('compensated summation: ten scores of 0.1 average to exactly 0.1', () => {
    expect(mean(new Array(10).fill(0.1))).toBe(0.1);
    expect(mean([1e16, 1, -1e16])).toBe(1 / 3);
  });

  it('does not overflow near the double limit', () => {
    expect(mean([1.5e308, 1.5e308])).toBe(1.5e308);
  });

  it('lies between the minimum and maximum', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 100 }), (xs) => {
        const m = mean(xs) as number;
        expect(m).toBeGreaterThanOrEqual(Math.min(...xs));
        expect(m).toBeLessThanOrEqual(Math.max(...xs));
      }),
    );
  });
});
