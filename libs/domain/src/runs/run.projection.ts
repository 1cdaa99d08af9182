import { projectField } from '@evals/contracts';
import { wilson } from '@evals/stats';
import { verdictStability, type VerdictStability } from '../judge/repeats';
import { casesScoredCounts } from './case-outcomes';
import type { RunEvent, RunOpenedV1 } from './run-events';

export type RunStatus = 'open' | 'sealed' | 'completed';

/** The mutable run aggregate (R3), as the read model stores it. */
export interface RunDoc extends Omit<RunOpenedV1, 'sample' | 'judge_cache' | 'judge_skip' | 'judge_throttle'> {
  readonly status: RunStatus;
  /** Cases with evidence so far (live progress). */
  readonly scored: number;
  readonly passed: number;
  readonly score_sum: number;
  readonly missing_outputs: number;
  readonly opened_at: string;
  readonly completed_at: string | null;
  /** R7: set when nobody sealed the run and the system did, after its time (`run.sealed` reason `expired`). */
  readonly expired?: true;
  /** Issue 13: how often the judge agreed with itself on the cases it judged with `repeats`, with its Wilson interval. */
  readonly judge_stability?: VerdictStability;
}

export interface EventContext {
  readonly occurred_at: string;
}

/**
 * Pure projection of a run's events (emmett style: `evolve(doc, event)`). Counting events are applied once
 * each (the caller's inbox guarantees it), and `run.scored` replaces the counts with the ones computed from
 * the evidence table, so the final aggregate never depends on how batches were delivered.
 */
export function evolveRun(doc: RunDoc | null, event: RunEvent, ctx: EventContext): RunDoc | null {
  switch (event.type) {
    case 'run.opened':
      return doc ?? openedDoc(event.data, ctx.occurred_at);
    case 'run.sealed':
    {
      if (!doc) return doc;
      // The expiry is a fact of the run whatever the delivery order: a run.scored may be projected first.
      const expired = event.data.reason === 'expired' ? { expired: true as const } : {};
      return doc.status === 'open' ? { ...doc, status: 'sealed', ...expired } : { ...doc, ...expired };
    }
    case 'cases.scored': {
      const counts = casesScoredCounts(event);
      if (!doc || doc.status === 'completed' || counts === null) return doc;
      return { ...doc, scored: doc.scored + counts.n, passed: doc.passed + counts.passed, score_sum: doc.score_sum + counts.score_sum };
    }
    case 'run.scored':
      if (!doc) return doc;
      return {
        ...doc,
        status: 'completed',
        scored: event.data.n,
        passed: event.data.passed,
        score_sum: event.data.score_sum,
        missing_outputs: event.data.missing_count ?? event.data.missing_case_ids.length,
        completed_at: ctx.occurred_at,
        ...(event.data.expired ? { expired: true as const } : {}),
        ...(event.data.judge_stability ? { judge_stability: verdictStability(event.data.judge_stability) } : {}),
      };
    case 'outputs.received':
    case 'run.compared':
      // Neither changes the aggregate: a receipt only matters to the seal, the verdict has its own projection.
      return doc;
  }
}

function openedDoc(d: RunOpenedV1, at: string): RunDoc {
  return {
    run_id: d.run_id,
    // Issue 30: the run's project travels with its document, so every view scopes it by the fact of its own
    // run.opened; a run of `default` keeps the document it had before projects (no field).
    ...projectField(d.project),
    suite_key: d.suite_key,
    suite_version: d.suite_version,
    suite_content_hash: d.suite_content_hash,
    pass_threshold: d.pass_threshold,
    regression_threshold: d.regression_threshold,
    subject_kind: d.subject_kind,
    subject_id: d.subject_id,
    variant: d.variant,
    baseline_run_id: d.baseline_run_id,
    source: d.source,
    case_count: d.case_count,
    scorer_versions: d.scorer_versions,
    status: 'open',
    scored: 0,
    passed: 0,
    score_sum: 0,
    missing_outputs: 0,
    opened_at: at,
    completed_at: null,
  };
}

export interface RunSummary {
  readonly n: number;
  readonly passed: number;
  /** Mean case score; null before any case is scored. */
  readonly score: number | null;
  readonly pass_rate: number | null;
  readonly pass_rate_ci: { readonly lower: number; readonly upper: number; readonly level: 0.95 };
  /** R2: pass_rate >= pass_threshold; null until the run is completed. */
  readonly run_passed: boolean | null;
}

/** R2: score is the mean case score, pass rate passed/n with its 95% Wilson interval. */
export function summarizeRun(doc: RunDoc): RunSummary {
  const n = doc.scored;
  const interval = wilson(doc.passed, n);
  const passRate = n === 0 ? null : doc.passed / n;
  return {
    n,
    passed: doc.passed,
    score: n === 0 ? null : clamp01(doc.score_sum / n),
    pass_rate: passRate,
    pass_rate_ci: { lower: interval.lower, upper: interval.upper, level: 0.95 },
    run_passed: doc.status === 'completed' && passRate !== null ? passRate >= doc.pass_threshold : doc.status === 'completed' ? false : null,
  };
}

function clamp01(x: number): number {
  return Math.min(1, Math.max(0, x));
}
