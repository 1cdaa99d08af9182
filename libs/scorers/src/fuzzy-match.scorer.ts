/**
 * `fuzzy_match` (S1): OpenAI Evals' FuzzyMatch (evals/utils.py `fuzzy_match`, issue 29): passes when, for one
 * value, the normalized value is within the normalized output or the output within it.
 *
 * - `value`: a non-empty string or list of them; when absent, the case's `expected` string or list.
 * - Normalization, as evals' `normalize`: lowercase, ASCII punctuation (Python's string.punctuation) removed, the
 *   words `a`, `an`, `the` removed, whitespace runs collapsed to one space and trimmed. Two empty normalized
 *   texts match each other; an empty one matches nothing else.
 * - Differences on non-ASCII text (documented in docs/suites.md): JavaScript's toLowerCase and `\b` (ASCII word
 *   characters) stand for Python's str.lower and Unicode `\b`.
 */
import { CONTAINS_OPTIONS_SCHEMA } from './contains.scorer';
import { refuse } from './issues';
import { fail, pass, type Scorer, type ScorerConfigIssue } from './scorer';
import { readSubstringConfig } from './substring';

export const FUZZY_MATCH_LABELS = ['fuzzy_match', 'no_fuzzy_match'] as const;

export interface FuzzyMatchConfig {
  /** The values, already normalized. */
  readonly values: readonly string[];
}

export const FUZZY_MATCH_OPTIONS_SCHEMA = { properties: { value: CONTAINS_OPTIONS_SCHEMA.properties.value } } as const;

const PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g;

export function normalizeFuzzy(text: string): string {
  return text
    .toLowerCase()
    .replace(PUNCTUATION, '')
    .replace(/\b(a|an|the)\b/g, ' ')
    .split(/\s+/)
    .filter((w) => w !== '')
    .join(' ');
}

function fuzzy(a: string, b: string): boolean {
  if (a === '' || b === '') return a === b;
  return a.includes(b) || b.includes(a);
}

export const fuzzyMatchScorer: Scorer<FuzzyMatchConfig> = {
  kind: 'deterministic',
  name: 'fuzzy_match',
  version: '1.0.0',
  options: ['value'],
  labels: FUZZY_MATCH_LABELS,
  validate(raw, ctx) {
    const issues: ScorerConfigIssue[] = [];
    // The same `value` rules as contains; ignore_case is refused: normalization lowercases already.
    const config = readSubstringConfig('fuzzy_match', raw, ctx, issues, ['value']);
    return config === undefined ? refuse(issues) : { ok: true, config: { values: config.values.map(normalizeFuzzy) } };
  },
  score(output, config) {
    const text = normalizeFuzzy(output);
    return config.values.some((v) => fuzzy(text, v)) ? pass('fuzzy_match') : fail('no_fuzzy_match');
  },
};
