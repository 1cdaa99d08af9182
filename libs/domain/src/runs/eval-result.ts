import type { RunDoc } from './run.projection';
import { summarizeRun } from './run.projection';

/** R3: the canonical artifact, shaped as `evals.result.recorded` v1 (libs/contracts). */
export interface EvalResult {
  readonly suite: string;
  readonly suite_version: number;
  readonly subject_kind: string;
  readonly subject_id: string;
  readonly variant: string | null;
  readonly run_id: string;
  readonly score: number;
  readonly passed: boolean;
  readonly occurred_at: string;
  readonly metrics: {
    readonly pass_rate: number;
    readonly passed: number;
    readonly n: number;
    readonly pass_rate_ci: { readonly lower: number; readonly upper: number; readonly level: number };
    readonly missing_outputs: number;
    readonly pass_threshold: number;
    readonly source: string;
    /** R7: present (true) when the run expired - nobody sealed it; its missing cases count as failed. */
    readonly expired?: true;
  };
}

/** Only a completed run with at least one case has an EvalResult. */
export function toEvalResult(doc: RunDoc): EvalResult | null {
  if (doc.status !== 'completed' || doc.completed_at === null) return null;
  const s = summarizeRun(doc);
  if (s.n === 0 || s.pass_rate === null || s.score === null) return null;
  return {
    suite: doc.suite_key,
    suite_version: doc.suite_version,
    subject_kind: doc.subject_kind,
    subject_id: doc.subject_id,
    variant: doc.variant,
    run_id: doc.run_id,
    score: s.score,
    passed: s.pass_rate >= doc.pass_threshold,
    occurred_at: doc.completed_at,
    metrics: {
      pass_rate: s.pass_rate,
      passed: s.passed,
      n: s.n,
      pass_rate_ci: s.pass_rate_ci,
      missing_outputs: doc.missing_outputs,
      pass_threshold: doc.pass_threshold,
      source: doc.source,
      ...(doc.expired ? { expired: true as const } : {}),
    },
  };
}
