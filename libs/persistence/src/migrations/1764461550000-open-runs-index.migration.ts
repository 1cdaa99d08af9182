import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * R7: no run stays open forever, nor sealed and unscored. The expiry sweep looks for runs opened before a
 * cut-off and never sealed, and runs sealed before it and never scored; these partial indexes keep those
 * look-ups to the `run.opened` and `run.sealed` events instead of the whole log.
 */
export class OpenRunsIndex1764461550000 implements MigrationInterface {
  name = 'OpenRunsIndex1764461550000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX events_run_opened ON events (position) WHERE type = 'run.opened'`);
    await q.query(`CREATE INDEX events_run_sealed ON events (position) WHERE type = 'run.sealed'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS events_run_sealed`);
    await q.query(`DROP INDEX IF EXISTS events_run_opened`);
  }
}
