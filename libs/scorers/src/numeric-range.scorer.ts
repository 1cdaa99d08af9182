/**
 * `numeric_range` (S1): passes when the output holds one finite number within [min, max], inclusive.
 *
 * Number grammar (ASCII only), as an EBNF:
 *   number   = [ "+" | "-" ] ( digits [ "." digits ] | "." digits ) [ ( "e" | "E" ) [ "+" | "-" ] digits ]
 *   digits   = "0"..."9" { "0"..."9" }
 * So `42`, `-0`, `+3.5`, `.5`, `-.5`, `007` (= 7), `1e3`, `2.5E-3` are numbers; `5.`, `1e`, `NaN`,
 * `Infinity`, `0x1F`, `1,000`, `1_000`, `1 000`, `- 5`, `−5` (U+2212), full-width or Arabic-Indic digits
 * are not.
 *
 * - `extract` (`whole`): `whole` - the output, trimmed (String.prototype.trim), must be exactly one number;
 *   `first` - the leftmost longest match of the grammar anywhere in the output is used and the rest is
 *   ignored (`"about 3.5 stars"` -> 3.5, `"1,000"` -> 1, `"v2"` -> 2, `"x-5"` -> -5).
 * - `min`, `max`: finite numbers, each optional, but at least one is required; `min <= max`.
 * - Comparison is at double precision: the number is rounded to the nearest double (Number()), which is
 *   monotonic, so only a value within half an ulp of a bound can compare equal to it. A written number too
 *   large for a double (`1e400`) is finite text and rounds to Infinity: above any `max`, at least any `min`.
 *   `-0` equals `0`.
 */
import { ScorerIssueCode, checkOptionKeys, issue, readEnum, readFiniteNumber, refuse } from './issues';
import { fail, pass, type Scorer, type ScorerConfigIssue } from './scorer';

export const NUMERIC_RANGE_LABELS = ['in_range', 'below_min', 'above_max', 'not_a_number'] as const;

export const NUMERIC_EXTRACT = ['whole', 'first'] as const;
export type NumericExtract = (typeof NUMERIC_EXTRACT)[number];

export interface NumericRangeConfig {
  readonly min: number | undefined;
  readonly max: number | undefined;
  readonly extract: NumericExtract;
}

const NUMBER = '[+-]?(?:[0-9]+(?:\\.[0-9]+)?|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?';
const WHOLE = new RegExp(`^${NUMBER}$`);
const FIRST = new RegExp(NUMBER);

/**
 * The number the output holds under `extract`, as a double, or undefined when there is none. Both regexes
 * are linear: no nested quantifiers, and the whole-match one is anchored.
 */
export function readNumber(output: string, extract: NumericExtract): number | undefined {
  let token: string | undefined;
  if (extract === 'whole') {
    const trimmed = output.trim();
    token = WHOLE.test(trimmed) ? trimmed : undefined;
  } else {
    token = FIRST.exec(output)?.[0];
  }
  return token === undefined ? undefined : Number(token);
}

const NAME = 'numeric_range';
const OPTIONS = ['min', 'max', 'extract'] as const;

/** The options next to `type`, as JSON Schema (the registry's `scorerOptionSchemas`): `min`, `max` or both. */
export const NUMERIC_RANGE_OPTIONS_SCHEMA = {
  properties: {
    min: { type: 'number', description: 'Inclusive lower bound; at most `max`.' },
    max: { type: 'number', description: 'Inclusive upper bound.' },
    extract: { type: 'string', enum: NUMERIC_EXTRACT, description: '`whole` (the default): the trimmed output is one number; `first`: the first number in it.' },
  },
  // At least one of the bounds: not both absent (a `{not: {}}` property matches no value, so only when absent).
  not: { description: 'Neither `min` nor `max`.', properties: { min: { not: {} }, max: { not: {} } } },
} as const;

export const numericRangeScorer: Scorer<NumericRangeConfig> = {
  kind: 'deterministic',
  name: NAME,
  version: '1.0.0',
  options: OPTIONS,
  labels: NUMERIC_RANGE_LABELS,
  validate(raw) {
    const issues: ScorerConfigIssue[] = [];
    checkOptionKeys(NAME, raw, OPTIONS, issues);
    const min = readFiniteNumber(NAME, raw, 'min', issues);
    const max = readFiniteNumber(NAME, raw, 'max', issues);
    const extract = readEnum(NAME, raw, 'extract', NUMERIC_EXTRACT, 'whole', issues);
    if (issues.length === 0 && min === undefined && max === undefined) {
      issues.push(issue(ScorerIssueCode.OPTION_MISSING, 'min', 'scorer `numeric_range` needs `min`, `max` or both'));
    }
    if (min !== undefined && max !== undefined && min > max) {
      issues.push(issue(ScorerIssueCode.OPTION_INVALID, 'min', `scorer \`numeric_range\`: \`min\` (${min}) is greater than \`max\` (${max})`));
    }
    return issues.length > 0 ? refuse(issues) : { ok: true, config: { min, max, extract } };
  },
  score(output, config) {
    const value = readNumber(output, config.extract);
    if (value === undefined || Number.isNaN(value)) return fail('not_a_number');
    if (config.min !== undefined && value < config.min) return fail('below_min');
    if (config.max !== undefined && value > config.max) return fail('above_max');
    return pass('in_range');
  },
};
