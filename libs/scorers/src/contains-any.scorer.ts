/**
 * `contains_any` (S1): passes when at least one value of `value` is a substring of the output (promptfoo's
 * `contains-any` / `icontains-any`, issue 29). `contains` demands every value; `not_contains` forbids every one.
 *
 * Same options and fallback as `contains`: `value` (string or non-empty list of non-empty strings, else the
 * case's `expected` string or list of strings) and `ignore_case` (false, Unicode full case folding).
 */
import { CONTAINS_OPTIONS_SCHEMA } from './contains.scorer';
import { refuse } from './issues';
import { fail, pass, type Scorer, type ScorerConfigIssue } from './scorer';
import { SUBSTRING_OPTIONS, haystack, readSubstringConfig, type SubstringConfig } from './substring';

export const CONTAINS_ANY_LABELS = ['contains_one', 'missing_all'] as const;

export type ContainsAnyConfig = SubstringConfig;

/** The options next to `type`, as JSON Schema: the same as `contains`. */
export const CONTAINS_ANY_OPTIONS_SCHEMA = CONTAINS_OPTIONS_SCHEMA;

export const containsAnyScorer: Scorer<ContainsAnyConfig> = {
  kind: 'deterministic',
  name: 'contains_any',
  version: '1.0.0',
  options: SUBSTRING_OPTIONS,
  labels: CONTAINS_ANY_LABELS,
  validate(raw, ctx) {
    const issues: ScorerConfigIssue[] = [];
    const config = readSubstringConfig('contains_any', raw, ctx, issues);
    return config === undefined ? refuse(issues) : { ok: true, config };
  },
  score(output, config) {
    const text = haystack(output, config);
    return config.values.some((value) => text.includes(value)) ? pass('contains_one') : fail('missing_all');
  },
};
