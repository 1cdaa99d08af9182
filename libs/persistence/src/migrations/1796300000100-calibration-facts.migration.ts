import type { MigrationInterface, QueryRunner } from 'typeorm';
import { CALIBRATION_FACT_COLUMNS } from '../calibration.repository';
import { applyEventAuthorship } from '../ownership';

/**
 * Issue 27: a judge's standing reaches the gate (ingestion) and the read model as `calibration.reported`
 * facts in the shared log instead of their reading the regression app's `calibration_reports`. Every report
 * recorded before this release gets its fact now, in report order (the report id is the message id, so a
 * second run writes nothing); a partial index finds a pin's facts. The authorship trigger learns the type.
 */
export class CalibrationFacts1796300000100 implements MigrationInterface {
  name = 'CalibrationFacts1796300000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`INSERT INTO events (stream_id, stream_version, type, version, data, metadata, message_id)
      SELECT ${CALIBRATION_FACT_COLUMNS} FROM calibration_reports r
      WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.message_id = r.id)
      ORDER BY r.created_at, r.id`);
    await q.query(`CREATE INDEX IF NOT EXISTS events_calibration_reported ON events ((data->>'judge_model'), (data->>'prompt_version')) WHERE type = 'calibration.reported'`);
    const [{ schema }] = (await q.query('SELECT current_schema() AS schema')) as Array<{ schema: string }>;
    await applyEventAuthorship(q, schema);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS events_calibration_reported`);
  }
}
