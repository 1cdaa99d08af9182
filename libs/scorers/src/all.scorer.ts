/**
 * `all` (S1): passes when every scorer of `scorers` passes - how promptfoo combines several assertions on one
 * test (issue 29; docs/suites.md, "Importing"). The smallest extension that lets one case carry several
 * deterministic checks: a case still has one scorer spec, and this one is a list of them.
 *
 * - `scorers`: a non-empty list (at most 64) of deterministic scorer specs, each validated with the case's
 *   `expected` as if it were the case's own scorer; a problem is reported at `scorers[i].<field>`.
 *   `llm_judge` cannot be nested (the judge scores a case as a whole, S3).
 * - `weights` and `threshold` (promptfoo's per-assertion `weight` and per-test `threshold`): with `threshold`
 *   (in (0, 1]) the case passes when the weighted share of passing checks (weights default to 1) is at least
 *   it, instead of when all pass; promptfoo's rule (AssertionsResult.testResult), a zero total weight scores 0.
 *   A check of weight 0 never decides: promptfoo's runAssertion counts a weight-0 assertion as passed.
 * - The label is `all_passed`, or `check_failed` when any fails; which one failed is not reported, since
 *   labels are a fixed vocabulary (D1). Every child is total, so `all` is.
 */
import { ScorerIssueCode, checkOptionKeys, describeType, issue, refuse } from './issues';
import { fail, pass, type ScoreContext, type ScoreResult, type Scorer, type ScorerConfigIssue } from './scorer';

export const ALL_LABELS_OF_ALL = ['all_passed', 'check_failed'] as const;
export const MAX_NESTED_SCORERS = 64;
const OPTIONS = ['scorers', 'weights', 'threshold'] as const;

/** A child compiled by the registry: a deterministic score function, or the issues it was refused with. */
export type ChildCompilation =
  | { readonly ok: true; readonly kind: 'deterministic'; readonly score: (output: string) => ScoreResult }
  | { readonly ok: true; readonly kind: 'judge' }
  | { readonly ok: false; readonly issues: readonly ScorerConfigIssue[] };

export type CompileChild = (spec: unknown, ctx: ScoreContext) => ChildCompilation;

export interface CompositeConfig {
  readonly checks: readonly ((output: string) => ScoreResult)[];
  readonly weights: readonly number[];
  readonly threshold?: number;
}

export const COMPOSITE_CHILD_SCHEMA = { type: 'object', required: ['type'], description: 'A deterministic scorer spec.' } as const;

export const ALL_OPTIONS_SCHEMA = {
  properties: {
    scorers: { type: 'array', items: COMPOSITE_CHILD_SCHEMA, minItems: 1, maxItems: MAX_NESTED_SCORERS, description: 'The scorers that must all pass.' },
    weights: { type: 'array', items: { type: 'number', minimum: 0 }, description: 'One weight >= 0 per scorer (default 1 each); used with `threshold`.' },
    threshold: { type: 'number', minimum: 0, maximum: 1, description: 'Pass when the weighted share of passing scorers is at least this.' },
  },
  required: ['scorers'],
} as const;

/** Compiles one child spec, prefixing its issues' fields with `at`; undefined when refused. */
export function compileNested(
  scorer: string,
  compileChild: CompileChild,
  spec: unknown,
  ctx: ScoreContext,
  at: string,
  issues: ScorerConfigIssue[],
): ((output: string) => ScoreResult) | undefined {
  const child = compileChild(spec, ctx);
  if (!child.ok) {
    // A nested spec is this scorer's option: a malformed or unknown one is an invalid option of ours.
    const own = (code: string) => (code === ScorerIssueCode.SPEC_INVALID || code === ScorerIssueCode.UNKNOWN ? ScorerIssueCode.OPTION_INVALID : code);
    for (const i of child.issues) issues.push({ ...i, code: own(i.code), field: i.field === '' ? at : `${at}.${i.field}` });
    return undefined;
  }
  if (child.kind === 'judge') {
    issues.push(issue(ScorerIssueCode.OPTION_INVALID, at, `scorer \`${scorer}\` takes deterministic scorers only; \`llm_judge\` scores a case as a whole`));
    return undefined;
  }
  return child.score;
}

/** `all`, bound to the registry's compiler (the registry passes it, so this file does not import the registry). */
export function createAllScorer(compileChild: CompileChild): Scorer<CompositeConfig> {
  return {
    kind: 'deterministic',
    name: 'all',
    version: '1.0.0',
    options: OPTIONS,
    labels: ALL_LABELS_OF_ALL,
    validate(raw, ctx) {
      const issues: ScorerConfigIssue[] = [];
      checkOptionKeys('all', raw, OPTIONS, issues);
      const list = raw['scorers'];
      if (!Array.isArray(list) || list.length === 0 || list.length > MAX_NESTED_SCORERS) {
        const got = Array.isArray(list) ? `${list.length} items` : describeType(list);
        const code = list === undefined ? ScorerIssueCode.OPTION_MISSING : ScorerIssueCode.OPTION_INVALID;
        issues.push(issue(code, 'scorers', `scorer \`all\`: \`scorers\` must be a list of 1 to ${MAX_NESTED_SCORERS} scorer specs, got ${got}`));
        return refuse(issues);
      }
      const checks = list.map((spec, i) => compileNested('all', compileChild, spec, ctx, `scorers[${i}]`, issues));
      const weights = readWeights(raw['weights'], list.length, issues);
      const threshold = raw['threshold'];
      if (threshold !== undefined && !(typeof threshold === 'number' && threshold > 0 && threshold <= 1)) {
        issues.push(issue(ScorerIssueCode.OPTION_INVALID, 'threshold', `scorer \`all\`: \`threshold\` must be a number in (0, 1], got ${describeType(threshold)}`));
      }
      if (issues.length > 0) return refuse(issues);
      const config: CompositeConfig = { checks: checks as ((output: string) => ScoreResult)[], weights, ...(typeof threshold === 'number' ? { threshold } : {}) };
      return { ok: true, config };
    },
    score(output, config) {
      if (config.threshold === undefined) {
        for (let i = 0; i < config.checks.length; i++) if (config.weights[i] !== 0 && !config.checks[i](output).passed) return fail('check_failed');
        return pass('all_passed');
      }
      let total = 0;
      let passed = 0;
      config.checks.forEach((check, i) => {
        total += config.weights[i];
        if (check(output).passed) passed += config.weights[i];
      });
      return total > 0 && passed / total >= config.threshold ? pass('all_passed') : fail('check_failed');
    },
  };
}

function readWeights(raw: unknown, n: number, issues: ScorerConfigIssue[]): number[] {
  if (raw === undefined) return new Array<number>(n).fill(1);
  if (Array.isArray(raw) && raw.length === n && raw.every((w) => typeof w === 'number' && Number.isFinite(w) && w >= 0)) return raw as number[];
  issues.push(issue(ScorerIssueCode.OPTION_INVALID, 'weights', `scorer \`all\`: \`weights\` must be a list of ${n} numbers >= 0, one per scorer`));
  return [];
}
