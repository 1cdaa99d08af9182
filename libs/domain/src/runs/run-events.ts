/**
 * The internal events of a run, between the apps (docs/pipeline.md). They follow the house envelope
 * `{type, version, data, metadata}` and are relayed on `evals.event.<type>`. One interface per version;
 * a breaking change adds a `V2` beside it and both are read while old events remain in the log.
 * None of them carries a candidate output (D1): evidence is reduced to score, verdict and label.
 * Readers validate them with `decodeRunEvent` (run-event.codec.ts).
 */
import { decodeRunEvent } from './run-event.codec';

export const RUN_EVENTS = {
  opened: 'run.opened',
  outputsReceived: 'outputs.received',
  sealed: 'run.sealed',
  casesScored: 'cases.scored',
  scored: 'run.scored',
  compared: 'run.compared',
} as const;

export type RunEventType = (typeof RUN_EVENTS)[keyof typeof RUN_EVENTS];

/**
 * Run events written to the log and never relayed to the bus: `outputs.received` tells the run's own model,
 * folded from the log, that a seal has outputs behind it; no consumer of `evals.event.>` uses it (the read
 * model's aggregate ignores it, the regression app reads `run.scored` alone). Relayed, it cost every run a
 * publish, a stored message, a delivery, an acknowledgement, an outbox row and its mark (issue 28). The
 * read model's rebuild and its catch-up read the log, where it still is.
 */
export const LOG_ONLY_RUN_EVENTS: ReadonlySet<RunEventType> = new Set([RUN_EVENTS.outputsReceived]);

export type RunSource = 'sandbox' | 'ci' | 'inline' | 'session_sample';

export interface RunOpenedV1 {
  readonly run_id: string;
  /**
   * Issue 30: the project the run belongs to (docs/adr/0009-projects.md); absent in runs opened before
   * projects, which belong to `default`. Every fact of the run is scoped by it: read it with `runProject`.
   */
  readonly project?: string;
  readonly suite_key: string;
  readonly suite_version: number;
  readonly suite_content_hash: string;
  readonly pass_threshold: number;
  readonly regression_threshold: number;
  readonly subject_kind: string;
  readonly subject_id: string;
  readonly variant: string | null;
  readonly baseline_run_id: string | null;
  readonly source: RunSource;
  readonly case_count: number;
  /** Scorer name -> version for every scorer the suite version uses (G4: what changed between runs). */
  readonly scorer_versions: Readonly<Record<string, string>>;
  /** GT3: a gate run scores only the cases its seed sampled; `case_count` is then the sample size. */
  readonly sample?: { readonly size: number; readonly seed: string; readonly case_ids: readonly string[] } | null;
  /** J6: judge calls of this run go through the verdict cache (gate runs only). */
  readonly judge_cache?: boolean;
  /** GT4: the judge must not be called at all; judge cases fail with this label (e.g. `budget_blocked`). */
  readonly judge_skip?: string | null;
  /**
   * GT4, a throttling budget (issue 13): only these judge cases may be judged - as many as the budget had
   * room for - and every other judge case fails `budget_throttled` without a call (unscored, never a pass).
   * Absent or null: no throttle.
   */
  readonly judge_throttle?: { readonly case_ids: readonly string[] } | null;
  /**
   * R7: hash of the canonical request that opened the run, outputs included: the same run id with the same
   * content is the same run (idempotent), with other content a conflict. Absent in runs opened before it.
   */
  readonly request_hash?: string;
}

/**
 * R7: the run's first output arrived over the bus (`evals.output.submitted`, a monitor signal), recorded
 * before it is forwarded, once per run. A seal for a run that never received one is refused EMPTY_RUN.
 */
export interface OutputsReceivedV1 {
  readonly run_id: string;
}

export interface RunSealedV1 {
  readonly run_id: string;
  /** R7: `expired` when the system sealed a run nobody sealed within its time; absent = its owner sealed it. */
  readonly reason?: 'client' | 'expired';
}

/**
 * The run's regression decision (G1-G7), made by the regression app and recorded on the run's stream, so
 * every reader - the read model's views and scorecards, the gate - folds it from the log instead of reading
 * the regression app's tables. Counts, intervals and ids only (D1).
 */
