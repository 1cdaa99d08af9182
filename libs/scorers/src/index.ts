/** @evals/scorers: the deterministic scorers (S1, S2, S4, S5), their registry and `llm_judge` config (S3). */
export * from './scorer';
export * from './issues';
export * from './registry';
export { foldCase, CASE_FOLDING_UNICODE_VERSION } from './case-folding';
export { checkJson, type JsonKind } from './json';
export { exactScorer, EXACT_LABELS, type ExactConfig } from './exact.scorer';
export { containsScorer, CONTAINS_LABELS, type ContainsConfig } from './contains.scorer';
export { notContainsScorer, NOT_CONTAINS_LABELS, type NotContainsConfig } from './not-contains.scorer';
export { regexScorer, REGEX_LABELS, type RegexConfig } from './regex.scorer';
export { jsonValidScorer, JSON_VALID_LABELS, JSON_REQUIRE, type JsonRequire, type JsonValidConfig } from './json-valid.scorer';
export { jsonEqualScorer, JSON_EQUAL_LABELS, type JsonEqualConfig } from './json-equal.scorer';
export {
  numericRangeScorer,
  NUMERIC_RANGE_LABELS,
  NUMERIC_EXTRACT,
  type NumericExtract,
  type NumericRangeConfig,
} from './numeric-range.scorer';
export { llmJudgeScorer, DEFAULT_MIN_SCORE, MAX_JUDGE_REPEATS, MIN_JUDGE_REPEATS, type JudgeConfig } from './llm-judge.scorer';
export { startsWithScorer, STARTS_WITH_LABELS, type StartsWithConfig } from './starts-with.scorer';
export { containsAnyScorer, CONTAINS_ANY_LABELS, type ContainsAnyConfig } from './contains-any.scorer';
export { containsJsonScorer, CONTAINS_JSON_LABELS } from './contains-json.scorer';
export { levenshteinScorer, LEVENSHTEIN_LABELS, DEFAULT_MAX_DISTANCE, type LevenshteinConfig } from './levenshtein.scorer';
export { ALL_LABELS_OF_ALL, MAX_NESTED_SCORERS } from './all.scorer';
export { NOT_LABELS } from './not.scorer';
export { fuzzyMatchScorer, FUZZY_MATCH_LABELS, normalizeFuzzy, type FuzzyMatchConfig } from './fuzzy-match.scorer';
