import fc from 'fast-check';
import { confusion, sensitivity, specificity } from './confusion';
import { cohenKappa } from './kappa';
import { wilson } from './wilson';

describe('confusion, sensitivity, specificity (J4, GT6)', () => {
  const reference = [true, true, true, false, false, false, true, false];
  const predicted = [true, false, true, false, true, false, true, false];

  it('J4: counts with the human label as reference and pass as the positive class', () => {
    const c = confusion({ reference, predicted });
    expect([c.tp, c.fn, c.fp, c.tn, c.n]).toEqual([3, 1, 1, 3, 8]);
    expect(c.sensitivity).toMatchObject({ value: 0.75, numerator: 3, denominator: 4 });
    expect(c.specificity).toMatchObject({ value: 0.75, numerator: 3, denominator: 4 });
    expect(c.agreement).toMatchObject({ value: 0.75, numerator: 6, denominator: 8 });
  });

  it('swapping judge and human swaps false positives and false negatives', () => {
    const c = confusion({ reference: [true, true, false], predicted: [true, false, false] });
    const s = confusion({ reference: [true, false, false], predicted: [true, true, false] });
    expect([c.fp, c.fn]).toEqual([0, 1]);
    expect([s.fp, s.fn]).toEqual([1, 0]);
  });

  it('GT6: every rate carries its Wilson interval, flat and as an object', () => {
    const c = confusion({ reference, predicted });
    expect(c.sensitivity.interval).toStrictEqual(wilson(3, 4));
    expect(c.sensitivity.lower).toBe(wilson(3, 4).lower);
    expect(c.sensitivity.upper).toBe(wilson(3, 4).upper);
    expect(c.agreement.interval).toStrictEqual(wilson(6, 8));
  });

  it('counts and labels give the same result', () => {
    expect(confusion({ tp: 3, fp: 1, tn: 3, fn: 1 })).toStrictEqual(confusion({ reference, predicted }));
  });

  it('a zero denominator is null with reason empty and the whole [0, 1] range (J4: one-class sets)', () => {
    const allPass = confusion({ reference: [true, true, true], predicted: [true, false, true] });
    expect(allPass.specificity).toMatchObject({ value: null, numerator: 0, denominator: 0, lower: 0, upper: 1, reason: 'empty' });
    expect(allPass.sensitivity.value).toBeCloseTo(2 / 3, 15);
    expect(allPass.sensitivity.reason).toBeUndefined();
    const none = confusion({ reference: [], predicted: [] });
    expect(none.n).toBe(0);
    expect(none.agreement.value).toBeNull();
  });

  it('sensitivity(tp, fn) and specificity(tn, fp) return value, numerator, denominator, lower, upper', () => {
    const w = wilson(231, 258);
    expect(sensitivity(231, 27)).toStrictEqual({ value: 231 / 258, numerator: 231, denominator: 258, lower: w.lower, upper: w.upper });
    const v = wilson(54, 86);
    expect(specificity(54, 32)).toStrictEqual({ value: 54 / 86, numerator: 54, denominator: 86, lower: v.lower, upper: v.upper });
    expect(sensitivity(0, 0)).toStrictEqual({ value: null, numerator: 0, denominator: 0, lower: 0, upper: 1, reason: 'empty' });
  });

  it('agreement equals kappa observed agreement, and kappa from the 2 x 2 counts is consistent', () => {
    const pairs = fc.array(fc.tuple(fc.boolean(), fc.boolean()), { minLength: 1, maxLength: 80 });
    fc.assert(
      fc.property(pairs, (ps) => {
        const c = confusion({ reference: ps.map((p) => p[0]), predicted: ps.map((p) => p[1]) });
        expect(c.tp + c.fp + c.tn + c.fn).toBe(ps.length);
        const k = cohenKappa([
          [c.tp, c.fn],
          [c.fp, c.tn],
        ]);
        expect(k.observed).toBeCloseTo(c.agreement.value as number, 15);
      }),
    );
  });
});