export interface RunComparedV1 {
  readonly run_id: string;
  readonly verdict: 'regressed' | 'inconclusive_noise' | 'no_regression' | 'no_baseline';
  /** R7: whether every case was scored; decides, with the verdict, whether the run may be a baseline. */
  readonly completeness?: 'complete' | 'incomplete' | 'expired';
  readonly baseline_run_id?: string | null;
  /** G5: explicit, pinned or automatic; null without a baseline. */
  readonly chosen_by?: string | null;
  /** The comparison as the regression app reports it (score drop, interval, compared cases, changes), or an error. */
  readonly comparison?: unknown;
  /** G2: the finding raised for a regression. */
  readonly finding_id?: string | null;
}

export interface CaseResultV1 {
  readonly case_id: string;
  readonly scorer: string;
  readonly scorer_version: string;
  readonly score: number;
  readonly passed: boolean;
  /** Fixed-vocabulary scorer label, redacted and clamped (D2). */
  readonly label: string;
  /** `llm_judge` cases: the exact judge model pin and prompt version that graded it (G4: what changed). */
  readonly judge_model?: string;
  readonly prompt_version?: string;
}

/**
 * v1 (no longer written; still read, so an event log from before v2 projects and rebuilds): one batch of
 * newly inserted evidence rows, each result in full.
 */
export interface CasesScoredV1 {
  readonly run_id: string;
  readonly results: readonly CaseResultV1[];
}

/**
 * v2 (no longer written; still read): one batch of newly inserted evidence rows, as the counts the run aggregate needs. The rows themselves
 * are in the evidence table; repeating them here wrote every result three times (evidence, event, outbox)
 * and cost the pipeline most of its throughput (docs/benchmarks.md). A redelivered batch inserts nothing and
 * emits nothing.
 */
export interface CasesScoredV2 {
  readonly run_id: string;
  /** Evidence rows inserted by the batch for this run. */
  readonly n: number;
  readonly passed: number;
  readonly score_sum: number;
}

/**
 * v3 (issue 27): the counts of v2 plus the batch's per-case results, columnar (case-outcomes.ts): the
 * regression app pairs runs and the read model shows cases from these, never from the worker's evidence
 * table. At most MAX_CASES_PER_EVENT cases per event; a batch with more appends several on its stream. The
 * seal writes one for the `missing_output` rows it inserts. Never an output (D1); labels redacted (D2).
 */
export interface CasesScoredV3 {
  readonly run_id: string;
  /** Cases of this event (`case_ids.length`), how many passed, the sum of their scores. */
  readonly n: number;
  readonly passed: number;
  readonly score_sum: number;
  readonly case_ids: readonly string[];
  /** Base64 of ceil(n / 8) bytes: bit i % 8 of byte i / 8 is whether case i passed; the unused bits are 0. */
  readonly passed_bits: string;
  /** The scores that are not their verdict's (1 passed, 0 failed): ascending case indexes and their scores. */
  readonly score_at: readonly number[];
  readonly score_values: readonly number[];
  /** Distinct labels (redacted, D2), and each case's index into them. */
  readonly labels: readonly string[];
  readonly label_of: readonly number[];
  /** Distinct [scorer, scorer_version]; `scorer_of` each case's index, absent when there is one. */
  readonly scorers: ReadonlyArray<readonly [string, string]>;
  readonly scorer_of?: readonly number[];
  /** Distinct [judge_model, prompt_version] pins; `judge_of` each case's index, -1 for none; both absent when no case was judged. */
  readonly judges?: ReadonlyArray<readonly [string, string]>;
  readonly judge_of?: readonly number[];
  /** Distinct `scored_at` times; `scored_at_of` each case's index, absent when there is one. */
  readonly scored_at: readonly string[];
  readonly scored_at_of?: readonly number[];
  /**
   * Written by the upgrade to v3 (migration CaseOutcomes1796500000000) for rows that earlier v1/v2 events
   * counted already: folders take the results and leave the counts alone.
   */
  readonly backfill?: true;
}

