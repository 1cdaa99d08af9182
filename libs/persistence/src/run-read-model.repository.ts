import type { EvalResult, ProjectedVerdict, RunDoc } from '@evals/domain';
import type { Sql } from './sql';

export interface VerdictFilter {
  readonly suite_key?: string;
  readonly subject_kind?: string;
  readonly subject_id?: string;
}

const ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
const VERDICT_COLUMNS = `run_id, suite_key, suite_version, subject_kind, subject_id, variant,
  to_char(completed_at AT TIME ZONE 'UTC', ${ISO}) AS completed_at, n, passed, score, verdict, completeness,
  baseline_run_id, chosen_by, comparison, finding_id`;

/** The verdict rows are `ProjectedVerdict`s (libs/domain `evolveVerdict`), read by the run views and the scorecards; never the regression app's `run_verdicts`. */
export type { ProjectedVerdict } from '@evals/domain';

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

  async loadVerdict(sql: Sql, runId: string): Promise<ProjectedVerdict | null> {
    const rows = await sql.query(`SELECT ${VERDICT_COLUMNS} FROM read_run_verdicts WHERE run_id = $1`, [runId]);
    return rows.length === 0 ? null : toVerdict(rows[0]);
  }

  /** True when this call recorded the decision (the first one stands: a run is compared once). */
  async saveVerdict(sql: Sql, v: ProjectedVerdict, position: number): Promise<boolean> {
    const rows = await sql.query(
      `INSERT INTO read_run_verdicts (run_id, suite_key, suite_version, subject_kind, subject_id, variant, completed_at, n, passed, score,
         verdict, completeness, baseline_run_id, chosen_by, comparison, finding_id, position)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15::jsonb, $16, $17)
       ON CONFLICT (run_id) DO NOTHING RETURNING 1`,
      [
        v.run_id,
        v.suite_key,
        v.suite_version,
        v.subject_kind,
        v.subject_id,
        v.variant,
        v.completed_at,
        v.n,
        v.passed,
        v.score,
        v.verdict,
        v.completeness,
        v.baseline_run_id,
        v.chosen_by,
        v.comparison === null || v.comparison === undefined ? null : JSON.stringify(v.comparison),
        v.finding_id,
        position,
      ],
    );
    return rows.length === 1;
  }

  /** The decided runs of one suite and subject, newest first (scorecards). */
  async verdictHistory(sql: Sql, suiteKey: string, subjectKind: string, subjectId: string, limit: number): Promise<ProjectedVerdict[]> {
    const rows = await sql.query(
      `SELECT ${VERDICT_COLUMNS} FROM read_run_verdicts WHERE suite_key = $1 AND subject_kind = $2 AND subject_id = $3
       ORDER BY completed_at DESC, run_id DESC LIMIT $4`,
      [suiteKey, subjectKind, subjectId, limit],
    );
    return rows.map(toVerdict);
  }

  /** Suites and subjects with at least one decided run, in key order. */
  async verdictSubjects(sql: Sql, filter: VerdictFilter): Promise<Array<{ suite_key: string; subject_kind: string; subject_id: string }>> {
    return sql.query(
      `SELECT DISTINCT suite_key, subject_kind, subject_id FROM read_run_verdicts
       WHERE ($1::text IS NULL OR suite_key = $1) AND ($2::text IS NULL OR subject_kind = $2) AND ($3::text IS NULL OR subject_id = $3)
       ORDER BY suite_key, subject_kind, subject_id`,
      [filter.suite_key ?? null, filter.subject_kind ?? null, filter.subject_id ?? null],
    );
  }

  /** Empties the read model for a rebuild from the event log. */
  async reset(sql: Sql, projection: string): Promise<void> {
    await sql.query(`TRUNCATE runs, eval_results, read_run_verdicts`);
    await sql.query(`DELETE FROM projection_inbox WHERE projection = $1`, [projection]);
    await sql.query(`DELETE FROM projection_checkpoints WHERE name = $1`, [projection]);
  }
}

function toVerdict(r: any): ProjectedVerdict {
  return { ...r, suite_version: Number(r.suite_version), n: Number(r.n), passed: Number(r.passed), score: Number(r.score) };
}
