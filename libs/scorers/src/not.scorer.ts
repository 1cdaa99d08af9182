/**
 * `not` (S1): passes when its one nested scorer fails - promptfoo's `not-` prefix (`not-equals`,
 * `not-starts-with`, `not-regex`, `not-is-json`, `not-contains-all`, ...; issue 29).
 *
 * - `scorer`: one deterministic scorer spec, validated with the case's `expected` (issues at `scorer.<field>`).
 * - An output the nested scorer cannot read (`invalid_output`, `scorer_error`) fails the nested check, so
 *   `not` passes on it, as promptfoo inverts any failed assertion.
 */
import { COMPOSITE_CHILD_SCHEMA, compileNested, type CompileChild } from './all.scorer';
import { ScorerIssueCode, checkOptionKeys, issue, refuse } from './issues';
import { fail, pass, type ScoreResult, type Scorer, type ScorerConfigIssue } from './scorer';

export const NOT_LABELS = ['negation_held', 'negated_check_passed'] as const;

export interface NotConfig {
  readonly check: (output: string) => ScoreResult;
}

export const NOT_OPTIONS_SCHEMA = {
  properties: { scorer: { ...COMPOSITE_CHILD_SCHEMA, description: 'The deterministic scorer that must fail.' } },
  required: ['scorer'],
} as const;

export function createNotScorer(compileChild: CompileChild): Scorer<NotConfig> {
  return {
    kind: 'deterministic',
    name: 'not',
    version: '1.0.0',
    options: ['scorer'],
    labels: NOT_LABELS,
    validate(raw, ctx) {
      const issues: ScorerConfigIssue[] = [];
      checkOptionKeys('not', raw, ['scorer'], issues);
      if (raw['scorer'] === undefined) {
        issues.push(issue(ScorerIssueCode.OPTION_MISSING, 'scorer', 'scorer `not` needs `scorer`: the deterministic scorer spec that must fail'));
        return refuse(issues);
      }
      const check = compileNested('not', compileChild, raw['scorer'], ctx, 'scorer', issues);
      if (issues.length > 0 || check === undefined) return refuse(issues);
      return { ok: true, config: { check } };
    },
    score(output, config) {
      return check(config, output) ? fail('negated_check_passed') : pass('negation_held');
    },
  };
}

function check(config: NotConfig, output: string): boolean {
  return config.check(output).passed;
}