/** Scoring is over: the aggregate as computed from the evidence table in the sealing transaction. */
export interface RunScoredV1 {
  readonly run_id: string;
  readonly n: number;
  readonly passed: number;
  readonly score_sum: number;
  /** How many cases had no output (R1). */
  readonly missing_count?: number;
  /** The first MAX_LISTED_MISSING of them: a 100 000-case run with no outputs must still fit one message. */
  readonly missing_case_ids: readonly string[];
  /** The run's judge usage, summed from its evidence; present when the suite version has `llm_judge` cases. */
  readonly judge?: RunJudgeUsageV1;
  /** R7: the run was sealed by expiry, not by its owner (so its EvalResult says so whatever the delivery order). */
  readonly expired?: true;
  /** Issue 13: the verdict stability of its cases judged with `repeats`; absent when none was. */
  readonly judge_stability?: RunJudgeStabilityV1;
}

/**
 * How often a run's repeated judge verdicts agreed (issue 13), counted from its evidence: the cases judged
 * `repeats: k` times, those whose k votes agree, and the others by id. The rate and its interval are the
 * run model's (`RunModel.judgeStability`), computed from these counts.
 */
export interface RunJudgeStabilityV1 {
  readonly repeats: number;
  readonly cases: number;
  readonly stable: number;
  /** In case id order, at most MAX_LISTED_UNSTABLE. */
  readonly unstable_case_ids: readonly string[];
}

/**
 * What the judge did for one run (J1, J6, GT2, GT4), summed over its `llm_judge` evidence. Counts, tokens
 * and money only. `model`/`prompt_version` are the pin that graded the cases (null when none was called).
 */
export interface RunJudgeUsageV1 {
  /** `llm_judge` cases that had an output (missing outputs are not judge cases here). */
  readonly cases: number;
  /** Judge calls made for them: cases neither answered from the cache nor refused before any call. */
  readonly calls: number;
  /** Cases whose judge call ended in an error code (`judge_unparseable`, `judge_timeout`, ...). */
  readonly errors: number;
  /** Cases failed `judge_credential_missing`: no key, no call (GT2: the gate declares a warning). */
  readonly credential_missing: number;
  /** Cases failed `judge_not_configured`: the worker has no judge. */
  readonly not_configured: number;
  /** Cases failed without a call because the run said so (`judge_skip`, e.g. `budget_blocked` - GT4). */
  readonly skipped: number;
  /** Gate runs (J6): recorded verdicts used, and lookups that missed (and called the judge). */
  readonly cache_hits: number;
  readonly cache_misses: number;
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly cost_usd: number;
  readonly model: string | null;
  readonly prompt_version: string | null;
}

export type RunEvent =
  | { readonly type: 'run.opened'; readonly version: 1; readonly data: RunOpenedV1 }
  | { readonly type: 'outputs.received'; readonly version: 1; readonly data: OutputsReceivedV1 }
  | { readonly type: 'run.sealed'; readonly version: 1; readonly data: RunSealedV1 }
  | { readonly type: 'cases.scored'; readonly version: 1; readonly data: CasesScoredV1 }
  | { readonly type: 'cases.scored'; readonly version: 2; readonly data: CasesScoredV2 }
  | { readonly type: 'cases.scored'; readonly version: 3; readonly data: CasesScoredV3 }
  | { readonly type: 'run.scored'; readonly version: 1; readonly data: RunScoredV1 }
  | { readonly type: 'run.compared'; readonly version: 1; readonly data: RunComparedV1 };

export const MAX_LISTED_MISSING = 1000;

export function runStreamId(runId: string): string {
  return `run-${runId}`;
}

/**
 * The legacy name of `decodeRunEvent` (run-event.codec.ts), kept for its callers: the same validation, the
 * event or `{error}` with the codec's reason (field names and constraints only, D1). New code calls the codec.
 */
export function parseRunEvent(raw: unknown): RunEvent | { readonly error: string } {
  const decoded = decodeRunEvent(raw);
  return decoded.ok ? decoded.event : { error: decoded.reason };
}
