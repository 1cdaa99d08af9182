import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * R7, G4: a run's verdict row says whether every case was scored (`complete`), some were left unscored
 * (`incomplete`: a missing output, a judge case without a verdict) or nobody sealed it (`expired`). Only a
 * complete run with a `no_regression` / `no_baseline` verdict may become an automatic baseline. Rows from
 * before this column are taken as complete, as they were treated then.
 */
export class RunCompleteness1764461500000 implements MigrationInterface {
  name = 'RunCompleteness1764461500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE run_verdicts
        ADD COLUMN completeness text NOT NULL DEFAULT 'complete'
          CHECK (completeness IN ('complete', 'incomplete', 'expired'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE run_verdicts DROP COLUMN IF EXISTS completeness`);
  }
}
