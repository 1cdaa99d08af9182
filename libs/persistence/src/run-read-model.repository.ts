import { DEFAULT_PROJECT } from '@evals/contracts';
import type { EvalResult, ProjectedVerdict, RunDoc } from '@evals/domain';
import type { StoredEvent } from './event-store';
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

/** The project of a projected run (issue 30): what its `run.opened` named, `default` when it named none. */
export function docProject(doc: Pick<RunDoc, 'project'>): string {
  return doc.project ?? DEFAULT_PROJECT;
}

/**
 * Storage of the run projection and the EvalResult (R2-R3); all of it can be rebuilt from the event log.
 * The projection itself loads and writes a run by its id alone (run ids are unique across the service,
 * ADR 0009, and an event names no project); what answers a caller looks a run up within the caller's
 * project (`find`, the verdict lists), so another project's run is a missing one.
 */
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

  /**
   * The run's `cases.scored` events in the log that `projection` has not applied yet, in log order (issue 27):
   * a run's cases are caught up when its `run.scored` is applied, so a completed run shows every case even
   * when a worker's relay is behind the one that carried the seal.
   */
  async unappliedCases(sql: Sql, projection: string, runId: string): Promise<StoredEvent[]> {
    const rows = await sql.query(
      `SELECT e.position, e.stream_id, e.stream_version, e.type, e.version, e.data, e.metadata FROM events e
       WHERE e.type = 'cases.scored' AND e.data->>'run_id' = $2
         AND NOT EXISTS (SELECT 1 FROM projection_inbox i WHERE i.projection = $1 AND i.message_id = e.message_id)
       ORDER BY e.position`,
      [projection, runId],
    );
    return rows.map((r: StoredEvent) => ({ ...r, position: Number(r.position) }));
  }

  /** The projection's own read, by run id in every project: the projector applies the events of any run. */
  async load(sql: Sql, runId: string, forUpdate = false): Promise<RunDoc | null> {
    const rows = await sql.query(`SELECT doc FROM runs WHERE run_id = $1${forUpdate ? ' FOR UPDATE' : ''}`, [runId]);
    return rows.length === 0 ? null : (rows[0].doc as RunDoc);
  }

  /** A caller's read (issue 30): the run when it belongs to `project`, else null - exactly as a missing run. */
  async find(sql: Sql, project: string, runId: string): Promise<RunDoc | null> {
    const rows = await sql.query(`SELECT doc FROM runs WHERE run_id = $1 AND project = $2`, [runId, project]);
    return rows.length === 0 ? null : (rows[0].doc as RunDoc);
  }

  async save(sql: Sql, doc: RunDoc, position: number): Promise<void> {
    await sql.query(
      // The project is the run.opened's, written with the first row and never changed after (issue 30).
      `INSERT INTO runs (run_id, project, suite_key, suite_version, subject_kind, subject_id, variant, status, doc, opened_at, completed_at, last_position)
       VALUES ($1, $12, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11)
       ON CONFLICT (run_id) DO UPDATE SET status = EXCLUDED.status, doc = EXCLUDED.doc,
         completed_at = EXCLUDED.completed_at, last_position = GREATEST(runs.last_position, EXCLUDED.last_position)`,
      [doc.run_id, doc.suite_key, doc.suite_version, doc.subject_kind, doc.subject_id, doc.variant, doc.status, JSON.stringify(doc), doc.opened_at, doc.completed_at, position, docProject(doc)],
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

  /**
   * True when this call recorded the decision (the first one stands: a run is compared once). `project` is
   * the run's (its document's): a scorecard is one suite and subject within one project.
   */
  async saveVerdict(sql: Sql, project: string, v: ProjectedVerdict, position: number): Promise<boolean> {
    const rows = await sql.query(
      `INSERT INTO read_run_verdicts (run_id, suite_key, suite_version, subject_kind, subject_id, variant, completed_at, n, passed, score,
         verdict, completeness, baseline_run_id, chosen_by, comparison, finding_id, position, project)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15::jsonb, $16, $17, $18)
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
        project,
      ],
    );
    return rows.length === 1;
  }

  /** The decided runs of one suite and subject of one project, newest first (scorecards). */
  async verdictHistory(sql: Sql, project: string, suiteKey: string, subjectKind: string, subjectId: string, limit: number): Promise<ProjectedVerdict[]> {
    const rows = await sql.query(
      `SELECT ${VERDICT_COLUMNS} FROM read_run_verdicts WHERE project = $5 AND suite_key = $1 AND subject_kind = $2 AND subject_id = $3
       ORDER BY completed_at DESC, run_id DESC LIMIT $4`,
      [suiteKey, subjectKind, subjectId, limit, project],
    );
    return rows.map(toVerdict);
  }

  /** Suites and subjects of one project with at least one decided run, in key order. */
  async verdictSubjects(sql: Sql, project: string, filter: VerdictFilter): Promise<Array<{ suite_key: string; subject_kind: string; subject_id: string }>> {
    return sql.query(
      `SELECT DISTINCT suite_key, subject_kind, subject_id FROM read_run_verdicts
       WHERE project = $4 AND ($1::text IS NULL OR suite_key = $1) AND ($2::text IS NULL OR subject_kind = $2) AND ($3::text IS NULL OR subject_id = $3)
       ORDER BY suite_key, subject_kind, subject_id`,
      [filter.suite_key ?? null, filter.subject_kind ?? null, filter.subject_id ?? null, project],
    );
  }

  /** Empties the read model for a rebuild from the event log. */
  async reset(sql: Sql, projection: string): Promise<void> {
    await sql.query(`TRUNCATE runs, eval_results, read_run_verdicts, read_case_results`);
    await sql.query(`DELETE FROM projection_inbox WHERE projection = $1`, [projection]);
    await sql.query(`DELETE FROM projection_checkpoints WHERE name = $1`, [projection]);
  }
}

function toVerdict(r: any): ProjectedVerdict {
  return { ...r, suite_version: Number(r.suite_version), n: Number(r.n), passed: Number(r.passed), score: Number(r.score) };
}
