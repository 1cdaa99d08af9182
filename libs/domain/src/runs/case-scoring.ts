import { validateScorerSpec, type CompiledScorer } from '@evals/scorers';
import { JudgeError, type JudgeRequest, type JudgeVerdict, judgeOutcome } from '../judge/judge.port';
import { canonicalJson } from '../suites/canonical-json';
import { detailHash } from './detail-hash';
import { redactLabel } from './redaction';

/** What the scoring worker needs of a stored suite version. */
export interface ScorableSuite {
  readonly suite_key: string;
  readonly version: number;
  readonly default_scorer: Readonly<Record<string, unknown>>;
  readonly cases: ReadonlyArray<{
    readonly case_id: string;
    /** The task input (suite content); the judge reads it for context (S3). */
    readonly input?: unknown;
    readonly expected?: unknown;
    readonly scorer: Readonly<Record<string, unknown>> | null;
  }>;
}

export interface CompiledCase {
  readonly case_id: string;
  readonly scorer: CompiledScorer;
  /** `llm_judge` cases only: what the judge is shown beside the output (suite content, never an output). */
  readonly judge?: { readonly expected?: unknown; readonly input?: string };
}

/** A suite version with every case's scorer compiled once (regexes included) and kept for its lifetime. */
export interface CompiledSuite {
  readonly suite_key: string;
  readonly version: number;
  readonly cases: ReadonlyMap<string, CompiledCase>;
  /** Scorer name -> version, for evidence and for "what changed" between runs (G4). */
  readonly scorer_versions: Readonly<Record<string, string>>;
}

export class SuiteCompileError extends Error {
  readonly code = 'SUITE_NOT_SCORABLE';
}

/**
 * Compiles a stored suite version. Suites are validated when created (S4), so a failure here means the
 * stored content predates a scorer change; it is refused loudly rather than scored wrongly.
 */
export function compileSuite(suite: ScorableSuite): CompiledSuite {
  const cases = new Map<string, CompiledCase>();
  const versions: Record<string, string> = {};
  for (const c of suite.cases) {
    const spec = c.scorer ?? suite.default_scorer;
    // `undefined` is "no expected"; `null` is an authored JSON null (json_equal may expect it).
    const checked = validateScorerSpec(spec, c.expected === undefined ? {} : { expected: c.expected });
    if (!checked.ok) {
      throw new SuiteCompileError(`suite ${suite.suite_key} v${suite.version} case ${c.case_id}: ${checked.issues.map((i) => `${i.field}: ${i.code}`).join('; ')}`);
    }
    const judge = checked.scorer.kind === 'judge' ? judgeMaterial(c.input, c.expected) : undefined;
    cases.set(c.case_id, judge ? { case_id: c.case_id, scorer: checked.scorer, judge } : { case_id: c.case_id, scorer: checked.scorer });
    versions[checked.scorer.name] = checked.scorer.version;
  }
  return { suite_key: suite.suite_key, version: suite.version, cases, scorer_versions: versions };
}

/** The judge's view of a case: `expected` as authored (absent stays absent), the input as text. */
function judgeMaterial(input: unknown, expected: unknown): { expected?: unknown; input?: string } {
  const text = input === undefined || input === null ? undefined : typeof input === 'string' ? input : canonicalJson(input);
  return { ...(expected === undefined ? {} : { expected }), ...(text === undefined ? {} : { input: text }) };
}

/**
 * What a judged case records about the judge (J1, J2, J6): the exact model pin, the prompt version, the
 * call's tokens and cost, and whether the verdict came from the gate's cache. Never the reasoning.
 */
export interface JudgeEvidence {
  readonly judge_model: string;
  readonly prompt_version: string;
  readonly judge_cost_usd: number;
  readonly judge_input_tokens: number;
  readonly judge_output_tokens: number;
  /** true: a recorded verdict (cache hit); false: looked up and missed (gate); null: cache not used. */
  readonly judge_cached: boolean | null;
  /** `repeats: k` cases only (issue 13): k, and how many of the k calls passed; absent for a single call. */
  readonly judge_repeats?: number;
  readonly judge_pass_votes?: number;
}

/** One case's evidence (R3, D2): the score and a redacted label, a keyed hash of the output, its length. */
export interface CaseEvidence {
  readonly run_id: string;
  readonly case_id: string;
  readonly scorer: string;
  readonly scorer_version: string;
  readonly score: number;
  readonly passed: boolean;
  readonly label: string;
  readonly detail_hash: string | null;
  readonly output_chars: number | null;
  readonly scored_at: string;
  /** `llm_judge` cases that reached the judge (S3). */
  readonly judge?: JudgeEvidence;
}

export interface ScoringContext {
  readonly runId: string;
  readonly hmacSecret: string;
  readonly scoredAt: string;
}

/** The label of a judge case while no judge is wired: scored as a failure, never a silent pass (GT2). */
export const JUDGE_NOT_CONFIGURED = 'judge_not_configured';
export const MISSING_OUTPUT = 'missing_output';

/**
 * Scores one output. Total: the output never escapes into anything but the hash (D1). `hash`: the output's
 * `detailHash` under `ctx.hmacSecret` when the caller has it already (the ingestion made it for the request
 * hash); otherwise it is computed here.
 */
