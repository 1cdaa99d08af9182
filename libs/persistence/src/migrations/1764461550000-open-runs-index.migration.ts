import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * R7: no run stays open forever. The expiry sweep looks for runs opened before a cut-off and never sealed;
 * this partial index keeps that look-up to the `run.opened` events instead of the whole log.
 */
export class OpenRunsIndex1764461550000 implements MigrationInterface {
  name = 'OpenRunsIndex1764461550000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX events_run_opened ON events (position) WHERE type = 'run.opened'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS events_run_opened`);
  }
}
