import { compileSuite } from '../runs/case-scoring';
import { budgetScopes, budgetWindowStart, estimateJudgeCaseCost, planJudgeSpend, scopeCovers, type BudgetState } from './budget';

const budget = (over: Partial<BudgetState>): BudgetState => ({ scope: 'judge', mode: 'block', period: 'month', limit_usd: 10, spent_usd: 0, ...over });
const cases = (...costs: number[]) => costs.map((cost_usd, i) => ({ case_id: `c${i}`, cost_usd }));

describe('unit: budgets in money (GT4, issue 13)', () => {
  it('an estimate that fits is allowed, whatever the mode', () => {
    for (const mode of ['allow', 'throttle', 'block'] as const) {
      expect(planJudgeSpend([budget({ mode, limit_usd: 1000 })], cases(1, 2))).toMatchObject({ decision: 'allowed', estimate_usd: 3, left_usd: 1000, over_limit_scopes: [] });
    }
  });

  it('block refuses an estimate over what is left, naming the budget', () => {
    const plan = planJudgeSpend([budget({ limit_usd: 10, spent_usd: 8 }), budget({ scope: 'suite:s', mode: 'allow', limit_usd: 100 })], cases(1, 1.5));
    expect(plan).toMatchObject({ decision: 'blocked', scope: 'judge', estimate_usd: 2.5, left_usd: 2, judged_case_ids: null });
  });

  it('throttle judges the cases in order while they fit in the tightest throttling budget', () => {
    const plan = planJudgeSpend([budget({ mode: 'throttle', limit_usd: 10, spent_usd: 6.5 }), budget({ scope: 'suite:s', mode: 'throttle', limit_usd: 50 })], cases(1, 1, 1, 1, 1));
    expect(plan).toMatchObject({ decision: 'throttled', scope: 'judge', judged_case_ids: ['c0', 'c1', 'c2'], judged_estimate_usd: 3 });
  });

  it('allow lets a spend over its limit go ahead, and says so', () => {
    expect(planJudgeSpend([budget({ mode: 'allow', limit_usd: 1, spent_usd: 5 })], cases(1))).toMatchObject({ decision: 'allowed', left_usd: 0, over_limit_scopes: ['judge'] });
  });

  it('no budget, or nothing to judge', () => {
    expect(planJudgeSpend([], cases(5))).toMatchObject({ decision: 'allowed', left_usd: null });
    expect(planJudgeSpend([budget({ limit_usd: 0 })], [])).toMatchObject({ decision: 'not_needed', estimate_usd: 0 });
  });

  it('scopes and windows', () => {
    expect(budgetScopes('s', 'gpt-x')).toEqual(['judge', 'suite:s', 'judge:gpt-x']);
    expect(scopeCovers('judge:gpt-x', { judge_model: 'gpt-x', suite_key: 's' })).toBe(true);
    expect(scopeCovers('judge:gpt-y', { judge_model: 'gpt-x', suite_key: 's' })).toBe(false);
    expect(scopeCovers('suite:s', { judge_model: null, suite_key: 's' })).toBe(true);
    const now = new Date('2026-12-17T15:04:05.000Z');
    expect(budgetWindowStart('month', now)?.toISOString()).toBe('2026-12-01T00:00:00.000Z');
    expect(budgetWindowStart('day', now)?.toISOString()).toBe('2026-12-17T00:00:00.000Z');
    expect(budgetWindowStart('total', now)).toBeNull();
  });

  it('a case costs repeats x (prompt tokens x input price + assumed output tokens x output price)', () => {
    const suite = compileSuite({
      suite_key: 's',
      version: 1,
      default_scorer: { type: 'llm_judge', rubric: 'Polite.' },
      cases: [
        { case_id: 'one', input: 'hi', scorer: null },
        { case_id: 'three', input: 'hi', scorer: { type: 'llm_judge', rubric: 'Polite.', repeats: 3 } },
      ],
    });
    const pricing = { input_per_mtok_usd: 2, output_per_mtok_usd: 10 };
    const one = estimateJudgeCaseCost(suite.cases.get('one')!, 'x'.repeat(400), pricing, 100)!;
    const three = estimateJudgeCaseCost(suite.cases.get('three')!, 'x'.repeat(400), pricing, 100)!;
    // The prompt holds the 400-character output: at least 100 tokens of it.
    expect(one.cost_usd).toBeGreaterThan((100 * 2 + 100 * 10) / 1e6);
    expect(three.cost_usd).toBeCloseTo(3 * one.cost_usd, 15);
  });
});
