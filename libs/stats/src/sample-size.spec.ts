import fc from 'fast-check';
import { StatsInputError } from './errors';
import { normalQuantile } from './normal';
import { normalCdf, sampleSizePaired, sampleSizeTwoProportions } from './sample-size';
import * as stats from './index';

/** p with 2 asin(sqrt(p)) - 2 asin(sqrt(0.5)) = h, so that a published h can be fed in as proportions. */
const proportionForH = (h: number) => Math.sin((Math.PI / 2 + h) / 2) ** 2;

function thrownCode(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return e instanceof StatsInputError ? e.code : 'not a StatsInputError';
  }
  return 'no error';
}

describe('sampleSizeTwoProportions, pooled_normal (G8): R power.prop.test', () => {
  // R's help page for power.prop.test: "power.prop.test(p1 = .50, p2 = .75, power = .90)  # => n = 76.7".
  // statsmodels' test_power_2indep ("test against R") quotes R's printed n = 76.70692 two-sided and
  // 62.33551 one-sided (alternative = "one.sided"). R solves with uniroot at tol = eps^0.25, about 1e-4, so
  // its last printed digit is not exact; the closed form here gives 76.706928 and 62.335508.
  it('R help example p1 = 0.5, p2 = 0.75, power = 0.9: n = 76.70692 (77 per group)', () => {
    const r = sampleSizeTwoProportions({ p1: 0.5, p2: 0.75, power: 0.9 });
    expect(Math.abs((r.n_exact as number) - 76.70692)).toBeLessThan(1e-5);
    expect(r.n_per_group).toBe(77);
    expect('reason' in r).toBe(false);
  });

  it('the same one-sided: n = 62.33551 (63 per group)', () => {
    const r = sampleSizeTwoProportions({ p1: 0.5, p2: 0.75, power: 0.9, sided: 1 });
    expect(Math.abs((r.n_exact as number) - 62.33551)).toBeLessThan(1e-5);
    expect(r.n_per_group).toBe(63);
  });

  it('Stata example quoted in statsmodels test_power_2indep: p 0.015 vs 0.001 has power 0.7415600 at n = 550', () => {
    // statsmodels asserts its own inverse to atol 0.05; the power is printed to 7 decimals.
    const r = sampleSizeTwoProportions({ p1: 0.001, p2: 0.015, power: 0.74156 });
    expect(Math.abs((r.n_exact as number) - 550)).toBeLessThan(0.05);
  });

  it('solves exactly the power equation of power.prop.test with strict = FALSE', () => {
    // Away from 0 and 1: at p1, p2 in {0, 1} the alternative variance p1 q1 + p2 q2 is 0 and the equation
    // degenerates (any n above z^2 pbar qbar 2 / d^2 has power 1), so there is nothing to check it against.
    fc.assert(
      fc.property(
        fc.double({ min: 0.01, max: 0.99, noNaN: true }),
        fc.double({ min: 0.01, max: 0.99, noNaN: true }),
        fc.double({ min: 0.06, max: 0.99, noNaN: true }),
        fc.constantFrom<1 | 2>(1, 2),
        (p1, p2, power, sided) => {
          fc.pre(Math.abs(p1 - p2) > 1e-3);
          const n = sampleSizeTwoProportions({ p1, p2, power, sided }).n_exact as number;
          const z = normalQuantile(1 - 0.05 / sided);
          const pbar = (p1 + p2) / 2;
          const achieved = normalCdf(
            (Math.sqrt(n) * Math.abs(p1 - p2) - z * Math.sqrt(2 * pbar * (1 - pbar))) / Math.sqrt(p1 * (1 - p1) + p2 * (1 - p2)),
          );
          expect(Math.abs(achieved - power)).toBeLessThan(1e-9);
        },
      ),
    );
  });
});

