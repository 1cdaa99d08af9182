/**
 * The scorer registry (S4): one entry per scorer file, and the one entry point suites use to validate a
 * case's scorer spec when a suite version is created.
 *
 * A scorer spec is an object with `type` and the scorer's options flat next to it:
 *   `{ type: 'exact', trim: true }`, `{ type: 'regex', pattern: '^a', flags: 'i' }`,
 *   `{ type: 'numeric_range', min: 0, max: 10 }`, `{ type: 'llm_judge', rubric: '...' }`.
 * `validateScorerSpec` compiles it, with the case's `expected` (ctx), into a `CompiledScorer`: for a
 * deterministic scorer a total `score(output)` with the config bound; for `llm_judge` the validated config
 * only (the judge port scores it).
 */
import { ALL_OPTIONS_SCHEMA, createAllScorer, type ChildCompilation } from './all.scorer';
import { CONTAINS_ANY_OPTIONS_SCHEMA, containsAnyScorer } from './contains-any.scorer';
import { CONTAINS_JSON_OPTIONS_SCHEMA, containsJsonScorer } from './contains-json.scorer';
import { CONTAINS_OPTIONS_SCHEMA, containsScorer } from './contains.scorer';
import { EXACT_OPTIONS_SCHEMA, exactScorer } from './exact.scorer';
import { ScorerIssueCode, issue, quote } from './issues';
import { FUZZY_MATCH_OPTIONS_SCHEMA, fuzzyMatchScorer } from './fuzzy-match.scorer';
import { JSON_EQUAL_OPTIONS_SCHEMA, jsonEqualScorer } from './json-equal.scorer';
import { JSON_VALID_OPTIONS_SCHEMA, jsonValidScorer } from './json-valid.scorer';
import { LEVENSHTEIN_OPTIONS_SCHEMA, levenshteinScorer } from './levenshtein.scorer';
import { LLM_JUDGE_OPTIONS_SCHEMA, llmJudgeScorer, type JudgeConfig } from './llm-judge.scorer';
import { NOT_CONTAINS_OPTIONS_SCHEMA, notContainsScorer } from './not-contains.scorer';
import { NOT_OPTIONS_SCHEMA, createNotScorer } from './not.scorer';
import { NUMERIC_RANGE_OPTIONS_SCHEMA, numericRangeScorer } from './numeric-range.scorer';
import { REGEX_OPTIONS_SCHEMA, regexScorer } from './regex.scorer';
import type { JudgeScorer, ScoreContext, ScoreResult, Scorer, ScorerConfigIssue } from './scorer';
import { STARTS_WITH_OPTIONS_SCHEMA, startsWithScorer } from './starts-with.scorer';

/**
 * How `all` and `not` compile their nested specs: through `validateScorerSpec` itself (a function declaration,
 * so hoisted), passed in so the composite files do not import the registry back.
 */
function compileChild(spec: unknown, ctx: ScoreContext): ChildCompilation {
  const result = validateScorerSpec(spec, ctx);
  if (!result.ok) return result;
  const scorer = result.scorer;
  return scorer.kind === 'judge' ? { ok: true, kind: 'judge' } : { ok: true, kind: 'deterministic', score: (output) => scorer.score(output) };
}

/** The deterministic scorers (S1), by their spec name. */
export const deterministicScorers = {
  exact: exactScorer,
  contains: containsScorer,
  not_contains: notContainsScorer,
  regex: regexScorer,
  json_valid: jsonValidScorer,
  json_equal: jsonEqualScorer,
  numeric_range: numericRangeScorer,
  starts_with: startsWithScorer,
  contains_any: containsAnyScorer,
  contains_json: containsJsonScorer,
  levenshtein: levenshteinScorer,
  fuzzy_match: fuzzyMatchScorer,
  all: createAllScorer(compileChild),
  not: createNotScorer(compileChild),
} as const;

/** Every registered scorer: the deterministic ones and `llm_judge` (config only, S3). */
export const scorers = {
  ...deterministicScorers,
  llm_judge: llmJudgeScorer,
} as const;

