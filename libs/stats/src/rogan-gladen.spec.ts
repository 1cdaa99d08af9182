import fc from 'fast-check';
import { roganGladen } from './rogan-gladen';

const prob = fc.double({ min: 0, max: 1, noNaN: true });

describe('roganGladen (J4: a judged rate corrected for the judge)', () => {
  it('hand-computed: p = 0.3, sens = 0.9, spec = 0.8 gives (0.3 + 0.8 - 1) / (0.9 + 0.8 - 1) = 1/7', () => {
    expect(roganGladen(0.3, 0.9, 0.8).corrected).toBeCloseTo(1 / 7, 14);
  });

  it('hand-computed: a judge passing 62% with sens 0.95, spec 0.7 implies 0.32/0.65 true passes', () => {
    expect(roganGladen(0.62, 0.95, 0.7).corrected).toBeCloseTo(0.32 / 0.65, 14);
  });

  it('clamps to [0, 1] when p is outside what sens/spec allow', () => {
    // (0.1 + 0.8 - 1) / 0.7 = -1/7 and (0.95 + 0.95 - 1) / 0.85 = 1.0588...
    expect(roganGladen(0.1, 0.9, 0.8)).toStrictEqual({ corrected: 0 });
    expect(roganGladen(0.95, 0.9, 0.95)).toStrictEqual({ corrected: 1 });
  });

  it('is null with youden_not_positive for a chance-level or inverted classifier', () => {
    expect(roganGladen(0.4, 0.5, 0.5)).toStrictEqual({ corrected: null, reason: 'youden_not_positive' });
    expect(roganGladen(0.4, 0.3, 0.4)).toStrictEqual({ corrected: null, reason: 'youden_not_positive' });
  });

  it('a perfect classifier needs no correction', () => {
    // (p + 1 - 1) / 1: exact up to the rounding of p + 1.
    fc.assert(fc.property(prob, (p) => expect(roganGladen(p, 1, 1).corrected).toBeCloseTo(p, 15)));
    expect(roganGladen(0.375, 1, 1).corrected).toBe(0.375);
  });

  it('inverts the apparent-rate model p = sens * pi + (1 - spec) * (1 - pi)', () => {
    fc.assert(
      fc.property(prob, fc.double({ min: 0.55, max: 1, noNaN: true }), fc.double({ min: 0.55, max: 1, noNaN: true }), (pi, se, sp) => {
        const apparent = se * pi + (1 - sp) * (1 - pi);
        expect(roganGladen(apparent, se, sp).corrected).toBeCloseTo(pi, 9);
      }),
    );
  });
});