describe('sampleSizeTwoProportions, arcsine (G8): R pwr.2p.test', () => {
  it('pwr.2p.test(h = 0.3, n = 80) has power 0.475100870572638 (R value in statsmodels test_normal_power_explicit); inverted, n = 80', () => {
    // statsmodels checks NormalIndPower against this R value to 13 decimals and solves it back for n.
    // The closed form 2 ((z_a + z_b) / h)^2 would give 80.012: pwr counts the opposite tail.
    const r = sampleSizeTwoProportions({ p1: proportionForH(0.3), p2: 0.5, power: 0.475100870572638, method: 'arcsine' });
    expect(Math.abs((r.n_exact as number) - 80)).toBeLessThan(1e-6);
  });

  it('pwr vignette: ES.h(0.55, 0.50) at power 0.8 needs 1,565 per group; ES.h(0.10, 0.05) needs 424', () => {
    // pwr vignette, "pwr.2p.test - two-sample test for proportions": "We need to sample 1,565 males and
    // 1,565 females" and "the optimum sample size is now 424 per group".
    expect(sampleSizeTwoProportions({ p1: 0.55, p2: 0.5, method: 'arcsine' }).n_per_group).toBe(1565);
    expect(sampleSizeTwoProportions({ p1: 0.1, p2: 0.05, method: 'arcsine' }).n_per_group).toBe(424);
  });

  it('pwr vignette: a "small" effect h = 0.2 at power 0.8 needs "about 393" per group', () => {
    expect(sampleSizeTwoProportions({ p1: proportionForH(0.2), p2: 0.5, method: 'arcsine' }).n_per_group).toBe(393);
  });

  it('Cohen h for (0.75, 0.5) is pi/6 exactly, and the two-sided solution satisfies the two-tailed power equation', () => {
    const h = 2 * Math.asin(Math.sqrt(0.75)) - 2 * Math.asin(Math.sqrt(0.5));
    expect(h).toBeCloseTo(Math.PI / 6, 15);
    const n = sampleSizeTwoProportions({ p1: 0.5, p2: 0.75, power: 0.9, method: 'arcsine' }).n_exact as number;
    const s = h * Math.sqrt(n / 2);
    const z = normalQuantile(0.975);
    expect(Math.abs(normalCdf(s - z) + normalCdf(-s - z) - 0.9)).toBeLessThan(1e-12);
    // Below the closed form that drops the second tail (76.652967), by the size of that tail's effect.
    expect(n).toBeLessThan(2 * ((z + normalQuantile(0.9)) / h) ** 2);
    expect(n).toBeGreaterThan(2 * ((z + normalQuantile(0.9)) / h) ** 2 - 1e-4);
  });

  it('one-sided is the closed form 2 ((z_{1-alpha} + z_power) / h)^2 (pwr.2p.test alternative = "greater")', () => {
    const h = 2 * Math.asin(Math.sqrt(0.75)) - 2 * Math.asin(Math.sqrt(0.5));
    const n = sampleSizeTwoProportions({ p1: 0.75, p2: 0.5, sided: 1, method: 'arcsine' }).n_exact as number;
    expect(n).toBeCloseTo(2 * ((normalQuantile(0.95) + normalQuantile(0.8)) / h) ** 2, 10);
  });
});

describe('sampleSizePaired (G7, G8): Connor 1987', () => {
  it('pwrss tests (test-proportions.mcnemar.R): p10 0.10, p01 0.20, n 500, approximate two-sided has power 0.98456731', () => {
    // pwrss::power.exact.mcnemar(prob10 = 0.10, prob01 = 0.20, n.paired = 500, method = "approximate")
    // expects power = 0.98456731. The power is given to 8 decimals, which pins n to about 1e-4.
    const r = sampleSizePaired({ p10: 0.1, p01: 0.2, power: 0.98456731 });
    expect(Math.abs((r.n_exact as number) - 500)).toBeLessThan(1e-3);
  });

  it('powerandsamplesize.com, McNemar Z-test 2-sided: p01 0.45, p10 0.05, alpha 0.05, power 0.8 -> 23 pairs', () => {
    // The calculator's R code: "ceiling(n) # 23" (Connor 1987, p. 209).
    const r = sampleSizePaired({ p10: 0.05, p01: 0.45 });
    expect(r.n_pairs).toBe(23);
    expect(r.n_exact as number).toBeCloseTo(22.0113, 4);
  });

  it('powerandsamplesize.com, McNemar Z-test 1-sided: p01 0.45, p10 0.05, alpha 0.05, power 0.9 -> 23 pairs', () => {
    expect(sampleSizePaired({ p10: 0.05, p01: 0.45, sided: 1, power: 0.9 }).n_pairs).toBe(23);
  });

  it('clinicaltrials-tools McNemar calculator (Connor 1987): discordant 0.45, odds ratio 2 -> 155 pairs, 80% power', () => {
    // p10 / p01 = 2 and p10 + p01 = 0.45 -> p10 = 0.30, p01 = 0.15; "Required Sample Size 155".
    expect(sampleSizePaired({ p10: 0.3, p01: 0.15 }).n_pairs).toBe(155);
  });

  it('is symmetric in the direction of the change, and needs fewer pairs the fewer discordant cases there are', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 0.5, noNaN: true }), fc.double({ min: 0, max: 0.5, noNaN: true }), (p10, p01) => {
        fc.pre(Math.abs(p10 - p01) > 1e-3);
        const r = sampleSizePaired({ p10, p01 });
        expect(sampleSizePaired({ p10: p01, p01: p10 }).n_exact).toBe(r.n_exact);
        // Same delta, every discordant pair in one direction (psi = |delta|): the fewest pairs possible.
        const delta = Math.abs(p10 - p01);
        expect(sampleSizePaired({ p10: delta, p01: 0 }).n_exact as number).toBeLessThanOrEqual((r.n_exact as number) * (1 + 1e-12));
      }),
    );
  });
});

