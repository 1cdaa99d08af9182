/**
 * The scorer port (S1, S4, S5). Every deterministic scorer is one file `<name>.scorer.ts` that exports a
 * `Scorer<Config>`; the registry (`registry.ts`) lists them. Suites (libs/domain) validate a case's scorer
 * spec through `validateScorerSpec` when a suite version is created, so a bad config is refused there and
 * never discovered mid-run.
 */

/** What a scorer returns for one case. `label` comes from a fixed vocabulary: it never quotes the output (D1). */
export interface ScoreResult {
  /** In [0, 1]. Deterministic scorers are binary: 1 when passed, 0 otherwise. */
  readonly score: number;
  readonly passed: boolean;
  /** Short machine-readable reason from the scorer's fixed vocabulary, e.g. `match`, `invalid_json`, `below_min`. */
  readonly label: string;
}

/** What a scorer sees of the case besides the candidate output. */
export interface ScoreContext {
  /** The case's `expected` value from the suite, as parsed from YAML/JSON (string, number, object, ...). */
  readonly expected?: unknown;
}

/** One problem with a scorer spec, naming the field (relative to the scorer spec object). */
export interface ScorerConfigIssue {
  /** Stable error code, e.g. `SCORER_UNKNOWN`, `SCORER_OPTION_INVALID`, `REGEX_UNSUPPORTED`. */
  readonly code: string;
  /**
   * Field path inside the scorer spec, e.g. `pattern`, `flags`, `min` (options sit flat next to `type`);
   * `expected` when the problem is the case's expected value; `type` for the scorer type itself.
   */
  readonly field: string;
  readonly message: string;
}

export type ConfigValidation<C> =
  | { readonly ok: true; readonly config: C }
  | { readonly ok: false; readonly issues: readonly ScorerConfigIssue[] };

export interface Scorer<C> {
  /** Deterministic scorers are pure functions of (output, config); see `JudgeScorer` for `llm_judge`. */
  readonly kind: 'deterministic';
  /** Registry name, e.g. `exact`. */
  readonly name: string;
  /** Bumped whenever the semantics change; goes into evidence and cache keys (S4). */
  readonly version: string;
  /** The option keys accepted next to `type` in a scorer spec; any other key is refused (S4). */
  readonly options: readonly string[];
  /** Every label `score` can return: a fixed vocabulary that never quotes the output (D1). */
  readonly labels: readonly string[];
  /**
   * Validates the raw scorer spec (everything but `type`) and returns the typed, compiled config
   * (e.g. a compiled linear-time regex). `expected` is the case's expected value, for scorers that need it.
   */
  validate(raw: Readonly<Record<string, unknown>>, ctx: ScoreContext): ConfigValidation<C>;
  /** Never throws, for any output of any size or encoding (S5): failing is data. */
  score(output: string, config: C, ctx: ScoreContext): ScoreResult;
}

/**
 * The `llm_judge` scorer (S3): only its config is validated here; the judge port (J1-J6, built later)
 * scores it. It has no `score` function, so the type system keeps a judge spec away from the deterministic
 * path.
 */
export interface JudgeScorer<C> {
  readonly kind: 'judge';
  readonly name: string;
  readonly version: string;
  readonly options: readonly string[];
  validate(raw: Readonly<Record<string, unknown>>, ctx: ScoreContext): ConfigValidation<C>;
}

/** The result of a passing deterministic check (binary: score 1). */
export function pass(label: string): ScoreResult {
  return { score: 1, passed: true, label };
}

/** The result of a failing deterministic check (binary: score 0). */
export function fail(label: string): ScoreResult {
  return { score: 0, passed: false, label };
}
