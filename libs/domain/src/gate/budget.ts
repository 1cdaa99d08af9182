/**
 * Budgets in money (GT4, issue 13 part 4), the pure part: the judge spend the gate is about to make,
 * estimated before any call, weighed against every budget that applies to it.
 *
 * A budget has a scope (`judge`: all judge spend; `judge:<model>`: one model pin; `suite:<key>`: one suite),
 * a limit in US dollars, a window (`period`: the UTC calendar day or month, or `total`) and a mode that says
 * what happens when the estimate does not fit in what is left of it:
 *
 * - `block`: nothing is judged; the gate fails `budget_blocked`, with the estimate and what is left.
 * - `throttle`: the cases are judged in order while their estimates fit; the rest are `budget_throttled`
 *   (unscored, counted as failed - never a pass).
 * - `allow`: the spend goes ahead and the gate warns `budget_over_limit`.
 *
 * What was spent follows from the spend ledger alone (the sum of the scope's entries in its window).
 */
import type { JudgePricing } from '../judge/judge.port';
import { estimateTokens, judgeCost } from '../judge/judge.port';
import { buildJudgeMessages, judgeMessageChars } from '../judge/judge-prompt';
import { judgeRequestFor, type CompiledCase } from '../runs/case-scoring';

export type BudgetMode = 'allow' | 'throttle' | 'block';
export type BudgetPeriod = 'day' | 'month' | 'total';

export const BUDGET_MODES: readonly BudgetMode[] = ['allow', 'throttle', 'block'];
export const BUDGET_PERIODS: readonly BudgetPeriod[] = ['day', 'month', 'total'];

/** The judge's reply is not known before the call: this many output tokens per call are assumed (reasoning, then the verdict). */
export const DEFAULT_ESTIMATED_OUTPUT_TOKENS = 400;

export interface BudgetState {
  readonly scope: string;
  readonly mode: BudgetMode;
  readonly period: BudgetPeriod;
  readonly limit_usd: number;
  /** The ledger's sum for the scope in its current window. */
  readonly spent_usd: number;
}

/** The scopes a judge spend counts against: all judge spend, the model pin's, the suite's. */
export function budgetScopes(suiteKey: string, model: string | null): string[] {
  return ['judge', `suite:${suiteKey}`, ...(model ? [`judge:${model}`] : [])];
}

/** Whether a ledger entry (its model pin and suite) counts against `scope`. */
export function scopeCovers(scope: string, entry: { readonly judge_model: string | null; readonly suite_key: string | null }): boolean {
  if (scope === 'judge') return true;
  if (scope.startsWith('judge:')) return entry.judge_model === scope.slice('judge:'.length);
  if (scope.startsWith('suite:')) return entry.suite_key === scope.slice('suite:'.length);
  return false;
}

/** A budget scope as written: `judge`, `judge:<model>` or `suite:<key>`. */
export function isBudgetScope(scope: unknown): scope is string {
  return typeof scope === 'string' && /^(judge|judge:[^\s]{1,200}|suite:[a-z0-9][a-z0-9._-]{0,127})$/.test(scope);
}

/** The start of the window that contains `now` (UTC), or null for `total` (every entry counts). */
export function budgetWindowStart(period: BudgetPeriod, now: Date): Date | null {
  switch (period) {
    case 'day':
      return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    case 'month':
      return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    case 'total':
      return null;
  }
}

export interface JudgeCaseCost {
  readonly case_id: string;
  readonly cost_usd: number;
}

/**
 * The estimated cost of judging one case: `repeats` calls, each of the prompt's tokens (estimated from its
 * characters, ceil(chars / 4), as the adapter does when a provider reports none) and `outputTokens` reply
 * tokens, at the configured price.
 */
export function estimateJudgeCaseCost(compiled: CompiledCase, output: string, pricing: JudgePricing, outputTokens = DEFAULT_ESTIMATED_OUTPUT_TOKENS): JudgeCaseCost | null {
  const request = judgeRequestFor(compiled, output);
  if (!request || compiled.scorer.kind !== 'judge') return null;
  const inputTokens = estimateTokens(judgeMessageChars(buildJudgeMessages(request)));
  const repeats = Math.max(1, compiled.scorer.config.repeats ?? 1);
  return { case_id: compiled.case_id, cost_usd: repeats * judgeCost({ input_tokens: inputTokens, output_tokens: outputTokens }, pricing) };
}

export interface BudgetStanding extends BudgetState {
  /** limit - spent, never below 0. */
  readonly left_usd: number;
}

/** What the gate decided about the judge spend, before any call. */
export interface BudgetPlan {
  /** `allowed` (it fits, or only `allow` budgets are exceeded), `blocked`, `throttled`, or nothing to judge. */
  readonly decision: 'allowed' | 'blocked' | 'throttled' | 'not_needed';
  readonly estimate_usd: number;
  /** The least that is left over the applicable budgets; null when no budget applies. */
  readonly left_usd: number | null;
  /** The budget that decided a block or a throttle. */
  readonly scope: string | null;
  /** Throttled: the cases that fit, in order; null otherwise. */
  readonly judged_case_ids: readonly string[] | null;
  /** Throttled: the estimate of the cases that will be judged. */
  readonly judged_estimate_usd: number | null;
  /** `allow` budgets the estimate does not fit in (the gate warns). */
  readonly over_limit_scopes: readonly string[];
  readonly budgets: readonly BudgetStanding[];
}

/** Rounding slack: an estimate that fits to a millionth of a cent fits. */
const EPSILON = 1e-9;

/** Weighs the estimated cost of the cases to judge (in order) against every applicable budget. */
export function planJudgeSpend(budgets: readonly BudgetState[], cases: readonly JudgeCaseCost[]): BudgetPlan {
  const standings: BudgetStanding[] = budgets.map((b) => ({ ...b, left_usd: Math.max(0, b.limit_usd - b.spent_usd) }));
  const estimate = cases.reduce((s, c) => s + c.cost_usd, 0);
  const left = standings.length === 0 ? null : Math.min(...standings.map((b) => b.left_usd));
  const base = { estimate_usd: estimate, left_usd: left, budgets: standings };
  if (cases.length === 0) return { ...base, decision: 'not_needed', scope: null, judged_case_ids: null, judged_estimate_usd: null, over_limit_scopes: [] };
  const short = standings.filter((b) => estimate > b.left_usd + EPSILON);
  const overLimit = short.filter((b) => b.mode === 'allow').map((b) => b.scope);
  const blocking = short.find((b) => b.mode === 'block');
  if (blocking) return { ...base, decision: 'blocked', scope: blocking.scope, judged_case_ids: null, judged_estimate_usd: null, over_limit_scopes: overLimit };
  const throttling = short.filter((b) => b.mode === 'throttle');
  if (throttling.length === 0) return { ...base, decision: 'allowed', scope: null, judged_case_ids: null, judged_estimate_usd: null, over_limit_scopes: overLimit };
  const tightest = throttling.reduce((a, b) => (b.left_usd < a.left_usd ? b : a));
  const judged: string[] = [];
  let sum = 0;
  for (const c of cases) {
    if (sum + c.cost_usd > tightest.left_usd + EPSILON) break;
    sum += c.cost_usd;
    judged.push(c.case_id);
  }
  return { ...base, decision: 'throttled', scope: tightest.scope, judged_case_ids: judged, judged_estimate_usd: sum, over_limit_scopes: overLimit };
}
