import { randomUUID } from 'node:crypto';
import { DEFAULT_PROJECT } from '@evals/contracts';
import type { CompiledCase, JudgeCaseCost } from '@evals/domain';
import { BudgetRepository, createDataSource, migrate, type Sql } from '@evals/persistence';
import type { DataSource } from 'typeorm';
import { createTestSchema, type TestSchema } from '../../../test/support/isolation';
import { testServers } from '../../../test/support/servers';
import { GateBudget, RESERVATION_TTL_MS, type CaseToJudge } from './gate-budget';
import type { IngestionConfig } from './config';

/** Each case costs $1 here: the estimate is unit-tested (libs/domain budget.spec); the race is what this file is about. */
class DollarPerCase extends GateBudget {
  override estimate(toJudge: readonly CaseToJudge[]): JudgeCaseCost[] {
    return toJudge.map((c) => ({ case_id: c.compiled.case_id, cost_usd: 1 }));
  }
}

/**
 * The store made slow where a race hurts: every standings read waits 300 ms after reading, inside its
 * transaction, so two gates started together both read before either could have written - unless the lock
 * makes the second wait for the first's commit.
 */
class SlowReads extends BudgetRepository {
  constructor(private readonly locking: boolean) {
    super();
  }
  override async standings(sql: Sql, project: string, scopes: readonly string[] | null, now: Date) {
    const rows = await super.standings(sql, project, scopes, now);
    await sql.query('SELECT pg_sleep(0.3)');
    return rows;
  }
  override async lockSpending(sql: Sql, project: string): Promise<void> {
    if (this.locking) await super.lockSpending(sql, project);
  }
}

const D = DEFAULT_PROJECT;
const cases = (n: number): CaseToJudge[] => Array.from({ length: n }, (_, i) => ({ compiled: { case_id: `j${i}` } as CompiledCase, output: '' }));
const CONFIG = { judge: null, judgeEstimatedOutputTokens: 400 } as unknown as Pick<IngestionConfig, 'judge' | 'judgeEstimatedOutputTokens'>;

/**
 * GT4 (issue 13), on the real PostgreSQL: two gates at once cannot both fit the same remaining budget. A gate
 * weighs its estimate and holds it (`budget_reservations`) in one transaction under one advisory lock; the
 * hold counts against every budget covering it until the gate's actual spend replaces it in the ledger.
 */
