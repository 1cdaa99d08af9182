import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 13, parts 3 and 4.
 *
 * - Flaky verdicts: an `llm_judge` case judged `repeats: k` times records k and how many of the k calls
 *   passed (null for a single call), so the run's verdict stability is computed from its evidence.
 * - Budgets in money: a budget has a window (`period`: a UTC calendar `day` or `month`, or `total`); the
 *   judge spend ledger records the model pin and the suite behind each amount, so the spent amount of any
 *   scope (`judge`, `judge:<model>`, `suite:<key>`) is the ledger's sum over the scope's current window.
 *   `budgets.spent_usd` is no longer read: what was spent follows from the ledger alone.
 */
export class JudgeRepeatsBudgets1764461800000 implements MigrationInterface {
  name = 'JudgeRepeatsBudgets1764461800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE evidence ADD COLUMN judge_repeats smallint, ADD COLUMN judge_pass_votes smallint`);
    await q.query(`ALTER TABLE budgets ADD COLUMN period text NOT NULL DEFAULT 'month' CHECK (period IN ('day', 'month', 'total'))`);
    await q.query(`ALTER TABLE budget_spend ADD COLUMN judge_model text, ADD COLUMN suite_key text`);
    await q.query(`CREATE INDEX budget_spend_recorded_at ON budget_spend (recorded_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS budget_spend_recorded_at`);
    await q.query(`ALTER TABLE budget_spend DROP COLUMN IF EXISTS suite_key, DROP COLUMN IF EXISTS judge_model`);
    await q.query(`ALTER TABLE budgets DROP COLUMN IF EXISTS period`);
    await q.query(`ALTER TABLE evidence DROP COLUMN IF EXISTS judge_pass_votes, DROP COLUMN IF EXISTS judge_repeats`);
  }
}
