/**
 * One model of a run's life (R7), emmett style: `decide(command, state) -> events` and
 * `evolve(state, event) -> state`, both pure. Every fact about a run - is it sealed, was it sealed by its
 * owner or by expiry, may the judge be called, which of its cases were left unscored, may it serve as an
 * automatic baseline (G4) - is answered here, from the run's own events, so the apps fold the stream
 * through `evolve` instead of re-reading it by hand.
 *
 *   (none) --open--> open --seal--> sealed --record_scored--> scored --record_comparison--> compared
 *                     \--expire (after the TTL)--> sealed (reason `expired`) ...
 *
 * A command that breaks a rule throws `RunRuleError` with a stable code; a command that repeats what
 * already happened (the same open, a second seal, a redelivered result) decides no events, so callers may
 * retry freely (consumers are idempotent).
 */
import { DEFAULT_PROJECT } from '@evals/contracts';
import { verdictStability, type VerdictStability } from '../judge/repeats';
import { casesScoredCounts } from './case-outcomes';
import type { RunComparedV1, RunEvent, RunOpenedV1, RunScoredV1 } from './run-events';

export type RunPhase = 'none' | 'open' | 'sealed' | 'scored' | 'compared';

/** Why a run was sealed: its owner said so (HTTP request complete, `evals.run.sealed`), or it expired. */
export type SealReason = 'client' | 'expired';

/** The regression verdicts a comparison can reach (G2), and the ones a run gets without a comparison. */
export type RunVerdict = 'regressed' | 'inconclusive_noise' | 'no_regression' | 'no_baseline';

export interface RunState {
  readonly phase: RunPhase;
  readonly opened: RunOpenedV1 | null;
  /** When the run was opened (the event's time): the expiry clock starts here. */
  readonly opened_at: string | null;
  readonly seal_reason: SealReason | null;
  /** Whether any output arrived over the bus (`outputs.received`): a seal needs one (EMPTY_RUN). */
  readonly outputs_received: boolean;
  /** Running counts from `cases.scored`, replaced by the final ones at `run.scored`. */
  readonly scored: { readonly n: number; readonly passed: number; readonly score_sum: number };
  readonly result: RunScoredV1 | null;
  readonly verdict: RunVerdict | null;
  /** The regression decision as recorded (`run.compared`). */
  readonly compared: RunComparedV1 | null;
}

/** The project of a run (issue 30): what its `run.opened` names, `default` for runs opened before projects. */
export function runProject(state: Pick<RunState, 'opened'>): string {
  return state.opened?.project ?? DEFAULT_PROJECT;
}

export const initialRunState: RunState = {
  phase: 'none',
  opened: null,
  opened_at: null,
  seal_reason: null,
  outputs_received: false,
  scored: { n: 0, passed: 0, score_sum: 0 },
  result: null,
  verdict: null,
  compared: null,
};

export const RUN_RULE_CODES = {
  /** An outputs list with no output: nothing to score, and a 0/N run would poison the history. */
  emptyRun: 'EMPTY_RUN',
  /** The same run id with other content (compared by the hash of the canonical request). */
  runIdConflict: 'RUN_ID_CONFLICT',
  /** A seal, a result or a comparison for a run that was never opened. */
  runNotFound: 'RUN_NOT_FOUND',
  /** A result for a run that is not sealed yet. */
  runNotSealed: 'RUN_NOT_SEALED',
  /** An expiry before the run's time is up. */
  runNotExpired: 'RUN_NOT_EXPIRED',
  /** A comparison for a run whose scoring is not over. */
  runNotScored: 'RUN_NOT_SCORED',
} as const;

export type RunRuleCode = (typeof RUN_RULE_CODES)[keyof typeof RUN_RULE_CODES];

export class RunRuleError extends Error {
  constructor(
    readonly code: RunRuleCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'RunRuleError';
  }
}

