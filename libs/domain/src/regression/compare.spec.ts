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