export type DeterministicScorerName = keyof typeof deterministicScorers;
export type ScorerName = keyof typeof scorers;
/** A registry entry: discriminated on `kind`. */
export type RegisteredScorer = (typeof scorers)[ScorerName];

export const scorerNames: readonly ScorerName[] = Object.freeze(Object.keys(scorers) as ScorerName[]);
export const deterministicScorerNames: readonly DeterministicScorerName[] = Object.freeze(
  Object.keys(deterministicScorers) as DeterministicScorerName[],
);

/**
 * What a scorer takes next to `type`, as JSON Schema (the subset OpenAPI 3.0 shares): its options' types
 * (`properties`, one per key of the scorer's `options`), the ones it cannot do without (`required`; `not`
 * when it needs one of several) - a description, not a second validator: `validateScorerSpec` decides
 * (e.g. `min <= max`, a pattern RE2 compiles, the case's `expected`). Every scorer refuses a key outside its
 * `options` (SCORER_OPTION_UNKNOWN), so a spec is closed.
 */
export interface ScorerOptionsSchema {
  readonly properties: { readonly [option: string]: object };
  readonly required?: readonly string[];
  readonly not?: object;
}

/** Each registered scorer's options schema, by its spec name (the HTTP API builds its scorer spec schema from it). */
export const scorerOptionSchemas: { readonly [N in ScorerName]: ScorerOptionsSchema } = {
  exact: EXACT_OPTIONS_SCHEMA,
  contains: CONTAINS_OPTIONS_SCHEMA,
  not_contains: NOT_CONTAINS_OPTIONS_SCHEMA,
  regex: REGEX_OPTIONS_SCHEMA,
  json_valid: JSON_VALID_OPTIONS_SCHEMA,
  json_equal: JSON_EQUAL_OPTIONS_SCHEMA,
  numeric_range: NUMERIC_RANGE_OPTIONS_SCHEMA,
  starts_with: STARTS_WITH_OPTIONS_SCHEMA,
  contains_any: CONTAINS_ANY_OPTIONS_SCHEMA,
  contains_json: CONTAINS_JSON_OPTIONS_SCHEMA,
  levenshtein: LEVENSHTEIN_OPTIONS_SCHEMA,
  fuzzy_match: FUZZY_MATCH_OPTIONS_SCHEMA,
  all: ALL_OPTIONS_SCHEMA,
  not: NOT_OPTIONS_SCHEMA,
  llm_judge: LLM_JUDGE_OPTIONS_SCHEMA,
};

export function isScorerName(name: unknown): name is ScorerName {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(scorers, name);
}

/** The registry entry for `name`, or undefined when no scorer has that name. */
export function getScorer<N extends ScorerName>(name: N): (typeof scorers)[N];
export function getScorer(name: string): RegisteredScorer | undefined;
export function getScorer(name: string): RegisteredScorer | undefined {
  return isScorerName(name) ? scorers[name] : undefined;
}

/** Labels every compiled deterministic scorer may return besides its own vocabulary. */
export const COMMON_LABELS = ['scorer_error', 'invalid_output'] as const;

/** Every label any deterministic scorer can return (D1: a fixed vocabulary, never a quote of the output). */
export const ALL_LABELS: ReadonlySet<string> = new Set<string>([
  ...COMMON_LABELS,
  ...Object.values(deterministicScorers).flatMap((s) => s.labels),
]);

/** A deterministic scorer with its config bound: `score` is total (S5). */
export interface CompiledDeterministicScorer {
  readonly kind: 'deterministic';
  readonly name: DeterministicScorerName;
  readonly version: string;
  /** Never throws; `ctx` is accepted for the port but the built-in scorers use the `expected` bound at validation. */
  score(output: string, ctx?: ScoreContext): ScoreResult;
}

