import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The gate (GT1-GT6): recorded verdicts and their override audit are append-only evidence; budgets belong
 * to the FinOps module (it writes them, we read them), and our judge spend goes to an append-only ledger.
 */
export class Gate1764461300000 implements MigrationInterface {
  name = 'Gate1764461300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE gate_verdicts (
        gate_id          uuid PRIMARY KEY,
        run_id           text        NOT NULL,
        recorded_verdict text        NOT NULL CHECK (recorded_verdict IN ('pass', 'fail')),
        report           jsonb       NOT NULL,
        recorded_at      timestamptz NOT NULL
      )`);
    await q.query(`
      CREATE TABLE gate_overrides (
        id           bigserial PRIMARY KEY,
        gate_id      uuid        NOT NULL REFERENCES gate_verdicts (gate_id),
        actor_key_id text        NOT NULL,
        actor_name   text        NOT NULL,
        reason       text        NOT NULL,
        before       text        NOT NULL,
        after        text        NOT NULL,
        at           timestamptz NOT NULL
      )`);
    await q.query(`
      CREATE TABLE budgets (
        scope      text PRIMARY KEY,
        limit_usd  numeric     NOT NULL,
        spent_usd  numeric     NOT NULL DEFAULT 0,
        mode       text        NOT NULL CHECK (mode IN ('allow', 'throttle', 'block')),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE budget_spend (
        id          bigserial PRIMARY KEY,
        scope       text        NOT NULL,
        gate_id     uuid        NOT NULL,
        amount_usd  numeric     NOT NULL,
        recorded_at timestamptz NOT NULL DEFAULT now()
      )`);
    for (const table of ['gate_verdicts', 'gate_overrides', 'budget_spend']) {
      await q.query(`CREATE TRIGGER ${table}_append_only BEFORE UPDATE OR DELETE ON ${table} FOR EACH ROW EXECUTE FUNCTION evals_refuse_mutation()`);
      await q.query(`CREATE TRIGGER ${table}_no_truncate BEFORE TRUNCATE ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION evals_refuse_mutation()`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['budget_spend', 'budgets', 'gate_overrides', 'gate_verdicts']) await q.query(`DROP TABLE IF EXISTS ${table}`);
  }
}