export function scoreCase(compiled: CompiledCase, output: string, ctx: ScoringContext, hash?: string): CaseEvidence {
  const scorer = compiled.scorer;
  const detail_hash = hash ?? detailHash(ctx.hmacSecret, output);
  // One object literal per case, in the key order evidence always had (a spread of a base object was a
  // second allocation per output in the worker's hot loop).
  if (scorer.kind === 'judge') {
    return {
      run_id: ctx.runId,
      case_id: compiled.case_id,
      scorer: scorer.name,
      scorer_version: scorer.version,
      detail_hash,
      output_chars: output.length,
      scored_at: ctx.scoredAt,
      score: 0,
      passed: false,
      label: JUDGE_NOT_CONFIGURED,
    };
  }
  const result = scorer.score(output);
  return {
    run_id: ctx.runId,
    case_id: compiled.case_id,
    scorer: scorer.name,
    scorer_version: scorer.version,
    detail_hash,
    output_chars: output.length,
    scored_at: ctx.scoredAt,
    score: result.score,
    passed: result.passed,
    label: scorerLabel(result.label),
  };
}

// Deterministic scorers answer from a fixed vocabulary that never quotes the output (D1, `Scorer.labels`), so
// a label's redaction - a dozen regular expressions - is made once per label, not once per case. Bounded.
const redactedLabels = new Map<string, string>();
const MAX_REDACTED_LABELS = 256;

function scorerLabel(label: string): string {
  let redacted = redactedLabels.get(label);
  if (redacted === undefined) {
    redacted = redactLabel(label);
    if (redactedLabels.size < MAX_REDACTED_LABELS) redactedLabels.set(label, redacted);
  }
  return redacted;
}

/** The request the judge grades for a `llm_judge` case (S3), or null for any other scorer. */
export function judgeRequestFor(compiled: CompiledCase, output: string): JudgeRequest | null {
  if (compiled.scorer.kind !== 'judge') return null;
  const material = compiled.judge ?? {};
  return {
    output,
    rubric: compiled.scorer.config.rubric,
    ...('expected' in material ? { expected: material.expected } : {}),
    ...(material.input !== undefined ? { input: material.input } : {}),
  };
}

/** What the judge call behind a case cost and was; `cacheUsed` says whether the run looked the verdict up (J6). */
export interface JudgeCallRecord {
  readonly model: string;
  readonly promptVersion: string;
  readonly cacheUsed: boolean;
}

/**
 * A judged case's evidence (S3, J3): the verdict's score and the S3 pass rule, or for an error score 0,
 * failed, label = the error code (never a pass). Usage and cost of the call - also of an unparseable
 * reply, which was paid for - with the model pin and prompt version. The output only as hash and length.
 */
export function judgedCaseEvidence(compiled: CompiledCase, output: string, result: JudgeVerdict | JudgeError, call: JudgeCallRecord, ctx: ScoringContext): CaseEvidence {
  if (compiled.scorer.kind !== 'judge') throw new TypeError(`case ${compiled.case_id} is not an llm_judge case`);
  const outcome = judgeOutcome(result, compiled.scorer.config.minScore);
  const verdict = result instanceof JudgeError ? null : result;
  const usage = result instanceof JudgeError ? result.details.usage : result.usage;
  const cost = result instanceof JudgeError ? (result.details.cost_usd ?? 0) : result.cost_usd;
  return {
    run_id: ctx.runId,
    case_id: compiled.case_id,
    scorer: compiled.scorer.name,
    scorer_version: compiled.scorer.version,
    score: outcome.score,
    passed: outcome.passed,
    label: redactLabel(outcome.label),
    detail_hash: detailHash(ctx.hmacSecret, output),
    output_chars: output.length,
    scored_at: ctx.scoredAt,
    judge: {
      judge_model: verdict?.model ?? call.model,
      prompt_version: verdict?.prompt_version ?? call.promptVersion,
      judge_cost_usd: Number.isFinite(cost) && cost > 0 ? cost : 0,
      judge_input_tokens: usage?.input_tokens ?? 0,
      judge_output_tokens: usage?.output_tokens ?? 0,
      judge_cached: call.cacheUsed ? verdict?.cached === true : null,
    },
  };
}

/** A judge case that is not sent to the judge (e.g. the gate's budget said no - GT4): failed, with that label. */
export function judgeSkippedEvidence(compiled: CompiledCase, output: string, label: string, ctx: ScoringContext, hash?: string): CaseEvidence {
  return { ...scoreCase(compiled, output, ctx, hash), score: 0, passed: false, label: redactLabel(label) };
}

/** R1: a case with no output fails with label `missing_output`. */
export function missingOutputEvidence(compiled: CompiledCase, ctx: Omit<ScoringContext, 'hmacSecret'>): CaseEvidence {
  return {
    run_id: ctx.runId,
    case_id: compiled.case_id,
    scorer: compiled.scorer.name,
    scorer_version: compiled.scorer.version,
    score: 0,
    passed: false,
    label: MISSING_OUTPUT,
    detail_hash: null,
    output_chars: null,
    scored_at: ctx.scoredAt,
  };
}