describe('shared behaviour', () => {
  it('no difference has no finite sample size: null with reason no_difference', () => {
    expect(sampleSizeTwoProportions({ p1: 0.3, p2: 0.3 })).toStrictEqual({ n_exact: null, n_per_group: null, reason: 'no_difference' });
    expect(sampleSizeTwoProportions({ p1: 0.3, p2: 0.3, method: 'arcsine' })).toStrictEqual({
      n_exact: null,
      n_per_group: null,
      reason: 'no_difference',
    });
    expect(sampleSizePaired({ p10: 0.1, p01: 0.1 })).toStrictEqual({ n_exact: null, n_pairs: null, reason: 'no_difference' });
  });

  it('defaults are alpha 0.05, power 0.8, two-sided, pooled_normal', () => {
    expect(sampleSizeTwoProportions({ p1: 0.6, p2: 0.8 })).toStrictEqual(
      sampleSizeTwoProportions({ p1: 0.6, p2: 0.8, alpha: 0.05, power: 0.8, sided: 2, method: 'pooled_normal' }),
    );
    expect(sampleSizePaired({ p10: 0.1, p01: 0.2 })).toStrictEqual(sampleSizePaired({ p10: 0.1, p01: 0.2, alpha: 0.05, power: 0.8, sided: 2 }));
  });

  it('more power or a smaller alpha needs more cases; swapping p1 and p2 changes nothing; n_per_group = ceil(n_exact)', () => {
    const method = fc.constantFrom<'pooled_normal' | 'arcsine'>('pooled_normal', 'arcsine');
    fc.assert(
      // Strictly inside (0, 1): with p1 and p2 both at an end, the variance under the alternative is 0, the
      // test has power 1 at the n it needs for alpha, and more power costs nothing.
      fc.property(fc.double({ min: 1e-3, max: 1 - 1e-3, noNaN: true }), fc.double({ min: 1e-3, max: 1 - 1e-3, noNaN: true }), method, (p1, p2, m) => {
        fc.pre(Math.abs(p1 - p2) > 1e-3);
        const base = sampleSizeTwoProportions({ p1, p2, method: m });
        const n = base.n_exact as number;
        expect(base.n_per_group).toBe(Math.ceil(n));
        expect(sampleSizeTwoProportions({ p1: p2, p2: p1, method: m }).n_exact as number).toBeCloseTo(n, 8);
        expect(sampleSizeTwoProportions({ p1, p2, method: m, power: 0.9 }).n_exact as number).toBeGreaterThan(n);
        expect(sampleSizeTwoProportions({ p1, p2, method: m, alpha: 0.01 }).n_exact as number).toBeGreaterThan(n);
        expect(sampleSizeTwoProportions({ p1, p2, method: m, sided: 1 }).n_exact as number).toBeLessThan(n);
      }),
    );
  });

  it('invalid input throws StatsInputError with a stable code', () => {
    expect(thrownCode(() => sampleSizeTwoProportions({ p1: 1.2, p2: 0.5 }))).toBe('INVALID_PROBABILITY');
    expect(thrownCode(() => sampleSizeTwoProportions({ p1: Number.NaN, p2: 0.5 }))).toBe('NOT_FINITE');
    expect(thrownCode(() => sampleSizeTwoProportions({ p1: 0.4, p2: 0.5, alpha: 0 }))).toBe('INVALID_OPTION');
    expect(thrownCode(() => sampleSizeTwoProportions({ p1: 0.4, p2: 0.5, alpha: 1 }))).toBe('INVALID_OPTION');
    expect(thrownCode(() => sampleSizeTwoProportions({ p1: 0.4, p2: 0.5, power: 1 }))).toBe('INVALID_OPTION');
    expect(thrownCode(() => sampleSizeTwoProportions({ p1: 0.4, p2: 0.5, power: 0.05 }))).toBe('INVALID_OPTION');
    expect(thrownCode(() => sampleSizeTwoProportions({ p1: 0.4, p2: 0.5, sided: 3 as 1 }))).toBe('INVALID_OPTION');
    expect(thrownCode(() => sampleSizeTwoProportions({ p1: 0.4, p2: 0.5, method: 'exact' as 'arcsine' }))).toBe('INVALID_OPTION');
    expect(thrownCode(() => sampleSizePaired({ p10: 0.6, p01: 0.5 }))).toBe('INVALID_PROBABILITY');
    expect(thrownCode(() => sampleSizePaired({ p10: -0.1, p01: 0.5 }))).toBe('INVALID_PROBABILITY');
    expect(thrownCode(() => sampleSizePaired({ p10: 0.1, p01: 0.2, power: 0.01 }))).toBe('INVALID_OPTION');
  });

  it('is exported from the package index', () => {
    expect(stats.sampleSizeTwoProportions).toBe(sampleSizeTwoProportions);
    expect(stats.sampleSizePaired).toBe(sampleSizePaired);
  });
});

