/**
 * `starts_with` (S1): passes when the output begins with `value` (promptfoo's `starts-with`, issue 29).
 *
 * - `value`: a non-empty string; when absent, the case's `expected` string.
 * - Code unit for code unit, like `exact`: no trimming, no normalization, no case folding.
 */
import { checkOptionKeys, refuse } from './issues';
import { fail, pass, type Scorer, type ScorerConfigIssue } from './scorer';
import { readTextValue } from './text-value';

export const STARTS_WITH_LABELS = ['prefix_match', 'prefix_mismatch'] as const;

export interface StartsWithConfig {
  readonly value: string;
}

const NAME = 'starts_with';
const OPTIONS = ['value'] as const;

export const STARTS_WITH_OPTIONS_SCHEMA = {
  properties: {
    value: { type: 'string', minLength: 1, description: "The prefix; the case's `expected` string when absent." },
  },
} as const;

export const startsWithScorer: Scorer<StartsWithConfig> = {
  kind: 'deterministic',
  name: NAME,
  version: '1.0.0',
  options: OPTIONS,
  labels: STARTS_WITH_LABELS,
  validate(raw, ctx) {
    const issues: ScorerConfigIssue[] = [];
    checkOptionKeys(NAME, raw, OPTIONS, issues);
    const value = readTextValue(NAME, raw, ctx, false, issues);
    if (issues.length > 0 || value === undefined) return refuse(issues);
    return { ok: true, config: { value } };
  },
  score(output, config) {
    return output.startsWith(config.value) ? pass('prefix_match') : fail('prefix_mismatch');
  },
};
