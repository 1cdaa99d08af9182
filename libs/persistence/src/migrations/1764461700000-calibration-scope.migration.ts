import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Scoped certification (J4, GT1; issue 13). A calibration report now says what it certifies: the judge pin
 * (model, prompt version) against one rubric (`rubric:<sha256 hex>`) or one suite's cases (`suite:<key>`).
 * A newer report replaces only the report of its own scope; the gate checks the scopes its cases use.
 *
 * - `scope` is NULL on reports stored before this migration: they were measured per pin, on sets of any size,
 *   and certify no scope (recalibrate; docs/calibration.md). The table is append-only, so they are not
 *   rewritten.
 * - `insufficient_set`: a set below the size targets (50 items, 10 per human class) is refused before any
 *   judge call; the refusal is stored as evidence but never displaces a measured report.
 */
export class CalibrationScope1764461700000 implements MigrationInterface {
  name = 'CalibrationScope1764461700000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE calibration_reports ADD COLUMN scope text CHECK (scope IS NULL OR scope ~ '^(rubric:[0-9a-f]{64}|suite:.+)$')`);
    await q.query(`ALTER TABLE calibration_reports DROP CONSTRAINT calibration_reports_status_check`);
    await q.query(`ALTER TABLE calibration_reports ADD CONSTRAINT calibration_reports_status_check CHECK (status IN ('certified', 'not_certified', 'not_certifiable', 'insufficient_set'))`);
    await q.query(`CREATE INDEX calibration_reports_scope ON calibration_reports (judge_model, prompt_version, scope, created_at DESC) WHERE scope IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS calibration_reports_scope`);
    await q.query(`ALTER TABLE calibration_reports DROP CONSTRAINT calibration_reports_status_check`);
    await q.query(`ALTER TABLE calibration_reports ADD CONSTRAINT calibration_reports_status_check CHECK (status IN ('certified', 'not_certified', 'not_certifiable'))`);
    await q.query(`ALTER TABLE calibration_reports DROP COLUMN scope`);
  }
}
