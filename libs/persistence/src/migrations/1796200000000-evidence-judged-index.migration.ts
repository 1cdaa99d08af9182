import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The judged evidence of a run (J4, J9: its corrected pass rate; its judge usage and stability) is read by
 * `run_id AND scorer = 'llm_judge'`. Through the primary key that reads every case of the run, judged or not -
 * 35-45 ms per read for a 10 000-case run without a single judged case on the embedded PGlite, twice for each
 * `evals run` (issue 15). A partial index holds the judged rows alone, and is nearly free to keep for the others.
 * Built CONCURRENTLY, so a large evidence table on a server keeps taking writes meanwhile - which cannot run in
 * a transaction: this migration runs outside one.
 */
export class EvidenceJudgedIndex1796200000000 implements MigrationInterface {
  name = 'EvidenceJudgedIndex1796200000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS evidence_judged ON evidence (run_id) WHERE scorer = 'llm_judge'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS evidence_judged`);
  }
}
