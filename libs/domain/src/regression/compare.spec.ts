import { readReference } from '../../../../test/support/reference';
import { compareRuns } from './compare';

interface Reference {
  statistic: string;
  inputs: Record<string, number>;
  expected: [number, number];
  tolerance: number;
}

const reference = readReference<Reference[]>('stats-reference.json');
const newcombe = reference.filter((r) => r.statistic === 'newcombe10_diff_95');

describe('unit: regression decision (G1, G2, G3)', () => {
  it.each(newcombe.map((r) => [`${r.inputs.x1}/${r.inputs.n1} vs ${r.inputs.x2}/${r.inputs.n2}`, r] as const))(
    'reports the published Newcombe interval for run %s (run = p1, baseline = p2)',
    (_name, r) => {
      const { x1, n1, x2, n2 } = r.inputs;
      const c = compareRuns({ run_id: 'run', n: n1, passed: x1, score: x1 / n1 }, { run_id: 'base', n: n2, passed: x2, score: x2 / n2 }, 0.05);
      expect(Math.abs(c.pass_rate_diff.lower - r.expected[0])).toBeLessThanOrEqual(r.tolerance);
      expect(Math.abs(c.pass_rate_diff.upper - r.expected[1])).toBeLessThanOrEqual(r.tolerance);
      expect(c.run).toEqual({ passed: x1, n: n1, pass_rate: x1 / n1 });
      expect(c.baseline).toEqual({ passed: x2, n: n2, pass_rate: x2 / n2 });
    },
  );

  it('regressed: drop above the threshold and the interval excludes zero', () => {
    // Newcombe example (a) with the roles swapped: the candidate fell from 56/70 to 48/80.
    const c = compareRuns({ run_id: 'r', n: 80, passed: 48, score: 0.6 }, { run_id: 'b', n: 70, passed: 56, score: 0.8 }, 0.1);
    expect(c.score_drop).toBeCloseTo(0.2, 12);
    expect(c.pass_rate_diff.upper).toBeLessThan(0);
    expect(c.verdict).toBe('regressed');
  });

  it('inconclusive_noise: drop above the threshold but the interval contains zero (G2)', () => {
    // Newcombe example (d) swapped: 5/56 -> 0/29 is a drop, but 29 cases cannot tell it from noise.
    const c = compareRuns({ run_id: 'r', n: 29, passed: 0, score: 0 }, { run_id: 'b', n: 56, passed: 5, score: 5 / 56 }, 0.05);
    expect(c.score_drop).toBeGreaterThan(0.05);
    expect(c.pass_rate_diff.lower).toBeLessThan(0);
    expect(c.pass_rate_diff.upper).toBeGreaterThan(0);
    expect(c.verdict).toBe('inconclusive_noise');
  });

  it('no_regression: a drop at or under the threshold, however significant, and any improvement', () => {
    expect(compareRuns({ run_id: 'r', n: 1000, passed: 900, score: 0.9 }, { run_id: 'b', n: 1000, passed: 950, score: 0.95 }, 0.05).verdict).toBe('no_regression');
    expect(compareRuns({ run_id: 'r', n: 10, passed: 10, score: 1 }, { run_id: 'b', n: 10, passed: 0, score: 0 }, 0.05).verdict).toBe('no_regression');
  });

  it('an empty baseline or run never regresses', () => {
    expect(compareRuns({ run_id: 'r', n: 10, passed: 0, score: 0 }, { run_id: 'b', n: 0, passed: 0, score: 1 }, 0.05).verdict).toBe('inconclusive_noise');
  });
});

describe('unit: the paired comparison and the cases needed (G7, G8)', () => {
  // 200 cases scored by both runs; 12 passed in the baseline and failed in the run, none the other way.
  const cells = { both: 88, baseline_only: 12, run_only: 0, neither: 100 };
  const base = { run_id: 'b', n: 200, passed: 100, score: 0.5 };
  const cand = { run_id: 'r', n: 200, passed: 88, score: 0.44 };

  it('the same cases scored twice: the independent interval contains zero, the paired one excludes it and decides', () => {
    const independent = compareRuns(cand, base, 0.05);
    expect(independent.decided_by).toBe('independent');
    expect(independent.pass_rate_diff.lower).toBeLessThan(0);
    expect(independent.pass_rate_diff.upper).toBeGreaterThan(0);
    expect(independent.verdict).toBe('inconclusive_noise');

    const paired = compareRuns(cand, base, 0.05, cells);
    expect(paired.decided_by).toBe('paired');
    expect(paired.verdict).toBe('regressed');
    expect(paired.paired_diff).toMatchObject({ diff: -0.06, baseline_only: 12, run_only: 0, n: 200, method: 'newcombe_paired_10', level: 0.95 });
    expect(paired.paired_diff!.upper).toBeLessThan(0);
    // Both intervals are reported, whichever decided.
    expect(paired.pass_rate_diff).toEqual(independent.pass_rate_diff);
    expect(paired.cases_needed).toBeUndefined();
  });

  it('an inconclusive drop says how many cases per run would resolve it, by the test that decided', () => {
    // 3 of 40 flipped one way, 1 the other: a drop of 5 points that 40 pairs cannot resolve.
    const flips = { both: 17, baseline_only: 3, run_only: 1, neither: 19 };
    const c = compareRuns({ run_id: 'r', n: 40, passed: 18, score: 0.45 }, { run_id: 'b', n: 40, passed: 20, score: 0.5 }, 0.01, flips);
    expect(c.verdict).toBe('inconclusive_noise');
    // Connor (1987): n = (z_a sqrt(psi) + z_b sqrt(psi - delta^2))^2 / delta^2, psi = 4/40, delta = 2/40.
    const [za, zb, psi, delta] = [1.959963984540054, 0.8416212335729143, 0.1, 0.05];
    const expected = Math.ceil((za * Math.sqrt(psi) + zb * Math.sqrt(psi - delta * delta)) ** 2 / delta ** 2);
    expect(c.cases_needed).toEqual({ per_run: expected, have: 40, method: 'mcnemar_connor', alpha: 0.05, power: 0.8 });
    expect(expected).toBeGreaterThan(40);

    // Independent samples: Fleiss' pooled normal, as R's power.prop.test(p1 = 0.5, p2 = 0.45, power = 0.8).
    const i = compareRuns({ run_id: 'r', n: 40, passed: 18, score: 0.45 }, { run_id: 'b', n: 40, passed: 20, score: 0.5 }, 0.01);
    expect(i.verdict).toBe('inconclusive_noise');
    const pbar = 0.475;
    const n2 = (za * Math.sqrt(2 * pbar * (1 - pbar)) + zb * Math.sqrt(0.5 * 0.5 + 0.45 * 0.55)) ** 2 / 0.05 ** 2;
    expect(i.cases_needed).toEqual({ per_run: Math.ceil(n2), have: 40, method: 'pooled_normal', alpha: 0.05, power: 0.8 });
  });

  it('no cases-needed figure when nothing is inconclusive, or when the pass rate did not drop', () => {
    expect(compareRuns(base, base, 0.05, { both: 100, baseline_only: 0, run_only: 0, neither: 100 }).cases_needed).toBeUndefined();
    // The mean score dropped past the threshold but the pass rate rose: inconclusive, nothing to power.
    const c = compareRuns({ run_id: 'r', n: 40, passed: 21, score: 0.3 }, { run_id: 'b', n: 40, passed: 20, score: 0.5 }, 0.1, { both: 19, baseline_only: 1, run_only: 2, neither: 18 });
    expect(c.verdict).toBe('inconclusive_noise');
    expect(c.cases_needed).toBeNull();
  });
});
