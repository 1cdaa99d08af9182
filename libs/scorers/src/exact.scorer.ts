/**
 * `exact` (S1): passes when the output equals the case's `expected`.
 *
 * - `expected` must be a string. A number or boolean is refused at validation (YAML turns `expected: 1.0`
 *   into the number 1, so "its canonical string" would silently differ from what was written): quote it
 *   (`expected: "1.0"`), or use `numeric_range` / `json_equal`.
 * - `trim` (false): when true, leading and trailing whitespace (String.prototype.trim: Unicode White_Space
 *   plus line terminators and U+FEFF) is removed from BOTH the output and `expected` before comparing.
 * - `ignore_case` (false): when true, both sides are compared after Unicode full case folding
 *   (see case-folding.ts: `STRASSE` matches `straße`; dotless `ı` matches neither `i` nor `I`).
 * - Otherwise code unit for code unit: no Unicode normalization, CRLF is not LF.
 */
import { foldCase } from './case-folding';
import { ScorerIssueCode, checkOptionKeys, describeType, issue, readBoolean, refuse } from './issues';
import { fail, pass, type Scorer, type ScorerConfigIssue } from './scorer';

export const EXACT_LABELS = ['match', 'mismatch'] as const;

export interface ExactConfig {
  readonly trim: boolean;
  readonly ignoreCase: boolean;
  /** The case's expected string, already trimmed and folded as the options say. */
  readonly expected: string;
}

const NAME = 'exact';
const OPTIONS = ['trim', 'ignore_case'] as const;

/** The options next to `type`, as JSON Schema (the registry's `scorerOptionSchemas`; the HTTP API describes specs with it). */
export const EXACT_OPTIONS_SCHEMA = {
  properties: {
    trim: { type: 'boolean', description: 'Trim both the output and `expected` before comparing (default false).' },
    ignore_case: { type: 'boolean', description: 'Compare after Unicode full case folding (default false).' },
  },
} as const;

function prepare(s: string, trim: boolean, ignoreCase: boolean): string {
  const t = trim ? s.trim() : s;
  return ignoreCase ? foldCase(t) : t;
}

export const exactScorer: Scorer<ExactConfig> = {
  kind: 'deterministic',
  name: NAME,
  version: '1.0.0',
  options: OPTIONS,
  labels: EXACT_LABELS,
  validate(raw, ctx) {
    const issues: ScorerConfigIssue[] = [];
    checkOptionKeys(NAME, raw, OPTIONS, issues);
    const trim = readBoolean(NAME, raw, 'trim', false, issues);
    const ignoreCase = readBoolean(NAME, raw, 'ignore_case', false, issues);
    const expected = ctx.expected;
    if (expected === undefined) {
      issues.push(issue(ScorerIssueCode.EXPECTED_MISSING, 'expected', 'scorer `exact` needs the case to have an `expected` string'));
    } else if (typeof expected !== 'string') {
      issues.push(
        issue(
          ScorerIssueCode.EXPECTED_INVALID,
          'expected',
          `scorer \`exact\` compares text: \`expected\` must be a string, got ${describeType(expected)} ` +
            '(quote it in YAML, e.g. expected: "42", or use numeric_range / json_equal)',
        ),
      );
    }
    if (issues.length > 0 || typeof expected !== 'string') return refuse(issues);
    return { ok: true, config: { trim, ignoreCase, expected: prepare(expected, trim, ignoreCase) } };
  },
  score(output, config) {
    return prepare(output, config.trim, config.ignoreCase) === config.expected ? pass('match') : fail('mismatch');
  },
};
