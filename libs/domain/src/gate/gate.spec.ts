import { decideGate, effectiveVerdict, overrideReasonProblem, sampleCaseIds, type GateInputs } from './gate';

const ok: GateInputs = {
  pass_rate: 0.9,
  passed: 45,
  n: 50,
  pass_threshold: 0.8,
  regression_verdict: 'no_regression',
  judge: { used: false, status: null, credential_missing: false, cases_not_scored: 0 },
  budget: 'not_needed',
};

describe('unit: the gate decision (GT1-GT6)', () => {
  it('passes with no reason', () => {
    expect(decideGate(ok)).toEqual({ verdict: 'pass', reasons: [], warnings: [] });
  });

  it.each([
    ['regressed', { regression_verdict: 'regressed' }],
    ['below_pass_threshold', { pass_rate: 0.7, passed: 35 }],
    ['below_pass_threshold', { pass_rate: null, passed: 0, n: 0 }],
    ['judge_uncalibrated', { judge: { used: true, status: 'not_certified', credential_missing: false, cases_not_scored: 0 } }],
    ['judge_uncalibrated', { judge: { used: true, status: 'uncalibrated', credential_missing: false, cases_not_scored: 0 } }],
    ['budget_blocked', { budget: 'blocked' }],
    ['budget_blocked', { budget: 'store_unreadable' }],
  ] as const)('fails with %s', (code, over) => {
    const d = decideGate({ ...ok, ...(over as Partial<GateInputs>) });
    expect(d.verdict).toBe('fail');
    expect(d.reasons.map((r) => r.code)).toEqual([code]);
  });

  it('issue 13: a throttle warns (its unscored cases count as failed); an allow budget over its limit warns; a block says the estimate and what is left', () => {
    const plan = { estimate_usd: 0.0123, left_usd: 0.005, scope: 'suite:s', judged: 2, over_limit_scopes: [] };
    expect(decideGate({ ...ok, budget: 'throttled', budget_plan: plan })).toMatchObject({ verdict: 'pass', warnings: [{ code: 'budget_throttled' }] });
    const over = decideGate({ ...ok, budget: 'allowed', budget_plan: { ...plan, over_limit_scopes: ['judge'] } });
    expect(over).toMatchObject({ verdict: 'pass', warnings: [{ code: 'budget_over_limit' }] });
    const blocked = decideGate({ ...ok, budget: 'blocked', budget_plan: plan });
    expect(blocked.reasons).toEqual([{ code: 'budget_blocked', message: 'the judge spend estimated at $0.0123 exceeds the $0.0050 left of budget suite:s: no judge spend (GT4)' }]);
  });

  it('issue 13: verdict stability below the minimum warns judge_unstable, or fails when told to; at or above it says nothing', () => {
    const stability = { rate: 0.8, lower: 0.49, upper: 0.94, cases: 10, unstable_case_ids: ['j3', 'j7'], min: 0.9, fail: false };
    const warned = decideGate({ ...ok, stability });
    expect(warned.verdict).toBe('pass');
    expect(warned.warnings).toEqual([{ code: 'judge_unstable', message: expect.stringContaining('j3, j7') }]);
    expect(decideGate({ ...ok, stability: { ...stability, fail: true } })).toMatchObject({ verdict: 'fail', reasons: [{ code: 'judge_unstable' }] });
    expect(decideGate({ ...ok, stability: { ...stability, rate: 0.9 } }).warnings).toEqual([]);
    expect(decideGate({ ...ok, stability: null }).warnings).toEqual([]);
  });

  it('a pass rate exactly at the threshold passes (R2: >=)', () => {
    expect(decideGate({ ...ok, pass_rate: 0.8, passed: 40 }).verdict).toBe('pass');
  });

  it('a missing judge credential is a declared warning, never a silent pass (GT2)', () => {
    const d = decideGate({ ...ok, judge: { used: true, status: 'certified', credential_missing: true, cases_not_scored: 3 } });
    expect(d.warnings.map((w) => w.code)).toContain('judge_credential_missing');
    expect(d.warnings.find((w) => w.code === 'judge_credential_missing')!.message).toContain('3 judge case(s) not scored');
  });

  it('reports every reason at once', () => {
    const d = decideGate({ ...ok, regression_verdict: 'regressed', pass_rate: 0.5, passed: 25, budget: 'blocked', judge: { used: true, status: 'not_certifiable', credential_missing: false, cases_not_scored: 0 } });
    expect(d.reasons.map((r) => r.code).sort()).toEqual(['below_pass_threshold', 'budget_blocked', 'judge_uncalibrated', 'regressed']);
  });

  it('warns, without failing, when there is no baseline or the drop is noise', () => {
    expect(decideGate({ ...ok, regression_verdict: 'no_baseline' })).toMatchObject({ verdict: 'pass', warnings: [{ code: 'no_baseline' }] });
    expect(decideGate({ ...ok, regression_verdict: 'inconclusive_noise' })).toMatchObject({ verdict: 'pass', warnings: [{ code: 'inconclusive_noise' }] });
  });
});

describe('unit: sampling and overrides (GT3, GT5)', () => {
  const ids = Array.from({ length: 200 }, (_, i) => `c${i}`);

  it('the same seed gives the same sample; another seed another one', () => {
    const a = sampleCaseIds(ids, { size: 20, seed: 'ci-1' });
    expect(a).toHaveLength(20);
    expect(sampleCaseIds(ids, { size: 20, seed: 'ci-1' })).toEqual(a);
    expect(sampleCaseIds(ids, { size: 20, seed: 'ci-2' })).not.toEqual(a);
    expect(sampleCaseIds(ids, undefined)).toBe(ids);
  });

  it('the effective verdict follows the last override; the recorded one is untouched', () => {
    expect(effectiveVerdict('fail', [])).toBe('fail');
    expect(effectiveVerdict('fail', [{ after: 'pass' }])).toBe('pass');
  });

  it('refuses a missing, short, overlong or empty-sounding reason', () => {
    expect(overrideReasonProblem(undefined)).toMatch(/required/);
    expect(overrideReasonProblem('ok')).toMatch(/at least 20/);
    const page = 'Known flaky upstream; approved by the release manager. '.repeat(40);
    expect(overrideReasonProblem(page.slice(0, 2000))).toBeNull();
    expect(overrideReasonProblem(`  ${page.slice(0, 2000)}  `)).toBeNull();
    expect(overrideReasonProblem(page.slice(0, 2001))).toMatch(/at most 2000/);
    expect(overrideReasonProblem('a'.repeat(40))).toMatch(/say something/);
    expect(overrideReasonProblem('Known flaky upstream; approved by release manager J. Doe')).toBeNull();
  });
});
