import type { EvalResult, RunDoc } from '@evals/domain';
import type { Sql } from './sql';

/** Storage of the run projection and the EvalResult (R2-R3); all of it can be rebuilt from the event log. */
export class RunReadModelRepository {
  /** Records that `projection` applied event `messageId`; false when it already had (redelivery). */
  async claim(sql: Sql, projection: string, messageId: string, position: number): Promise<boolean> {
    const rows = await sql.query(
      `INSERT INTO projection_inbox (projection, message_id, position) VALUES ($1, $2, $3)
       ON CONFLICT DO NOTHING RETURNING 1`,
      [projection, messageId, position],
    );
    return rows.length === 1;
  }

  async load(sql: Sql, runId: string, forUpdate = false): Promise<RunDoc | null> {
    const rows = await sql.query(`SELECT doc FROM runs WHERE run_id = $1${forUpdate ? ' FOR UPDATE' : ''}`, [runId]);
    return rows.length === 0 ? null : (rows[0].doc as RunDoc);
  }

  async save(sql: Sql, doc: RunDoc, position: number): Promise<void> {
    await sql.query(
      `INSERT INTO runs (run_id, suite_key, suite_version, subject_kind, subject_id, variant, status, doc, opened_at, completed_at, last_position)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11)
       ON CONFLICT (run_id) DO UPDATE SET status = EXCLUDED.status, doc = EXCLUDED.doc,
         completed_at = EXCLUDED.completed_at, last_position = GREATEST(runs.last_position, EXCLUDED.last_position)`,
      [doc.run_id, doc.suite_key, doc.suite_version, doc.subject_kind, doc.subject_id, doc.variant, doc.status, JSON.stringify(doc), doc.opened_at, doc.completed_at, position],
    );
  }

  /** True when this call recorded the result (the first time). */
  async saveEvalResult(sql: Sql, result: EvalResult, position: number): Promise<boolean> {
    const rows = await sql.query(
      `INSERT INTO eval_results (run_id, result, occurred_at, position) VALUES ($1, $2::jsonb, $3, $4)
       ON CONFLICT (run_id) DO NOTHING RETURNING 1`,
      [result.run_id, JSON.stringify(result), result.occurred_at, position],
    );
    return rows.length === 1;
  }

  async evalResult(sql: Sql, runId: string): Promise<EvalResult | null> {
    const rows = await sql.query(`SELECT result FROM eval_results WHERE run_id = $1`, [runId]);
    return rows.length === 0 ? null : (rows[0].result as EvalResult);
  }

  async advanceCheckpoint(sql: Sql, name: string, position: number): Promise<void> {
    await sql.query(
      `INSERT INTO projection_checkpoints (name, position) VALUES ($1, $2)
       ON CONFLICT (name) DO UPDATE SET position = GREATEST(projection_checkpoints.position, EXCLUDED.position), updated_at = now()`,
      [name, position],
    );
  }

  async checkpoint(sql: Sql, name: string): Promise<number> {
    const rows = await sql.query(`SELECT position FROM projection_checkpoints WHERE name = $1`, [name]);
    return rows.length === 0 ? 0 : Number(rows[0].position);
  }

  /** Empties the read model for a rebuild from the event log. */
  async reset(sql: Sql, projection: string): Promise<void> {
    await sql.query(`TRUNCATE runs, eval_results`);
    await sql.query(`DELETE FROM projection_inbox WHERE projection = $1`, [projection]);
    await sql.query(`DELETE FROM projection_checkpoints WHERE name = $1`, [projection]);
  }
}