export type RunCommand =
  | {
      readonly type: 'open';
      readonly data: RunOpenedV1;
      /** Hash of the canonical request (outputs included): the same id with other content is a conflict. */
      readonly request_hash: string;
      /** Outputs in the request; null when they follow over the bus. */
      readonly outputs: number | null;
    }
  /** Outputs arrive over the bus for an open run: recorded once, before the first is forwarded. */
  | { readonly type: 'receive_outputs'; readonly run_id: string }
  | {
      readonly type: 'seal';
      readonly run_id: string;
      /**
       * Outputs the sealing request itself carried (an HTTP request's). Absent: the seal of a run whose outputs
       * came over the bus, which must have received one (`outputs.received`), else EMPTY_RUN.
       */
      readonly received?: number;
      /**
       * Issue 30: the project of the caller. A run of another project is refused as if it did not exist, on
       * every attempt of the decision - also one retried after another project opened the id meanwhile.
       */
      readonly project?: string;
    }
  | { readonly type: 'expire'; readonly run_id: string; readonly now: string; readonly ttl_seconds: number }
  | { readonly type: 'record_scored'; readonly data: RunScoredV1 }
  | { readonly type: 'record_comparison'; readonly run_id: string; readonly verdict: RunVerdict; readonly decision?: Omit<RunComparedV1, 'run_id' | 'verdict'> };

/**
 * The events a command adds to the run's stream, given the state folded from the stream so far. Events
 * carry data only; the caller wraps them with metadata (ids, causation, clock) when it appends them.
 */
export function decide(command: RunCommand, state: RunState): RunEvent[] {
  switch (command.type) {
    case 'open': {
      if (command.outputs === 0) throw new RunRuleError(RUN_RULE_CODES.emptyRun, 'the outputs list is empty: a run needs at least one output', 'outputs');
      if (state.phase !== 'none') {
        if (state.opened?.request_hash !== undefined && state.opened.request_hash !== command.request_hash) {
          throw new RunRuleError(
            RUN_RULE_CODES.runIdConflict,
            `run ${command.data.run_id} exists with other content; use a new run_id for a new run`,
            'run_id',
          );
        }
        return [];
      }
      return [{ type: 'run.opened', version: 1, data: { ...command.data, request_hash: command.request_hash } }];
    }
    case 'receive_outputs': {
      const opened = requireOpened(state, command.run_id);
      if (state.phase !== 'open' || state.outputs_received) return [];
      return [{ type: 'outputs.received', version: 1, data: { run_id: opened.run_id } }];
    }
    case 'seal': {
      const opened = requireOpened(state, command.run_id, command.project);
      if (state.phase !== 'open') return [];
      const received = command.received ?? (state.outputs_received ? 1 : 0);
      // Sealed with nothing, it would complete as 0/N and become a baseline that masks the next regression.
      if (received === 0) throw new RunRuleError(RUN_RULE_CODES.emptyRun, `run ${opened.run_id} received no output; it stays open until it expires`, 'run_id');
      return [{ type: 'run.sealed', version: 1, data: { run_id: opened.run_id } }];
    }
    case 'expire': {
      const opened = requireOpened(state, command.run_id);
      if (state.phase !== 'open') return [];
      // A run whose opening time is unknown (a fold without times) cannot be due: refused, never a crash.
      const due = Date.parse(state.opened_at ?? '') + command.ttl_seconds * 1000;
      if (Number.isNaN(due)) throw new RunRuleError(RUN_RULE_CODES.runNotExpired, `run ${opened.run_id} was opened at an unknown time`, 'run_id');
      if (!(Date.parse(command.now) >= due)) {
        throw new RunRuleError(RUN_RULE_CODES.runNotExpired, `run ${opened.run_id} is open until ${new Date(due).toISOString()}`, 'run_id');
      }
      return [{ type: 'run.sealed', version: 1, data: { run_id: opened.run_id, reason: 'expired' } }];
    }
    case 'record_scored': {
      requireOpened(state, command.data.run_id);
      if (state.phase === 'open') throw new RunRuleError(RUN_RULE_CODES.runNotSealed, `run ${command.data.run_id} is not sealed`, 'run_id');
      if (state.phase !== 'sealed') return [];
      return [{ type: 'run.scored', version: 1, data: command.data }];
    }
    case 'record_comparison': {
      requireOpened(state, command.run_id);
      if (state.phase === 'open' || state.phase === 'sealed') {
        throw new RunRuleError(RUN_RULE_CODES.runNotScored, `run ${command.run_id} is not scored yet`, 'run_id');
      }
      if (state.phase === 'compared') return [];
      return [{ type: 'run.compared', version: 1, data: { run_id: command.run_id, verdict: command.verdict, ...(command.decision ?? {}) } }];
    }
  }
}

