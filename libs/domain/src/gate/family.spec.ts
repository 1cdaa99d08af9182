import { compareRuns, regressionPValue, type Comparison } from '../regression';
import { decideGateFamily, type FamilySuiteInput } from './family';
import { decideGate, type GateDecision, type GateInputs } from './gate';

const base: GateInputs = {
  pass_rate: 0.9,
  passed: 45,
  n: 50,
  pass_threshold: 0.5,
  regression_verdict: 'no_regression',
  judge: { used: false, status: null, credential_missing: false, cases_not_scored: 0 },
  budget: 'not_needed',
};

/** A suite as the gate sees it: its comparison, its own decision, its raw p-value. */
function suite(key: string, c: Comparison | null, over: Partial<GateInputs> = {}): FamilySuiteInput {
  const decision = decideGate({ ...base, regression_verdict: c?.verdict ?? null, ...over });
  return { suite_key: key, decision, regression_p: regressionPValue(c) };
}

function decision(verdict: string, over: Partial<GateInputs> = {}): GateDecision {
  return decideGate({ ...base, regression_verdict: verdict, ...over });
}

/** Independent comparison of run x/n against baseline y/n with scores = pass rates (exact-match scorers). */
function independent(x: number, y: number, n: number, threshold = 0.05): Comparison {
  return compareRuns({ run_id: 'r', n, passed: x, score: x / n }, { run_id: 'b', n, passed: y, score: y / n }, threshold);
}

/** Paired comparison: `both` passed in both runs, `bOnly` in the baseline only, `rOnly` in the run only. */
function paired(both: number, bOnly: number, rOnly: number, neither: number, threshold = 0.05): Comparison {
  const n = both + bOnly + rOnly + neither;
  const x = both + rOnly;
  const y = both + bOnly;
  return compareRuns({ run_id: 'r', n, passed: x, score: x / n }, { run_id: 'b', n, passed: y, score: y / n }, threshold, { both, baseline_only: bOnly, run_only: rOnly, neither });
}

describe('unit: regressionPValue (GT7)', () => {
  it('p < 0.05 exactly when the comparison says regressed, for the interval that decided (independent and paired)', () => {
    let tests = 0;
    for (const n of [10, 25, 40]) {
      for (let x = 0; x <= n; x++) {
        for (const y of [n, n - 1, Math.round(n * 0.8)]) {
          const c = independent(x, y, n);
          const p = regressionPValue(c);
          if (c.verdict === 'no_regression') expect(p).toBeNull();
          else {
            tests++;
            expect([n, x, y, p! < 0.05]).toEqual([n, x, y, c.verdict === 'regressed']);
          }
        }
      }
    }
    for (let bOnly = 0; bOnly <= 12; bOnly++) {
      for (const rOnly of [0, 1, 3]) {
        const c = paired(20, bOnly, rOnly, 4);
        expect(c.decided_by).toBe('paired');
        const p = regressionPValue(c);
        if (c.verdict === 'no_regression') expect(p).toBeNull();
        else {
          tests++;
          expect([bOnly, rOnly, p! < 0.05]).toEqual([bOnly, rOnly, c.verdict === 'regressed']);
        }
      }
    }
    expect(tests).toBeGreaterThan(50);
  });

  it('a drop above the threshold whose pass rate did not fall has no evidence of a drop: p = 1', () => {
    // Scores fell (a judge's graded scores, say) while the pass rate rose.
    const c = compareRuns({ run_id: 'r', n: 20, passed: 19, score: 0.5 }, { run_id: 'b', n: 20, passed: 10, score: 0.9 }, 0.05);
    expect(c.verdict).toBe('inconclusive_noise');
    expect(regressionPValue(c)).toBe(1);
    expect(regressionPValue(null)).toBeNull();
  });
});

