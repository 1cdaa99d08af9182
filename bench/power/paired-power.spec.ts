/**
 * The pure parts of the power simulation (bench/power/paired-power.bench.ts): the seeded case model is
 * reproducible and has the distribution it claims, scenario A lowers the mean by exactly the drop, and
 * each simulated pair is judged by the real compareRuns, independent and paired. No timing here.
 */
import { createRng, sampleSizePaired } from '@evals/stats';
import {
  MAIN_MODEL,
  SPREAD_MODELS,
  drawSuite,
  lowerMedian,
  lowered,
  nextPair,
  outcomeCorrelation,
  parseOptions,
  sampleBeta,
  sampleGamma,
  scenarioRng,
  scorePair,
  verdicts,
  type CaseModel,
} from './paired-power.bench';

function meanVar(xs: readonly number[]): { mean: number; variance: number } {
  const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
  const variance = xs.reduce((s, x) => s + (x - mean) ** 2, 0) / (xs.length - 1);
  return { mean, variance };
}

describe('the case model', () => {
  it('is seeded: the same seed gives the same first pairs, another seed other pairs', () => {
    const firstPairs = (seed: string) => {
      const rng = scenarioRng(seed, MAIN_MODEL, 'A');
      return Array.from({ length: 3 }, () => {
        const { cells, p } = nextPair(rng, MAIN_MODEL, 'A', 200, 0.05);
        return { cells, p: Array.from(p) };
      });
    };
    const one = firstPairs('paired-power-1');
    expect(firstPairs('paired-power-1')).toEqual(one);
    expect(firstPairs('paired-power-2')).not.toEqual(one);
    for (const { cells } of one) expect(cells.both + cells.baseline_only + cells.run_only + cells.neither).toBe(200);
  });

  it('draws each scenario and model from its own stream', () => {
    const first = (model: CaseModel, scenario: 'A' | 'B') => scenarioRng('s', model, scenario).nextUint32();
    expect(first(MAIN_MODEL, 'A')).not.toBe(first(MAIN_MODEL, 'B'));
    expect(first(MAIN_MODEL, 'A')).not.toBe(first(SPREAD_MODELS[1], 'A'));
    expect(first(MAIN_MODEL, 'A')).toBe(first(MAIN_MODEL, 'A'));
  });

  it.each([
    [0.75, 0.25],
    [7.5, 2.5],
    [0.3, 0.1],
  ])('Beta(%s, %s) draws have its mean and variance', (a, b) => {
    const rng = createRng(`beta-${a}-${b}`);
    const xs = Array.from({ length: 40_000 }, () => sampleBeta(rng, a, b));
    expect(xs.every((x) => x >= 0 && x <= 1)).toBe(true);
    const { mean, variance } = meanVar(xs);
    const s = a + b;
    const trueVar = (a * b) / (s * s * (s + 1));
    // Standard error of the mean is sqrt(trueVar / 40000) <= 0.0022; these bounds are about 4 of them.
    expect(Math.abs(mean - a / s)).toBeLessThan(0.009);
    expect(Math.abs(variance / trueVar - 1)).toBeLessThan(0.05);
  });

  it.each([0.25, 1, 3.5])('Gamma(%s) draws have mean and variance equal to the shape', (shape) => {
    const rng = createRng(`gamma-${shape}`);
    const { mean, variance } = meanVar(Array.from({ length: 40_000 }, () => sampleGamma(rng, shape)));
    expect(Math.abs(mean / shape - 1)).toBeLessThan(0.04);
    expect(Math.abs(variance / shape - 1)).toBeLessThan(0.08);
  });

  it('the no-spread model gives every case the fixed probability', () => {
    const fixed = SPREAD_MODELS.find((m) => m.beta === null) as CaseModel;
    expect(Array.from(drawSuite(createRng('x'), fixed, 5))).toEqual([0.75, 0.75, 0.75, 0.75, 0.75]);
    expect(outcomeCorrelation(fixed)).toBe(0);
    expect(outcomeCorrelation(MAIN_MODEL)).toBe(0.5);
  });

  it('scenario A lowers the suite mean by exactly the drop, keeping every q_i in [0, p_i]', () => {
    const p = drawSuite(createRng('drop'), MAIN_MODEL, 200);
    const q = lowered(p, 0.05);
    const mean = (xs: Float64Array) => xs.reduce((s, x) => s + x, 0) / xs.length;
    expect(mean(p) - mean(q)).toBeCloseTo(0.05, 12);
    for (let i = 0; i < p.length; i++) {
      expect(q[i]).toBeGreaterThanOrEqual(0);
      expect(q[i]).toBeLessThanOrEqual(p[i]);
    }
    expect(() => lowered(new Float64Array([0.01, 0.02]), 0.05)).toThrow(/below the drop/);
  });

  it('scores a case by its probability in each run', () => {
    const ones = new Float64Array(10).fill(1);
    const zeros = new Float64Array(10).fill(0);
    const rng = createRng('cells');
    expect(scorePair(rng, ones, ones)).toEqual({ both: 10, baseline_only: 0, run_only: 0, neither: 0 });
    expect(scorePair(rng, ones, zeros)).toEqual({ both: 0, baseline_only: 10, run_only: 0, neither: 0 });
    expect(scorePair(rng, zeros, ones)).toEqual({ both: 0, baseline_only: 0, run_only: 10, neither: 0 });
    expect(scorePair(rng, zeros, zeros)).toEqual({ both: 0, baseline_only: 0, run_only: 0, neither: 10 });
  });
});

