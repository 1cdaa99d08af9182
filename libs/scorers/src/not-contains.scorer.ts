/**
 * `not_contains` (S1): passes when no value of `value` is a substring of the output.
 *
 * Same options and fallback as `contains`: `value` (string or non-empty list of non-empty strings, else the
 * case's `expected` string or list of strings) and `ignore_case` (false, Unicode full case folding).
 */
import { CONTAINS_OPTIONS_SCHEMA } from './contains.scorer';
import { refuse } from './issues';
import { fail, pass, type Scorer, type ScorerConfigIssue } from './scorer';
import { SUBSTRING_OPTIONS, haystack, readSubstringConfig, type SubstringConfig } from './substring';

export const NOT_CONTAINS_LABELS = ['none_present', 'forbidden_value'] as const;

export type NotContainsConfig = SubstringConfig;

/** The options next to `type`, as JSON Schema: the same as `contains`. */
export const NOT_CONTAINS_OPTIONS_SCHEMA = CONTAINS_OPTIONS_SCHEMA;

export const notContainsScorer: Scorer<NotContainsConfig> = {
  kind: 'deterministic',
  name: 'not_contains',
  version: '1.0.0',
  options: SUBSTRING_OPTIONS,
  labels: NOT_CONTAINS_LABELS,
  validate(raw, ctx) {
    const issues: ScorerConfigIssue[] = [];
    const config = readSubstringConfig('not_contains', raw, ctx, issues);
    return config === undefined ? refuse(issues) : { ok: true, config };
  },
  score(output, config) {
    const text = haystack(output, config);
    for (const value of config.values) if (text.includes(value)) return fail('forbidden_value');
    return pass('none_present');
  },
};
