/** The `value` option of `starts_with` and `levenshtein`: one string, else the case's `expected` string (S4). */
import { ScorerIssueCode, describeType, isAbsent, issue } from './issues';
import type { ScoreContext, ScorerConfigIssue } from './scorer';

export function readTextValue(
  scorer: string,
  raw: Readonly<Record<string, unknown>>,
  ctx: ScoreContext,
  allowEmpty: boolean,
  issues: ScorerConfigIssue[],
): string | undefined {
  const fromOption = !isAbsent(raw, 'value');
  const value = fromOption ? raw['value'] : ctx.expected;
  const field = fromOption ? 'value' : 'expected';
  if (value === undefined) {
    issues.push(issue(ScorerIssueCode.OPTION_MISSING, 'value', `scorer \`${scorer}\` needs \`value\` (a string), or a case \`expected\` string`));
    return undefined;
  }
  if (typeof value === 'string' && (allowEmpty || value !== '')) return value;
  const code = fromOption ? ScorerIssueCode.OPTION_INVALID : ScorerIssueCode.EXPECTED_INVALID;
  const got = typeof value === 'string' ? 'the empty string' : describeType(value);
  issues.push(issue(code, field, `scorer \`${scorer}\`: \`${field}\` must be a ${allowEmpty ? '' : 'non-empty '}string, got ${got}`));
  return undefined;
}