describe('the verdicts of a pair (real compareRuns, threshold 0)', () => {
  it('15 baseline-only against 3 run-only of 200: paired regressed, independent inconclusive with its pooled-normal cases_needed', () => {
    const v = verdicts({ both: 150, baseline_only: 15, run_only: 3, neither: 32 });
    expect(v.independent.decided_by).toBe('independent');
    expect(v.independent.verdict).toBe('inconclusive_noise');
    expect(v.independent.cases_needed?.method).toBe('pooled_normal');
    expect(v.independent.run).toEqual({ passed: 153, n: 200, pass_rate: 0.765 });
    expect(v.independent.baseline).toEqual({ passed: 165, n: 200, pass_rate: 0.825 });
    expect(v.paired.decided_by).toBe('paired');
    expect(v.paired.verdict).toBe('regressed');
    expect(v.paired.paired_diff?.baseline_only).toBe(15);
    expect(v.paired.paired_diff?.run_only).toBe(3);
  });

  it('a paired inconclusive drop carries the McNemar (Connor) cases_needed of its observed rates', () => {
    const v = verdicts({ both: 140, baseline_only: 8, run_only: 4, neither: 48 });
    expect(v.paired.verdict).toBe('inconclusive_noise');
    expect(v.paired.cases_needed?.method).toBe('mcnemar_connor');
    expect(v.paired.cases_needed?.per_run).toBe(sampleSizePaired({ p10: 8 / 200, p01: 4 / 200 }).n_pairs);
  });

  it('no drop is no_regression for both', () => {
    const v = verdicts({ both: 150, baseline_only: 5, run_only: 5, neither: 40 });
    expect(v.independent.verdict).toBe('no_regression');
    expect(v.paired.verdict).toBe('no_regression');
  });
});

describe('helpers', () => {
  it('lowerMedian takes the middle value, or the lower of two', () => {
    expect(lowerMedian([])).toBeNull();
    expect(lowerMedian([5, 1, 3])).toBe(3);
    expect(lowerMedian([4, 1, 3, 2])).toBe(2);
  });

  describe('parseOptions', () => {
    const saved = { ...process.env };
    beforeEach(() => {
      for (const k of ['BENCH_SEED', 'BENCH_PAIRS', 'BENCH_CASES', 'BENCH_DROP']) delete process.env[k];
    });
    afterAll(() => {
      process.env = saved;
    });

    it('has the documented defaults', () => {
      expect(parseOptions([])).toEqual({ seed: 'paired-power-1', pairs: 10_000, cases: 200, drop: 0.05, spreadTable: true, planCheck: true });
    });

    it('takes --seed x, --seed=x, and BENCH_SEED, the flag first', () => {
      expect(parseOptions(['--seed', 'abc']).seed).toBe('abc');
      expect(parseOptions(['--seed=def', '--pairs=500', '--no-spread-table'])).toMatchObject({ seed: 'def', pairs: 500, spreadTable: false });
      process.env.BENCH_SEED = 'from-env';
      expect(parseOptions([]).seed).toBe('from-env');
      expect(parseOptions(['--seed', 'flag']).seed).toBe('flag');
    });

    it('refuses a count that is not a positive integer and a drop outside (0, 0.75)', () => {
      expect(() => parseOptions(['--pairs', '0'])).toThrow(/positive integer/);
      expect(() => parseOptions(['--cases', '2.5'])).toThrow(/positive integer/);
      expect(() => parseOptions(['--drop', '0.8'])).toThrow(/--drop/);
    });
  });
});
