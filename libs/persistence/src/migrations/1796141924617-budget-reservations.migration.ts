import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * GT4 (issue 13): a gate's estimated judge spend is held against the budgets from the moment the gate weighs
 * it until its actual spend reaches the ledger, so two gates at once cannot both fit the same remaining
 * budget. A hold is not a fact to keep (the ledger `budget_spend` is): it is deleted in the transaction that
 * appends the actual spend, or when its gate fails before its run started, and stops counting at
 * `expires_at` should its gate never come back (a crashed process) - until then it errs on refusing.
 */
export class BudgetReservations1796141924617 implements MigrationInterface {
  name = 'BudgetReservations1796141924617';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE budget_reservations (
        gate_id     uuid        PRIMARY KEY,
        amount_usd  numeric     NOT NULL CHECK (amount_usd >= 0),
        judge_model text,
        suite_key   text        NOT NULL,
        reserved_at timestamptz NOT NULL,
        expires_at  timestamptz NOT NULL CHECK (expires_at > reserved_at)
      )`);
    await q.query(`CREATE INDEX budget_reservations_expires_at ON budget_reservations (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS budget_reservations`);
  }
}
