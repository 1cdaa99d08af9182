/**
 * `levenshtein` (S1): passes when the edit distance between the output and `value` is at most `max_distance`
 * (promptfoo's `levenshtein`, whose threshold defaults to 5; issue 29).
 *
 * - `value`: a string; when absent, the case's `expected` string. The empty string is allowed (the distance
 *   is then the output's length).
 * - `max_distance` (5): a whole number >= 0.
 * - Distance in UTF-16 code units (insertions, deletions, substitutions of one unit each), as promptfoo's
 *   `fastest-levenshtein` counts: an astral character is two units.
 * - Outputs are bounded by the run's output limit; the row-by-row computation stops as soon as every cell of
 *   a row exceeds `max_distance`, and a length difference above it fails without computing anything.
 */
import { ScorerIssueCode, checkOptionKeys, describeType, isAbsent, issue, refuse } from './issues';
import { fail, pass, type Scorer, type ScorerConfigIssue } from './scorer';
import { readTextValue } from './text-value';

export const LEVENSHTEIN_LABELS = ['within_distance', 'too_distant'] as const;

export interface LevenshteinConfig {
  readonly value: string;
  readonly maxDistance: number;
}

const NAME = 'levenshtein';
const OPTIONS = ['value', 'max_distance'] as const;
export const DEFAULT_MAX_DISTANCE = 5;

export const LEVENSHTEIN_OPTIONS_SCHEMA = {
  properties: {
    value: { type: 'string', description: "The text compared with; the case's `expected` string when absent." },
    max_distance: { type: 'integer', minimum: 0, description: 'The largest edit distance that passes (default 5).' },
  },
} as const;

/** Whether the edit distance of `a` and `b` is at most `max`: bounded, so a long output costs O(len * max) at worst per row kept. */
export function withinDistance(a: string, b: string, max: number): boolean {
  if (Math.abs(a.length - b.length) > max) return false;
  let previous = new Array<number>(b.length + 1);
  let current = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) previous[j] = j;
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    let rowMin = current[0];
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= b.length; j++) {
      const cost = ca === b.charCodeAt(j - 1) ? 0 : 1;
      const v = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
      current[j] = v;
      if (v < rowMin) rowMin = v;
    }
    // Every later cell is at least this row's minimum: no path can come back under max.
    if (rowMin > max) return false;
    [previous, current] = [current, previous];
  }
  return previous[b.length] <= max;
}

export const levenshteinScorer: Scorer<LevenshteinConfig> = {
  kind: 'deterministic',
  name: NAME,
  version: '1.0.0',
  options: OPTIONS,
  labels: LEVENSHTEIN_LABELS,
  validate(raw, ctx) {
    const issues: ScorerConfigIssue[] = [];
    checkOptionKeys(NAME, raw, OPTIONS, issues);
    const value = readTextValue(NAME, raw, ctx, true, issues);
    let maxDistance = DEFAULT_MAX_DISTANCE;
    if (!isAbsent(raw, 'max_distance')) {
      const m = raw['max_distance'];
      if (typeof m === 'number' && Number.isSafeInteger(m) && m >= 0) maxDistance = m;
      else issues.push(issue(ScorerIssueCode.OPTION_INVALID, 'max_distance', `scorer \`levenshtein\`: \`max_distance\` must be a whole number >= 0, got ${describeType(m)}`));
    }
    if (issues.length > 0 || value === undefined) return refuse(issues);
    return { ok: true, config: { value, maxDistance } };
  },
  score(output, config) {
    return withinDistance(output, config.value, config.maxDistance) ? pass('within_distance') : fail('too_distant');
  },
};