/** `llm_judge`: validated config only; the judge port scores it (S3). */
export interface CompiledJudgeScorer {
  readonly kind: 'judge';
  readonly name: 'llm_judge';
  readonly version: string;
  readonly config: JudgeConfig;
}

export type CompiledScorer = CompiledDeterministicScorer | CompiledJudgeScorer;

export type ScorerSpecValidation =
  | { readonly ok: true; readonly scorer: CompiledScorer }
  | { readonly ok: false; readonly issues: readonly ScorerConfigIssue[] };

const SCORER_ERROR: ScoreResult = Object.freeze({ score: 0, passed: false, label: 'scorer_error' });
const INVALID_OUTPUT: ScoreResult = Object.freeze({ score: 0, passed: false, label: 'invalid_output' });

/**
 * Binds a config to a deterministic scorer. The built-in scorers are total already; this is the last line
 * of defence (S5, D1): a non-string output gives `invalid_output`; an exception, a result outside [0, 1],
 * a `passed` that disagrees with the score, or a label outside the scorer's vocabulary gives `scorer_error`.
 */
export function bindScorer<C>(scorer: Scorer<C>, config: C): CompiledDeterministicScorer {
  const labels = new Set(scorer.labels);
  return {
    kind: 'deterministic',
    name: scorer.name as DeterministicScorerName,
    version: scorer.version,
    score(output: string, ctx?: ScoreContext): ScoreResult {
      if (typeof output !== 'string') return INVALID_OUTPUT;
      try {
        const result = scorer.score(output, config, ctx ?? {});
        const { score, passed, label } = result;
        if (
          typeof score !== 'number' ||
          !(score >= 0 && score <= 1) ||
          typeof passed !== 'boolean' ||
          passed !== (score === 1) ||
          !labels.has(label)
        ) {
          return SCORER_ERROR;
        }
        return { score, passed, label };
      } catch {
        return SCORER_ERROR;
      }
    },
  };
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Validates a scorer spec (`{ type, ...options }`) against the case context, when a suite version is
 * created (S4). Never throws: a spec it cannot read is refused with SCORER_SPEC_INVALID.
 */
export function validateScorerSpec(spec: unknown, ctx: ScoreContext = {}): ScorerSpecValidation {
  try {
    return validate(spec, ctx);
  } catch (error) {
    const reason = error instanceof Error ? error.name : 'an exception';
    return {
      ok: false,
      issues: [issue(ScorerIssueCode.SPEC_INVALID, '', `the scorer spec could not be read (${reason})`)],
    };
  }
}

function validate(spec: unknown, ctx: ScoreContext): ScorerSpecValidation {
  if (!isRecord(spec)) {
    return {
      ok: false,
      issues: [issue(ScorerIssueCode.SPEC_INVALID, '', 'a scorer spec must be a mapping with a `type`, e.g. {type: exact, trim: true}')],
    };
  }
  const type = spec['type'];
  const known = `known scorers: ${scorerNames.join(', ')}`;
  if (type === undefined) {
    return { ok: false, issues: [issue(ScorerIssueCode.UNKNOWN, 'type', `a scorer spec needs a \`type\`; ${known}`)] };
  }
  if (!isScorerName(type)) {
    const what = typeof type === 'string' ? `unknown scorer ${quote(type)}` : '`type` must be a string';
    return { ok: false, issues: [issue(ScorerIssueCode.UNKNOWN, 'type', `${what}; ${known}`)] };
  }
  const { type: _type, ...raw } = spec;
  void _type;
  const entry = scorers[type];
  if (entry.kind === 'judge') {
    const checked = (entry as JudgeScorer<JudgeConfig>).validate(raw, ctx);
    if (!checked.ok) return checked;
    return { ok: true, scorer: { kind: 'judge', name: 'llm_judge', version: entry.version, config: checked.config } };
  }
  const scorer = entry as Scorer<unknown>;
  const checked = scorer.validate(raw, ctx);
  if (!checked.ok) return checked;
  return { ok: true, scorer: bindScorer(scorer, checked.config) };
}
