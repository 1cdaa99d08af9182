/**
 * `contains` (S1): passes when every value of `value` is a substring of the output.
 *
 * - `value`: a non-empty string or a non-empty list of non-empty strings. When absent, the case's
 *   `expected` is used if it is a string or a list of strings; otherwise the config is refused.
 * - `ignore_case` (false): both sides are compared after Unicode full case folding (case-folding.ts);
 *   the substring test runs on the folded strings (so `Straße` contains `SS`).
 * - No trimming, no normalization; overlapping occurrences count (each value is searched independently).
 */
import { refuse } from './issues';
import { fail, pass, type Scorer, type ScorerConfigIssue } from './scorer';
import { SUBSTRING_OPTIONS, haystack, readSubstringConfig, type SubstringConfig } from './substring';

export const CONTAINS_LABELS = ['contains_all', 'missing_value'] as const;

export type ContainsConfig = SubstringConfig;

/**
 * The options next to `type`, as JSON Schema (the registry's `scorerOptionSchemas`); `not_contains` takes the
 * same. `value` is optional: without it the case's `expected` string or list of strings is used.
 */
export const CONTAINS_OPTIONS_SCHEMA = {
  properties: {
    value: {
      oneOf: [
        { type: 'string', minLength: 1 },
        { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1 },
      ],
      description: "A non-empty string or a non-empty list of non-empty strings; the case's `expected` when absent.",
    },
    ignore_case: { type: 'boolean', description: 'Compare after Unicode full case folding (default false).' },
  },
} as const;

export const containsScorer: Scorer<ContainsConfig> = {
  kind: 'deterministic',
  name: 'contains',
  version: '1.0.0',
  options: SUBSTRING_OPTIONS,
  labels: CONTAINS_LABELS,
  validate(raw, ctx) {
    const issues: ScorerConfigIssue[] = [];
    const config = readSubstringConfig('contains', raw, ctx, issues);
    return config === undefined ? refuse(issues) : { ok: true, config };
  },
  score(output, config) {
    const text = haystack(output, config);
    for (const value of config.values) if (!text.includes(value)) return fail('missing_value');
    return pass('contains_all');
  },
};