describe('unit: the family of suite gates (GT7, Holm)', () => {
  it('one suite is exactly the single-suite gate: the same verdict, reasons and warnings, on every comparison of a grid', () => {
    const overs: Array<Partial<GateInputs>> = [{}, { pass_rate: 0.3, passed: 15 }, { budget: 'blocked' }, { judge: { used: true, status: 'certified', credential_missing: true, cases_not_scored: 2 } }];
    const comparisons: Array<Comparison | null> = [null];
    for (let x = 0; x <= 30; x += 2) comparisons.push(independent(x, 28, 30));
    for (let bOnly = 0; bOnly <= 10; bOnly++) comparisons.push(paired(15, bOnly, 1, 3));
    let regressed = 0;
    for (const c of comparisons) {
      for (const over of overs) {
        const one = suite('only', c, over);
        const family = decideGateFamily([one]);
        const s = family.suites[0]!;
        expect({ verdict: s.verdict, reasons: s.reasons, warnings: s.warnings }).toEqual(one.decision);
        expect(family.verdict).toBe(one.decision.verdict);
        expect(s.downgraded).toBe(false);
        expect(s.regression_p).toEqual(one.regression_p === null ? null : { raw: one.regression_p, adjusted: one.regression_p });
        if (one.decision.reasons.some((r) => r.code === 'regressed')) regressed++;
      }
    }
    expect(regressed).toBeGreaterThan(4);
  });

  it("a raw p just under 0.05 does not survive Holm over three tests: the suite's regressed becomes inconclusive_noise and the family passes", () => {
    const family = decideGateFamily([
      { suite_key: 'a', decision: decision('regressed'), regression_p: 0.04 },
      { suite_key: 'b', decision: decision('inconclusive_noise'), regression_p: 0.3 },
      { suite_key: 'c', decision: decision('inconclusive_noise'), regression_p: 0.6 },
    ]);
    expect(family.family).toEqual({ method: 'holm', tests: 3, alpha: 0.05 });
    expect(family.verdict).toBe('pass');
    expect(family.reasons).toEqual([]);
    const a = family.suites[0]!;
    expect(a.regression_p!.raw).toBe(0.04);
    expect(a.regression_p!.adjusted).toBeCloseTo(0.12, 15);
    expect(a.verdict).toBe('pass');
    expect(a.downgraded).toBe(true);
    expect(a.warnings[0]!.code).toBe('inconclusive_noise');
    expect(a.warnings[0]!.message).toContain('not significant after Holm over 3 suites');
    expect(family.warnings.map((w) => [w.suite_key, w.code])).toEqual([
      ['a', 'inconclusive_noise'],
      ['b', 'inconclusive_noise'],
      ['c', 'inconclusive_noise'],
    ]);
  });

  it('a strong regression survives, a weak one in the same family does not (step-down: 3p, 2p, p)', () => {
    const family = decideGateFamily([
      { suite_key: 'strong', decision: decision('regressed'), regression_p: 0.001 },
      { suite_key: 'noise', decision: decision('inconclusive_noise'), regression_p: 0.5 },
      { suite_key: 'weak', decision: decision('regressed'), regression_p: 0.04 },
    ]);
    expect(family.suites.map((s) => s.regression_p!.adjusted)).toEqual([0.003, 0.5, 0.08]);
    expect(family.suites.map((s) => s.verdict)).toEqual(['fail', 'pass', 'pass']);
    expect(family.verdict).toBe('fail');
    expect(family.reasons).toEqual([{ code: 'regressed', suite_key: 'strong', message: expect.stringMatching(/^suite strong: /) }]);
    // Holm rejects both when the second is small enough: 2 x 0.02 = 0.04 < 0.05.
    const both = decideGateFamily([
      { suite_key: 'x', decision: decision('regressed'), regression_p: 0.001 },
      { suite_key: 'y', decision: decision('regressed'), regression_p: 0.02 },
      { suite_key: 'z', decision: decision('inconclusive_noise'), regression_p: 0.9 },
    ]);
    expect(both.suites.map((s) => s.verdict)).toEqual(['fail', 'fail', 'pass']);
  });

  it('suites without a regression test (no baseline, no drop above the threshold) are not counted in N', () => {
    const family = decideGateFamily([
      { suite_key: 'a', decision: decision('regressed'), regression_p: 0.03 },
      { suite_key: 'new', decision: decision('no_baseline'), regression_p: null },
      { suite_key: 'steady', decision: decision('no_regression'), regression_p: null },
      { suite_key: 'b', decision: decision('inconclusive_noise'), regression_p: 0.2 },
    ]);
    expect(family.family.tests).toBe(2);
    expect(family.suites.map((s) => s.regression_p)).toEqual([{ raw: 0.03, adjusted: 0.06 }, null, null, { raw: 0.2, adjusted: 0.2 }]);
    expect(family.suites[0]!.warnings[0]!.message).toContain('over 2 suites');
    expect(family.verdict).toBe('pass');
  });

  it("other reasons are Holm's business neither way: a threshold, judge or budget failure fails the family", () => {
    const family = decideGateFamily([
      { suite_key: 'a', decision: decision('regressed', { pass_rate: 0.3, passed: 15 }), regression_p: 0.04 },
      { suite_key: 'b', decision: decision('no_regression', { budget: 'blocked' }), regression_p: null },
      { suite_key: 'c', decision: decision('no_regression', { judge: { used: true, status: 'not_certified', credential_missing: false, cases_not_scored: 0 } }), regression_p: null },
      { suite_key: 'd', decision: decision('no_regression'), regression_p: null },
    ]);
    expect(family.family.tests).toBe(1);
    // One test: its p is its own; 0.04 < 0.05, the regression stands.
    expect(family.suites[0]!.reasons.map((r) => r.code)).toEqual(['regressed', 'below_pass_threshold']);
    expect(family.reasons.map((r) => [r.suite_key, r.code])).toEqual([
      ['a', 'regressed'],
      ['a', 'below_pass_threshold'],
      ['b', 'budget_blocked'],
      ['c', 'judge_uncalibrated'],
    ]);
    expect(family.verdict).toBe('fail');
    // Downgraded, a suite below its pass threshold still fails for that.
    const downgraded = decideGateFamily([
      { suite_key: 'a', decision: decision('regressed', { pass_rate: 0.3, passed: 15 }), regression_p: 0.04 },
      { suite_key: 'b', decision: decision('inconclusive_noise'), regression_p: 0.5 },
    ]);
    expect(downgraded.suites[0]!.reasons.map((r) => r.code)).toEqual(['below_pass_threshold']);
    expect(downgraded.verdict).toBe('fail');
  });
});