describe('normalCdf (the power equation of pwr.2p.test needs Phi)', () => {
  it('matches scipy.stats.norm.cdf: absolute 1e-15 in the body, relative 1e-12 in the tails', () => {
    // Values of scipy.stats.norm.cdf, to double precision.
    const body: [number, number][] = [
      [0, 0.5],
      [-0.5, 0.3085375387259869],
      [1, 0.8413447460685429],
      [-1, 0.15865525393145707],
      [2.9, 0.998134186699616],
      [-2.9999, 0.001350341282954925],
      [3, 0.9986501019683699],
      [5, 0.9999997133484281],
    ];
    for (const [x, p] of body) expect([x, Math.abs(normalCdf(x) - p) < 1e-15]).toEqual([x, true]);
    const tails: [number, number][] = [
      [-3, 0.0013498980316300933],
      [-3.5, 0.00023262907903552502],
      [-5, 2.866515718791933e-7],
      [-6, 9.865876450376946e-10],
      [-10, 7.61985302416047e-24],
      [-20, 2.7536241186061556e-89],
    ];
    for (const [x, p] of tails) expect([x, Math.abs(normalCdf(x) - p) / p < 1e-12]).toEqual([x, true]);
    expect(normalCdf(Number.NEGATIVE_INFINITY)).toBe(0);
    expect(normalCdf(Number.POSITIVE_INFINITY)).toBe(1);
    expect(normalCdf(-40)).toBe(0);
    expect(thrownCode(() => normalCdf(Number.NaN))).toBe('NOT_FINITE');
  });

  it('inverts normalQuantile and is monotone', () => {
    fc.assert(
      fc.property(fc.double({ min: 1e-9, max: 1 - 1e-9, noNaN: true }), (p) => {
        expect(Math.abs(normalCdf(normalQuantile(p)) - p)).toBeLessThan(1e-14 + 1e-12 * p);
      }),
    );
    fc.assert(
      fc.property(fc.double({ min: -30, max: 30, noNaN: true }), fc.double({ min: -30, max: 30, noNaN: true }), (x, y) => {
        fc.pre(x < y);
        expect(normalCdf(x)).toBeLessThanOrEqual(normalCdf(y));
      }),
    );
  });
});