describe('integration: concurrent gates cannot overspend a budget (GT4, issue 13)', () => {
  let schema: TestSchema;
  let ds: DataSource;
  const logs: Array<Record<string, unknown>> = [];
  let now = new Date('2026-12-01T12:00:00.000Z');
  const clock = { now: () => now };
  const logger = { event: (level: string, msg: string, fields?: Record<string, unknown>) => void logs.push({ level, msg, ...fields }) };
  const budgetOf = (repo: BudgetRepository) => new DollarPerCase(ds, repo, clock, logger, CONFIG);
  const addBudget = (scope: string, mode: string, limit: number, project = D) =>
    ds.query(`INSERT INTO budgets (project, scope, limit_usd, mode, period) VALUES ($1, $2, $3, $4, 'month')`, [project, scope, limit, mode]);
  const standing = async (budget: GateBudget, scope: string, project = D) => (await budget.list(project)).budgets.find((b) => b.scope === scope)!;

  beforeAll(async () => {
    schema = await createTestSchema('budgetrace');
    ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize: 6 });
    await ds.initialize();
    await migrate(ds);
  });

  afterAll(async () => {
    await ds?.destroy();
    await schema?.drop();
  });

  it('the control: without the lock, two block gates of $6 both fit a $10 budget - the race this guards against is real', async () => {
    await addBudget('suite:race-control', 'block', 10);
    const budget = budgetOf(new SlowReads(false));
    const [a, b] = await Promise.all([budget.assess(D, 'race-control', null, cases(6), randomUUID()), budget.assess(D, 'race-control', null, cases(6), randomUUID())]);
    expect([a.decision, b.decision]).toEqual(['allowed', 'allowed']);
    expect((await standing(budget, 'suite:race-control')).reserved_usd).toBe(12);
  });

  it('block: of two gates of $6 at once on a $10 budget, one is allowed and holds $6, the other is blocked with $4 left', async () => {
    await addBudget('suite:race-block', 'block', 10);
    const budget = budgetOf(new SlowReads(true));
    const ids = [randomUUID(), randomUUID()];
    const both = await Promise.all(ids.map((id) => budget.assess(D, 'race-block', null, cases(6), id)));
    expect(both.map((x) => x.decision).sort()).toEqual(['allowed', 'blocked']);
    const blocked = both.find((x) => x.decision === 'blocked')!;
    expect(blocked.plan).toMatchObject({ estimate_usd: 6, left_usd: 4, scope: 'suite:race-block' });
    expect(await standing(budget, 'suite:race-block')).toMatchObject({ spent_usd: 0, reserved_usd: 6, left_usd: 4 });
    // The winner's run cost $5.50: its hold becomes the ledger entry, in one transaction.
    const winner = ids[both.findIndex((x) => x.decision === 'allowed')]!;
    await ds.transaction((tx) => budget.record(tx, D, { gate_id: winner, amount_usd: 5.5, judge_model: null, suite_key: 'race-block' }));
    expect(await standing(budget, 'suite:race-block')).toMatchObject({ spent_usd: 5.5, reserved_usd: 0, left_usd: 4.5 });
    expect((await ds.query(`SELECT count(*)::int AS n FROM budget_reservations WHERE suite_key = 'race-block'`))[0].n).toBe(0);
  });

  it('block: five gates of $3 at once on a $10 budget - exactly three are allowed; the holds never exceed the limit', async () => {
    await addBudget('suite:race-five', 'block', 10);
    const budget = budgetOf(new SlowReads(true));
    const all = await Promise.all(Array.from({ length: 5 }, () => budget.assess(D, 'race-five', null, cases(3), randomUUID())));
    expect(all.filter((x) => x.decision === 'allowed')).toHaveLength(3);
    expect(all.filter((x) => x.decision === 'blocked')).toHaveLength(2);
    expect(await standing(budget, 'suite:race-five')).toMatchObject({ reserved_usd: 9, left_usd: 1 });
  });

  it('throttle: two gates of 8 cases at once on a $10 budget judge 10 cases between them, never more', async () => {
    await addBudget('suite:race-throttle', 'throttle', 10);
    const budget = budgetOf(new SlowReads(true));
    const both = await Promise.all([budget.assess(D, 'race-throttle', null, cases(8), randomUUID()), budget.assess(D, 'race-throttle', null, cases(8), randomUUID())]);
    const judged = both.map((x) => (x.decision === 'allowed' ? 8 : (x.plan?.judged_case_ids?.length ?? 0)));
    expect(judged.sort()).toEqual([2, 8]);
    expect(await standing(budget, 'suite:race-throttle')).toMatchObject({ reserved_usd: 10, left_usd: 0 });
  });

  it('a hold counts for every budget covering it (judge:<model> too); a released hold frees its room; an expired one counts for nothing', async () => {
    const model = `model-${randomUUID().slice(0, 8)}`;
    await addBudget(`judge:${model}`, 'block', 5);
    await addBudget('suite:race-release', 'block', 100);
    const budget = budgetOf(new BudgetRepository());
    const first = randomUUID();
    expect((await budget.assess(D, 'race-release', model, cases(4), first)).decision).toBe('allowed');
    expect(await standing(budget, `judge:${model}`)).toMatchObject({ reserved_usd: 4, left_usd: 1 });
    expect(await standing(budget, 'suite:race-release')).toMatchObject({ reserved_usd: 4, left_usd: 96 });
    // Another suite on the same model pin: the pin's budget has $1 left.
    expect((await budget.assess(D, 'race-other', model, cases(2), randomUUID())).decision).toBe('blocked');
    // The first gate was refused before its run started: its hold goes.
    await budget.release(D, first);
    expect(await standing(budget, `judge:${model}`)).toMatchObject({ reserved_usd: 0, left_usd: 5 });
    // A hold whose gate never came back stops counting at its expiry.
    expect((await budget.assess(D, 'race-release', model, cases(5), randomUUID())).decision).toBe('allowed');
    expect((await standing(budget, `judge:${model}`)).left_usd).toBe(0);
    now = new Date(now.getTime() + RESERVATION_TTL_MS + 1000);
    expect(await standing(budget, `judge:${model}`)).toMatchObject({ reserved_usd: 0, left_usd: 5 });
  });

  it("issue 30: the same scope in two projects is two budgets - each project's holds, spend and list are its own", async () => {
    await ds.query(`INSERT INTO projects (id, name) VALUES ('budget-a', 'A'), ('budget-b', 'B') ON CONFLICT DO NOTHING`);
    await addBudget('suite:shared-scope', 'block', 10, 'budget-a');
    await addBudget('suite:shared-scope', 'block', 3, 'budget-b');
    const budget = budgetOf(new BudgetRepository());
    const gateA = randomUUID();
    // $6 fits A's $10, and is held in A only: B's $3 budget of the same scope still has all of it.
    expect((await budget.assess('budget-a', 'shared-scope', null, cases(6), gateA)).decision).toBe('allowed');
    expect(await standing(budget, 'suite:shared-scope', 'budget-a')).toMatchObject({ limit_usd: 10, reserved_usd: 6, left_usd: 4 });
    expect(await standing(budget, 'suite:shared-scope', 'budget-b')).toMatchObject({ limit_usd: 3, reserved_usd: 0, left_usd: 3 });
    // B's gate is weighed against B's budget only: $4 does not fit its $3 (it would fit A's $4 left).
    expect((await budget.assess('budget-b', 'shared-scope', null, cases(4), randomUUID())).decision).toBe('blocked');
    // A's spend reaches A's ledger; releasing A's gate id from B drops nothing of A's.
    await budget.release('budget-b', gateA);
    expect((await standing(budget, 'suite:shared-scope', 'budget-a')).reserved_usd).toBe(6);
    await ds.transaction((tx) => budget.record(tx, 'budget-a', { gate_id: gateA, amount_usd: 5, judge_model: null, suite_key: 'shared-scope' }));
    expect(await standing(budget, 'suite:shared-scope', 'budget-a')).toMatchObject({ spent_usd: 5, reserved_usd: 0, left_usd: 5 });
    expect(await standing(budget, 'suite:shared-scope', 'budget-b')).toMatchObject({ spent_usd: 0, left_usd: 3 });
    // Each list holds its project's budgets only; `default` has none of them.
    expect((await budget.list('budget-b')).budgets.map((b) => [b.scope, b.limit_usd])).toEqual([['suite:shared-scope', 3]]);
    expect((await budget.list(D)).budgets.some((b) => b.scope === 'suite:shared-scope')).toBe(false);
  });

  it('without a gate id (an estimate only) or with nothing to spend, nothing is held', async () => {
    await addBudget('suite:race-none', 'block', 10);
    const budget = budgetOf(new BudgetRepository());
    expect((await budget.assess(D, 'race-none', null, cases(3))).decision).toBe('allowed');
    expect((await budget.assess(D, 'race-none', null, [], randomUUID())).decision).toBe('allowed');
    expect((await standing(budget, 'suite:race-none')).reserved_usd).toBe(0);
    expect(logs).toEqual([]);
  });
});
