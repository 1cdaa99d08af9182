import { validateScorerSpec, type CompiledScorer } from '@evals/scorers';
import { detailHash } from './detail-hash';
import { redactLabel } from './redaction';

/** What the scoring worker needs of a stored suite version. */
export interface ScorableSuite {
  readonly suite_key: string;
  readonly version: number;
  readonly default_scorer: Readonly<Record<string, unknown>>;
  readonly cases: ReadonlyArray<{
    readonly case_id: string;
    readonly expected?: unknown;
    readonly scorer: Readonly<Record<string, unknown>> | null;
  }>;
}

export interface CompiledCase {
  readonly case_id: string;
  readonly scorer: CompiledScorer;
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
    cases.set(c.case_id, { case_id: c.case_id, scorer: checked.scorer });
    versions[checked.scorer.name] = checked.scorer.version;
  }
  return { suite_key: suite.suite_key, version: suite.version, cases, scorer_versions: versions };
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
}

export interface ScoringContext {
  readonly runId: string;
  readonly hmacSecret: string;
  readonly scoredAt: string;
}

/** The label of a judge case while no judge is wired: scored as a failure, never a silent pass (GT2). */
export const JUDGE_NOT_CONFIGURED = 'judge_not_configured';
export const MISSING_OUTPUT = 'missing_output';

/** Scores one output. Total: the output never escapes into anything but the hash (D1). */
export function scoreCase(compiled: CompiledCase, output: string, ctx: ScoringContext): CaseEvidence {
  const base = {
    run_id: ctx.runId,
    case_id: compiled.case_id,
    scorer: compiled.scorer.name,
    scorer_version: compiled.scorer.version,
    detail_hash: detailHash(ctx.hmacSecret, output),
    output_chars: output.length,
    scored_at: ctx.scoredAt,
  };
  if (compiled.scorer.kind === 'judge') {
    return { ...base, score: 0, passed: false, label: JUDGE_NOT_CONFIGURED };
  }
  const result = compiled.scorer.score(output);
  return { ...base, score: result.score, passed: result.passed, label: redactLabel(result.label) };
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