/** The state after one event. Unknown transitions leave the state as it is (a redelivered event). */
export function evolve(state: RunState, event: RunEvent, occurredAt?: string): RunState {
  switch (event.type) {
    case 'run.opened':
      return state.phase === 'none' ? { ...state, phase: 'open', opened: event.data, opened_at: occurredAt ?? null } : state;
    case 'outputs.received':
      return state.phase === 'open' ? { ...state, outputs_received: true } : state;
    case 'run.sealed':
      return state.phase === 'open' ? { ...state, phase: 'sealed', seal_reason: event.data.reason ?? 'client' } : state;
    case 'cases.scored': {
      const c = casesScoredCounts(event);
      if ((state.phase !== 'open' && state.phase !== 'sealed') || c === null) return state;
      return { ...state, scored: { n: state.scored.n + c.n, passed: state.scored.passed + c.passed, score_sum: state.scored.score_sum + c.score_sum } };
    }
    case 'run.scored':
      return state.phase === 'sealed'
        ? { ...state, phase: 'scored', result: event.data, scored: { n: event.data.n, passed: event.data.passed, score_sum: event.data.score_sum } }
        : state;
    case 'run.compared':
      return state.phase === 'scored' ? { ...state, phase: 'compared', verdict: event.data.verdict, compared: event.data } : state;
  }
}

/** Folds a run's stream (events with their times) into its state. */
export function foldRun(events: ReadonlyArray<{ readonly event: RunEvent; readonly occurred_at?: string }>): RunState {
  return events.reduce((s, e) => evolve(s, e.event, e.occurred_at), initialRunState);
}

/** The run's opening; a run never opened - or, when `project` is given, opened by another project - is not found, alike. */
function requireOpened(state: RunState, runId: string, project?: string): RunOpenedV1 {
  if (state.opened === null || (project !== undefined && runProject(state) !== project)) throw new RunRuleError(RUN_RULE_CODES.runNotFound, `no run ${runId}`, 'run_id');
  return state.opened;
}

// ------------------------------------------------------------------------------------------------------
// Facts about a run, answered from its state.

export function isSealed(state: RunState): boolean {
  return state.phase === 'sealed' || state.phase === 'scored' || state.phase === 'compared';
}

/**
 * A monitor run (D3, `source: session_sample`) scores one suite case per sampled session - evidence ids
 * `<case>@<session>` - so it has no fixed case list: whatever sessions its window sampled are its cases.
 */
export function isMonitorRun(state: RunState): boolean {
  return state.opened?.source === 'session_sample';
}

/**
 * The cases the run must score: its sample's when the gate sampled (GT3), else every case of the suite
 * version; none is required of a monitor run.
 */
export function runCaseIds(state: RunState, suiteCaseIds: readonly string[]): readonly string[] {
  if (isMonitorRun(state)) return [];
  return state.opened?.sample ? state.opened.sample.case_ids : suiteCaseIds;
}

/** The cases with no output at the seal (R1), given the ones that have evidence. */
export function missingAtSeal(state: RunState, suiteCaseIds: readonly string[], withEvidence: ReadonlySet<string>): string[] {
  return runCaseIds(state, suiteCaseIds).filter((id) => !withEvidence.has(id));
}

