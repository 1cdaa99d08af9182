import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 15 (V2): the SHA-256 of each suite text (YAML, or JSON sent as text) that a push accepted, and the
 * version it became. A push of bytes already here, whose version is still the latest of its key, is
 * answered from the stored version without parsing: the bytes determine the key and the content, and a
 * stored version never changes. One row per text, pointing at the newest version those bytes became (a
 * revert moves it forward); not a fact of the domain but an index of one, so it may be updated.
 */
export class SuiteSources1764500000041 implements MigrationInterface {
  name = 'SuiteSources1764500000041';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE suite_sources (
        source_sha256 text    PRIMARY KEY CHECK (source_sha256 ~ '^[0-9a-f]{64}$'),
        suite_key     text    NOT NULL,
        version       integer NOT NULL,
        FOREIGN KEY (suite_key, version) REFERENCES suite_versions (suite_key, version)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS suite_sources`);
  }
}
