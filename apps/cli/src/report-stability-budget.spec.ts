import { fromGate } from './report';

/** Issue 13: the CLI shows the judge's verdict stability and the budget's estimate and what was left. */
describe('unit: the gate report shows verdict stability and the budget estimate (issue 13)', () => {
  const gate = {
    gate_id: 'g1',
    recorded_verdict: 'pass',
    effective_verdict: 'pass',
    reasons: [],
    warnings: [{ code: 'judge_unstable', message: 'verdict stability 66.7% ...' }],
    run: { run_id: 'r1', suite_key: 'support', suite_version: 1, subject_kind: 'agent', subject_id: 'bot', n: 6, passed: 6, pass_rate: 1 },
    judge: { used: true, status: 'certified', stability: { repeats: 3, cases: 6, stable: 4, rate: 4 / 6, lower: 0.3, upper: 0.9032, unstable_case_ids: ['f2', 'f5'], min: 0.9 } },
    budget: { decision: 'throttled', estimate_usd: 0.0123, left_usd: 0.005, scope: 'suite:support' },
  };

  it('stability with its interval, counts and the unstable cases; the budget with its estimate and what was left', () => {
    const details = new Map(fromGate(gate).details);
    expect(details.get('verdict stability')).toBe('66.7% (95% CI 30.0-90.3%) - 4/6 cases agree over 3 repeats; unstable: f2, f5');
    expect(details.get('budget')).toBe('throttled - estimate $0.0123, left $0.0050 (suite:support)');
  });

  it('a gate without repeats or an estimate shows neither line beyond the decision', () => {
    const details = new Map(fromGate({ ...gate, judge: { used: true }, budget: { decision: 'not_needed' } }).details);
    expect(details.has('verdict stability')).toBe(false);
    expect(details.get('budget')).toBe('not_needed');
  });
});
