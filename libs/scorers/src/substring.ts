/** Shared option handling of `contains` and `not_contains` (S1). */
import { foldCase } from './case-folding';
import { ScorerIssueCode, checkOptionKeys, describeType, isAbsent, issue, readBoolean } from './issues';
import type { ScoreContext, ScorerConfigIssue } from './scorer';

export interface SubstringConfig {
  readonly ignoreCase: boolean;
  /** The values to look for, already folded when `ignoreCase`. Never empty; no value is ''. */
  readonly values: readonly string[];
}

export const SUBSTRING_OPTIONS = ['value', 'ignore_case'] as const;

/** Reads `value` (string or non-empty list of non-empty strings) or, when absent, the case's `expected`. */
export function readSubstringConfig(
  scorer: string,
  raw: Readonly<Record<string, unknown>>,
  ctx: ScoreContext,
  issues: ScorerConfigIssue[],
  options: readonly string[] = SUBSTRING_OPTIONS,
): SubstringConfig | undefined {
  checkOptionKeys(scorer, raw, options, issues);
  const ignoreCase = readBoolean(scorer, raw, 'ignore_case', false, issues);
  const fromOption = !isAbsent(raw, 'value');
  const field = fromOption ? 'value' : 'expected';
  const source = fromOption ? raw['value'] : ctx.expected;
  const code = fromOption ? ScorerIssueCode.OPTION_INVALID : ScorerIssueCode.EXPECTED_INVALID;
  const what = `scorer \`${scorer}\`: \`${field}\``;
  if (!fromOption && source === undefined) {
    issues.push(
      issue(
        ScorerIssueCode.OPTION_MISSING,
        'value',
        `scorer \`${scorer}\` needs \`value\` (a string or a list of strings), or a case \`expected\` string or list of strings`,
      ),
    );
    return undefined;
  }
  const values: string[] = [];
  if (typeof source === 'string') {
    if (source === '') issues.push(issue(code, field, `${what} must not be the empty string (it is a substring of everything)`));
    values.push(source);
  } else if (Array.isArray(source)) {
    if (source.length === 0) issues.push(issue(code, field, `${what} must not be an empty list`));
    source.forEach((v: unknown, i) => {
      if (typeof v !== 'string') {
        issues.push(issue(code, `${field}[${i}]`, `${what} items must be strings, got ${describeType(v)} (quote numbers in YAML)`));
      } else if (v === '') {
        issues.push(issue(code, `${field}[${i}]`, `${what} items must not be the empty string`));
      } else {
        values.push(v);
      }
    });
  } else {
    issues.push(issue(code, field, `${what} must be a string or a list of strings, got ${describeType(source)}`));
  }
  if (issues.length > 0) return undefined;
  return { ignoreCase, values: ignoreCase ? values.map(foldCase) : values };
}

/** The text the values are searched in. */
export function haystack(output: string, config: SubstringConfig): string {
  return config.ignoreCase ? foldCase(output) : output;
}
