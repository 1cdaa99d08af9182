import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The read model (R2-R3): derived from the event log and rebuildable from it, so these tables are mutable
 * (a rebuild truncates them). The inbox makes every event apply once per projection under redelivery.
 */
export class ReadModel1764460900000 implements MigrationInterface {
  name = 'ReadModel1764460900000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE runs (
        run_id        text PRIMARY KEY,
        suite_key     text    NOT NULL,
        suite_version integer NOT NULL,
        subject_kind  text    NOT NULL,
        subject_id    text    NOT NULL,
        variant       text,
        status        text    NOT NULL,
        doc           jsonb   NOT NULL,
        opened_at     timestamptz NOT NULL,
        completed_at  timestamptz,
        last_position bigint  NOT NULL
      )`);
    await q.query(`CREATE INDEX runs_subject ON runs (suite_key, subject_kind, subject_id, completed_at DESC)`);

    // The canonical EvalResult (R3), one per completed run, in the shape other modules read.
    await q.query(`
      CREATE TABLE eval_results (
        run_id      text PRIMARY KEY,
        result      jsonb       NOT NULL,
        occurred_at timestamptz NOT NULL,
        position    bigint      NOT NULL
      )`);

    await q.query(`
      CREATE TABLE projection_inbox (
        projection text   NOT NULL,
        message_id uuid   NOT NULL,
        position   bigint NOT NULL,
        PRIMARY KEY (projection, message_id)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS projection_inbox`);
    await q.query(`DROP TABLE IF EXISTS eval_results`);
    await q.query(`DROP TABLE IF EXISTS runs`);
  }
}
