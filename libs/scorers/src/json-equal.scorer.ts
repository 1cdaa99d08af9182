/**
 * `json_equal` (S1): passes when the output is JSON (RFC 8259) and deep-equals the case's `expected`.
 *
 * - `expected` is the structured value itself (a YAML/JSON mapping, list, string, number, boolean or null).
 *   When it is a string, it is read as JSON text at validation and refused if it is not JSON (so to expect
 *   the JSON string "hi", write `expected: '"hi"'`). Cycles, non-finite numbers and non-JSON values are
 *   refused, naming their path; a duplicate name in an expected JSON text is refused.
 * - Equality (json.ts `compareJson`): object name order ignored, array order kept, strings code unit for
 *   code unit after unescaping, numbers by value: two written numbers compare as exact decimals
 *   (1 == 1.0 == 1e0 == 10e-1, -0 == 0, 9007199254740993 != 9007199254740992); a number that reached us as
 *   a JS double (any number in a structured `expected`, whose YAML/JSON parser already rounded it) equals
 *   every output number that rounds to that same double. Give `expected` as a JSON string to compare big
 *   integers and long decimals exactly. A duplicate name in the output's objects makes it not equal.
 * - No options.
 */
import { ScorerIssueCode, checkOptionKeys, issue, refuse } from './issues';
import { compareJson, expectedFromJsonText, expectedFromValue, type ExpectedNode } from './json';
import { fail, pass, type Scorer, type ScorerConfigIssue } from './scorer';

export const JSON_EQUAL_LABELS = ['equal', 'not_equal', 'invalid_json'] as const;

export interface JsonEqualConfig {
  readonly expected: ExpectedNode;
}

const NAME = 'json_equal';
const OPTIONS = [] as const;

/** The options next to `type`, as JSON Schema: none (the case's `expected` is the value compared). */
export const JSON_EQUAL_OPTIONS_SCHEMA = { properties: {} } as const;

export const jsonEqualScorer: Scorer<JsonEqualConfig> = {
  kind: 'deterministic',
  name: NAME,
  version: '1.0.0',
  options: OPTIONS,
  labels: JSON_EQUAL_LABELS,
  validate(raw, ctx) {
    const issues: ScorerConfigIssue[] = [];
    checkOptionKeys(NAME, raw, OPTIONS, issues);
    const expected = ctx.expected;
    if (expected === undefined) {
      issues.push(issue(ScorerIssueCode.EXPECTED_MISSING, 'expected', 'scorer `json_equal` needs the case to have an `expected` value'));
      return refuse(issues);
    }
    const built = typeof expected === 'string' ? expectedFromJsonText(expected) : expectedFromValue(expected);
    if (!built.ok) {
      issues.push(issue(ScorerIssueCode.EXPECTED_INVALID, built.path, `scorer \`json_equal\`: \`${built.path}\` ${built.reason}`));
    }
    if (issues.length > 0 || !built.ok) return refuse(issues);
    return { ok: true, config: { expected: built.node } };
  },
  score(output, config) {
    switch (compareJson(output, config.expected)) {
      case 'equal':
        return pass('equal');
      case 'not_equal':
        return fail('not_equal');
      default:
        return fail('invalid_json');
    }
  },
};
