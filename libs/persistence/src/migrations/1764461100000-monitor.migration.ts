import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The monitor's windows (D3): one run per monitor suite, subject and time window, sealed when it closes. */
export class Monitor1764461100000 implements MigrationInterface {
  name = 'Monitor1764461100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE monitor_windows (
        run_id       text PRIMARY KEY,
        suite_key    text        NOT NULL,
        subject_kind text        NOT NULL,
        subject_id   text        NOT NULL,
        window_start timestamptz NOT NULL,
        window_end   timestamptz NOT NULL,
        signals      integer     NOT NULL DEFAULT 0,
        sealed_at    timestamptz
      )`);
    await q.query(`CREATE INDEX monitor_windows_open ON monitor_windows (window_end) WHERE sealed_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS monitor_windows`);
  }
}
