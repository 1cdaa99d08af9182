import fc from 'fast-check';
import { DEFAULT_CONFIDENCE, Z_95, normalQuantile, zForConfidence } from './normal';

describe('normal quantile (GT6: every interval is a 95% interval unless asked otherwise)', () => {
  it('Z_95 is the double-precision Phi^-1(0.975), not 1.96', () => {
    expect(Z_95).toBe(1.959963984540054);
    expect(DEFAULT_CONFIDENCE).toBe(0.95);
  });

  it('AS241 gives Phi^-1(0.975) = 1.959963984540054 within 1e-12', () => {
    expect(Math.abs(normalQuantile(0.975) - 1.959963984540054)).toBeLessThan(1e-12);
  });

  it('zForConfidence(0.95) is exactly Z_95; other levels go through the inverse CDF', () => {
    expect(zForConfidence()).toBe(Z_95);
    expect(zForConfidence(0.95)).toBe(Z_95);
    // Values of scipy.stats.norm.ppf, to double precision.
    expect(Math.abs(zForConfidence(0.99) - 2.5758293035489004)).toBeLessThan(1e-12);
    expect(Math.abs(zForConfidence(0.8) - 1.2815515655446004)).toBeLessThan(1e-12);
    expect(Math.abs(zForConfidence(0.9) - 1.6448536269514722)).toBeLessThan(1e-12);
  });

  it('is accurate in the centre and in both tail regions of AS241', () => {
    expect(normalQuantile(0.5)).toBe(0);
    expect(Math.abs(normalQuantile(0.8413447460685429) - 1)).toBeLessThan(1e-12); // Phi(1)
    expect(Math.abs(normalQuantile(1e-10) - -6.361340902404056)).toBeLessThan(1e-12); // r <= 5 branch
    expect(Math.abs(normalQuantile(1e-300) - -37.0470962993612) / 37.0470962993612).toBeLessThan(1e-14); // r > 5
  });

  it('is odd around 1/2 and strictly increasing', () => {
    fc.assert(
      // Dyadic p = k / 2^40, so that 1 - p is exact and only the quantile itself is under test.
      fc.property(fc.integer({ min: 1, max: 2 ** 39 }), (k) => {
        const p = k / 2 ** 40;
        expect(Math.abs(normalQuantile(p) + normalQuantile(1 - p))).toBeLessThan(1e-12 * Math.max(1, Math.abs(normalQuantile(p))));
      }),
    );
    fc.assert(
      fc.property(
        fc.double({ min: 1e-9, max: 1 - 1e-9, noNaN: true }),
        fc.double({ min: 1e-9, max: 1 - 1e-9, noNaN: true }),
        (a, b) => {
          fc.pre(a < b);
          expect(normalQuantile(a)).toBeLessThanOrEqual(normalQuantile(b));
        },
      ),
    );
  });
});
