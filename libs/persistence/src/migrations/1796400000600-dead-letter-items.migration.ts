import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 28: a batch message (`evals.outputs.submitted`) dead-letters each invalid output alone, so one
 * delivery can leave several dead letters: each names its output's position in the batch and, when it was
 * well-formed, its case id. The uniqueness that makes a redelivery write nothing twice becomes one letter per
 * (delivery, item); a letter of a whole message has no item (-1 in the index).
 */
export class DeadLetterItems1796400000600 implements MigrationInterface {
  name = 'DeadLetterItems1796400000600';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE dead_letters ADD COLUMN item_index integer, ADD COLUMN case_id text`);
    await q.query(`DROP INDEX dead_letters_delivery`);
    await q.query(`CREATE UNIQUE INDEX dead_letters_delivery ON dead_letters (subject, stream_seq, (coalesce(item_index, -1))) WHERE stream_seq IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX dead_letters_delivery`);
    await q.query(`CREATE UNIQUE INDEX dead_letters_delivery ON dead_letters (subject, stream_seq) WHERE stream_seq IS NOT NULL`);
    await q.query(`ALTER TABLE dead_letters DROP COLUMN item_index, DROP COLUMN case_id`);
  }
}
