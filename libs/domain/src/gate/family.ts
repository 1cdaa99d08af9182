import { holm } from '@evals/stats';
import type { GateDecision, GateNote, GateReasonCode, GateWarningCode } from './gate';

/**
 * GT7: one gate over several suites. Each suite is gated as on its own (`decideGate`); its regression test
 * - a score drop above the suite's threshold, tested by the interval that decided it - has a raw p-value
 * (`regressionPValue`, libs/domain regression). Holm's step-down method (`holm`, libs/stats) adjusts the
 * p-values of the suites that have a test, so the chance that any suite of the family is called regressed
 * by noise alone stays at 5% however many suites the gate covers. A suite's `regressed` stands only when its
 * adjusted p is below 0.05; otherwise it becomes `inconclusive_noise` for the family (a warning, not a
 * reason). Every other reason (pass threshold, judge, budget) is untouched: Holm adjusts tests, not
 * thresholds. The family fails when any suite fails. One suite is exactly the single-suite gate: Holm over
 * one test is the test itself.
 */
export const FAMILY_ALPHA = 0.05;

export interface FamilySuiteInput {
  readonly suite_key: string;
  /** The suite's own single-suite decision (`decideGate`). */
  readonly decision: GateDecision;
  /** The raw p-value of the suite's regression test, or null: no baseline, or no drop above the threshold. */
  readonly regression_p: number | null;
}

export interface FamilySuiteDecision extends GateDecision {
  readonly suite_key: string;
  /** The raw and Holm-adjusted p-values, or null when the suite has no regression test. */
  readonly regression_p: { readonly raw: number; readonly adjusted: number } | null;
  /** True when the suite's own `regressed` did not survive the adjustment. */
  readonly downgraded: boolean;
}

export interface FamilyNote<C extends string> extends GateNote<C> {
  readonly suite_key: string;
}

export interface FamilyDecision {
  readonly verdict: 'pass' | 'fail';
  readonly family: { readonly method: 'holm'; readonly tests: number; readonly alpha: typeof FAMILY_ALPHA };
  readonly suites: readonly FamilySuiteDecision[];
  /** Every failing suite's reasons, each naming its suite. */
  readonly reasons: ReadonlyArray<FamilyNote<GateReasonCode>>;
  readonly warnings: ReadonlyArray<FamilyNote<GateWarningCode>>;
}

export function decideGateFamily(suites: readonly FamilySuiteInput[]): FamilyDecision {
  const tested = suites.map((s, i) => [i, s.regression_p] as const).filter((e): e is readonly [number, number] => e[1] !== null);
  const adjusted = holm(tested.map(([, p]) => p));
  const pOf = new Map(tested.map(([i, raw], k) => [i, { raw, adjusted: adjusted[k] as number }]));
  const m = tested.length;
  const decided = suites.map((s, i): FamilySuiteDecision => {
    const p = pOf.get(i) ?? null;
    const regressed = s.decision.reasons.some((r) => r.code === 'regressed');
    // A `regressed` without a p-value cannot happen (every drop above the threshold is tested); it stands.
    if (!regressed || p === null || p.adjusted < FAMILY_ALPHA) return { suite_key: s.suite_key, ...s.decision, regression_p: p, downgraded: false };
    const reasons = s.decision.reasons.filter((r) => r.code !== 'regressed');
    const why = `raw p = ${fmt(p.raw)}, adjusted p = ${fmt(p.adjusted)}`;
    const warning: GateNote<GateWarningCode> = {
      code: 'inconclusive_noise',
      message: `the score dropped by more than the threshold and the suite's own 95% interval excludes zero, but the drop is not significant after Holm over ${m} suites (${why}): not a regression of the family (GT7)`,
    };
    return { suite_key: s.suite_key, verdict: reasons.length === 0 ? 'pass' : 'fail', reasons, warnings: [warning, ...s.decision.warnings], regression_p: p, downgraded: true };
  });
  const tag = <C extends string>(s: FamilySuiteDecision, n: GateNote<C>): FamilyNote<C> => ({ code: n.code, suite_key: s.suite_key, message: `suite ${s.suite_key}: ${n.message}` });
  return {
    verdict: decided.some((s) => s.verdict === 'fail') ? 'fail' : 'pass',
    family: { method: 'holm', tests: m, alpha: FAMILY_ALPHA },
    suites: decided,
    reasons: decided.flatMap((s) => s.reasons.map((r) => tag(s, r))),
    warnings: decided.flatMap((s) => s.warnings.map((w) => tag(s, w))),
  };
}

function fmt(p: number): string {
  return p < 0.0001 ? p.toExponential(2) : p.toFixed(4);
}