/** The label judge cases get instead of a call, when the run says the judge must not be called (GT4). */
export function judgeSkipLabel(state: RunState): string | null {
  const skip = state.opened?.judge_skip;
  return typeof skip === 'string' && skip !== '' ? skip : null;
}

/**
 * Per judge case, the label it gets instead of a call, or null when it may be judged: the run's
 * `judge_skip` for every case, else `budget_throttled` for a case outside a throttling budget's room (GT4).
 * Built once per run (the throttle's cases as a set).
 */
export function judgeSkipLabelFor(state: RunState): (caseId: string) => string | null {
  const all = judgeSkipLabel(state);
  if (all !== null) return () => all;
  const throttle = state.opened?.judge_throttle;
  if (!throttle) return () => null;
  const allowed = new Set(throttle.case_ids);
  return (caseId) => (allowed.has(caseId) ? null : BUDGET_THROTTLED);
}

/** The label of a judge case a throttling budget had no room for (GT4): unscored, counted as failed. */
export const BUDGET_THROTTLED = 'budget_throttled';

/** Issue 13: the run's verdict stability with its Wilson interval, or null when no case was judged with repeats. */
export function judgeStability(state: RunState): VerdictStability | null {
  const counts = state.result?.judge_stability;
  return counts ? verdictStability(counts) : null;
}

/** Whether the judge may be called for this run's `llm_judge` cases. */
export function judgeMayBeCalled(state: RunState): boolean {
  return judgeSkipLabel(state) === null;
}

/** Cases of a scored run that have no real score: no output, or a judge case without a verdict. */
export function unscoredCases(result: RunScoredV1): { readonly missing_output: number; readonly judge_unscored: number } {
  const j = result.judge;
  const judgeUnscored = j ? j.errors + j.credential_missing + j.not_configured + j.skipped : 0;
  return { missing_output: result.missing_count ?? result.missing_case_ids.length, judge_unscored: judgeUnscored };
}

/**
 * A scored run is `complete` when every case has an output and a score; `incomplete` when some were left
 * unscored (a judge that was skipped, refused or failed, a missing output); `expired` when nobody sealed it.
 */
export type RunCompleteness = 'complete' | 'incomplete' | 'expired';

export function completeness(state: RunState): RunCompleteness | null {
  if (state.result === null) return null;
  if (state.seal_reason === 'expired') return 'expired';
  const u = unscoredCases(state.result);
  return u.missing_output + u.judge_unscored > 0 ? 'incomplete' : 'complete';
}

export type IneligibleReason = 'not_scored' | 'expired' | 'incomplete' | 'regressed' | 'inconclusive_noise' | 'no_verdict';

export type BaselineEligibility = { readonly eligible: true } | { readonly eligible: false; readonly reason: IneligibleReason };

/**
 * G4 (revised): a run may become the automatic baseline only when it completed with every case scored and
 * its own verdict is `no_regression` or `no_baseline`. Otherwise one empty outputs file, one skipped judge
 * or one bad release would become the reference the next run is measured against: the empty run masks
 * the next regression, the regressed one ratchets quality down (docs/EVAL-METHODOLOGY.md).
 */
export function baselineEligibility(facts: { readonly completeness: RunCompleteness | null; readonly verdict: string | null }): BaselineEligibility {
  if (facts.completeness === null) return { eligible: false, reason: 'not_scored' };
  if (facts.completeness !== 'complete') return { eligible: false, reason: facts.completeness };
  if (facts.verdict === 'regressed' || facts.verdict === 'inconclusive_noise') return { eligible: false, reason: facts.verdict };
  if (facts.verdict !== 'no_regression' && facts.verdict !== 'no_baseline') return { eligible: false, reason: 'no_verdict' };
  return { eligible: true };
}
