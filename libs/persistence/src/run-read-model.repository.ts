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

  /** Which of these events `projection` applied already (one query for a micro-batch's claims, issue 28). */
  async claimedAlready(sql: Sql, projection: string, messageIds: readonly string[]): Promise<Set<string>> {
    if (messageIds.length === 0) return new Set();
    const rows: Array<{ message_id: string }> = await sql.query(
      `SELECT message_id::text AS message_id FROM projection_inbox WHERE projection = $1 AND message_id = ANY($2::uuid[])`,
      [projection, [...new Set(messageIds)]],
    );
    return new Set(rows.map((r) => r.message_id));
  }

  /** `claim` of many events in one statement; returns how many were new (the others were claimed by someone else). */
  async claimAll(sql: Sql, projection: string, claims: ReadonlyArray<{ readonly message_id: string; readonly position: number }>): Promise<number> {
    if (claims.length === 0) return 0;
    const rows = await sql.query(
      `INSERT INTO projection_inbox (projection, message_id, position)
       SELECT $1, m, p FROM unnest($2::uuid[], $3::bigint[]) AS t(m, p)
       ON CONFLICT DO NOTHING RETURNING 1`,
      [projection, claims.map((c) => c.message_id), claims.map((c) => c.position)],
    );
    return rows.length;
  }

  /**
   * The run's `cases.scored` events in the log that `projection` has not applied yet, in log order (issue 27):
   * a run's cases are caught up when its `run.scored` is applied, so a completed run shows every case even
   * when a worker's relay is behind the one that carried the seal.
   */
  async unappliedCases(sql: Sql, projection: string, runId: string): Promise<StoredEvent[]> {
    return (await this.unappliedCasesOf(sql, projection, [runId])).get(runId)!;
  }

  /**
   * `unappliedCases` of many runs in one query (the runs a micro-batch completes): every run asked for has an
   * entry, empty when it has none - what the caller was told, so it never asks again (issue 28: a run whose
   * cases all came before its `run.scored` was a second read each).
   */
  async unappliedCasesOf(sql: Sql, projection: string, runIds: readonly string[]): Promise<Map<string, StoredEvent[]>> {
    const found = new Map<string, StoredEvent[]>(runIds.map((runId) => [runId, []]));
    if (runIds.length === 0) return found;
    const rows: StoredEvent[] = await sql.query(
      `SELECT e.position, e.stream_id, e.stream_version, e.type, e.version, e.data, e.metadata FROM events e
       WHERE e.type = 'cases.scored' AND e.data->>'run_id' = ANY($2::text[])
         AND NOT EXISTS (SELECT 1 FROM projection_inbox i WHERE i.projection = $1 AND i.message_id = e.message_id)
       ORDER BY e.position`,
      [projection, [...new Set(runIds)]],
    );
    for (const r of rows) found.get((r.data as { run_id: string }).run_id)!.push({ ...r, position: Number(r.position) });
    return found;
  }

  /** The projection's own read, by run id in every project: the projector applies the events of any run. */
  async load(sql: Sql, runId: string, forUpdate = false): Promise<RunDoc | null> {
    const rows = await sql.query(`SELECT doc FROM runs WHERE run_id = $1${forUpdate ? ' FOR UPDATE' : ''}`, [runId]);
    return rows.length === 0 ? null : (rows[0].doc as RunDoc);
  }

  /** `load` of many runs in one query; FOR UPDATE locks them in run id order (the projector's one lock order). */
  async loadAll(sql: Sql, runIds: readonly string[], forUpdate = false): Promise<Map<string, RunDoc>> {
    if (runIds.length === 0) return new Map();
    const rows: Array<{ run_id: string; doc: RunDoc }> = await sql.query(
      `SELECT run_id, doc FROM runs WHERE run_id = ANY($1::text[]) ORDER BY run_id${forUpdate ? ' FOR UPDATE' : ''}`,
      [[...new Set(runIds)]],
    );
    return new Map(rows.map((r) => [r.run_id, r.doc]));
  }

  /** A caller's read (issue 30): the run when it belongs to `project`, else null - exactly as a missing run. */
  async find(sql: Sql, project: string, runId: string): Promise<RunDoc | null> {
    const rows = await sql.query(`SELECT doc FROM runs WHERE run_id = $1 AND project = $2`, [runId, project]);
    return rows.length === 0 ? null : (rows[0].doc as RunDoc);
  }

  /** Writes the documents (each run once) in one statement: the project is written with a run's first row and never changed after (issue 30). */
  async saveAll(sql: Sql, docs: ReadonlyArray<{ readonly doc: RunDoc; readonly position: number }>): Promise<void> {
    if (docs.length === 0) return;
    const records = docs.map(({ doc, position }) => ({
      run_id: doc.run_id,
      project: docProject(doc),
      suite_key: doc.suite_key,
      suite_version: doc.suite_version,
      subject_kind: doc.subject_kind,
      subject_id: doc.subject_id,
      variant: doc.variant,
      status: doc.status,
      doc,
      opened_at: doc.opened_at,
      completed_at: doc.completed_at,
      last_position: position,
    }));
    await sql.query(
      `INSERT INTO runs (run_id, project, suite_key, suite_version, subject_kind, subject_id, variant, status, doc, opened_at, completed_at, last_position)
       SELECT run_id, project, suite_key, suite_version, subject_kind, subject_id, variant, status, doc, opened_at, completed_at, last_position
       FROM json_to_recordset($1::json) AS t(run_id text, project text, suite_key text, suite_version int, subject_kind text, subject_id text,
                                              variant text, status text, doc jsonb, opened_at timestamptz, completed_at timestamptz, last_position bigint)
       ON CONFLICT (run_id) DO UPDATE SET status = EXCLUDED.status, doc = EXCLUDED.doc,
         completed_at = EXCLUDED.completed_at, last_position = GREATEST(runs.last_position, EXCLUDED.last_position)`,
      [JSON.stringify(records)],
    );
  }

  /** Records the runs' EvalResults in one statement; returns the run ids this call recorded (the first time: a run is completed once). */
  async saveEvalResults(sql: Sql, results: ReadonlyArray<{ readonly result: EvalResult; readonly position: number }>): Promise<Set<string>> {
    if (results.length === 0) return new Set();
    const rows: Array<{ run_id: string }> = await sql.query(
      `INSERT INTO eval_results (run_id, result, occurred_at, position)
       SELECT run_id, result, occurred_at, position FROM json_to_recordset($1::json) AS t(run_id text, result jsonb, occurred_at timestamptz, position bigint)
       ON CONFLICT (run_id) DO NOTHING RETURNING run_id`,
      [JSON.stringify(results.map(({ result, position }) => ({ run_id: result.run_id, result, occurred_at: result.occurred_at, position })))],
    );
    return new Set(rows.map((r) => r.run_id));
  }

  async evalResult(sql: Sql, runId: string): Promise<EvalResult | null> {
    const rows = await sql.query(`SELECT result FROM eval_results WHERE run_id = $1`, [runId]);
    return rows.length === 0 ? null : (rows[0].result as EvalResult);
  }

  /** Moves the checkpoint forward (never back); returns where it stands. */
  async advanceCheckpoint(sql: Sql, name: string, position: number): Promise<number> {
    const rows = await sql.query(
      `INSERT INTO projection_checkpoints (name, position) VALUES ($1, $2)
       ON CONFLICT (name) DO UPDATE SET position = GREATEST(projection_checkpoints.position, EXCLUDED.position), updated_at = now()
       RETURNING position`,
      [name, position],
    );
    return Number(rows[0].position);
  }

  async checkpoint(sql: Sql, name: string): Promise<number> {
    const rows = await sql.query(`SELECT position FROM projection_checkpoints WHERE name = $1`, [name]);
    return rows.length === 0 ? 0 : Number(rows[0].position);
  }

  /** `loadVerdict` of many runs in one query; a run without a projected verdict is absent. */
  async loadVerdicts(sql: Sql, runIds: readonly string[]): Promise<Map<string, ProjectedVerdict>> {
    if (runIds.length === 0) return new Map();
    const rows = await sql.query(`SELECT ${VERDICT_COLUMNS} FROM read_run_verdicts WHERE run_id = ANY($1::text[])`, [[...new Set(runIds)]]);
    return new Map(rows.map((r: Record<string, unknown>) => [r.run_id as string, toVerdict(r as never)]));
  }

  async loadVerdict(sql: Sql, runId: string): Promise<ProjectedVerdict | null> {
    const rows = await sql.query(`SELECT ${VERDICT_COLUMNS} FROM read_run_verdicts WHERE run_id = $1`, [runId]);
    return rows.length === 0 ? null : toVerdict(rows[0]);
  }

  /**
   * Records the runs' decisions in one statement (a micro-batch's, issue 28: it was one per run); returns the
   * run ids this call recorded - the first decision stands, as a run is compared once. A verdict's `project` is
   * its run's (its document's): a scorecard is one suite and subject within one project.
   */
  async saveVerdicts(sql: Sql, verdicts: ReadonlyArray<{ readonly project: string; readonly verdict: ProjectedVerdict; readonly position: number }>): Promise<Set<string>> {
    if (verdicts.length === 0) return new Set();
    const records = verdicts.map(({ project, verdict: v, position }) => ({
      run_id: v.run_id,
      suite_key: v.suite_key,
      suite_version: v.suite_version,
      subject_kind: v.subject_kind,
      subject_id: v.subject_id,
      variant: v.variant,
      completed_at: v.completed_at,
      n: v.n,
      passed: v.passed,
      score: v.score,
      verdict: v.verdict,
      completeness: v.completeness,
      baseline_run_id: v.baseline_run_id,
      chosen_by: v.chosen_by,
      // A JSON null (or an absent comparison) is SQL NULL in the row, as before.
      comparison: v.comparison ?? null,
      finding_id: v.finding_id,
      position,
      project,
    }));
    const rows: Array<{ run_id: string }> = await sql.query(
      `INSERT INTO read_run_verdicts (run_id, suite_key, suite_version, subject_kind, subject_id, variant, completed_at, n, passed, score,
         verdict, completeness, baseline_run_id, chosen_by, comparison, finding_id, position, project)
       SELECT run_id, suite_key, suite_version, subject_kind, subject_id, variant, completed_at, n, passed, score,
         verdict, completeness, baseline_run_id, chosen_by, comparison, finding_id, position, project
       FROM json_to_recordset($1::json) AS t(run_id text, suite_key text, suite_version int, subject_kind text, subject_id text, variant text,
                                              completed_at timestamptz, n int, passed int, score float8, verdict text, completeness text,
                                              baseline_run_id text, chosen_by text, comparison jsonb, finding_id uuid, position bigint, project text)
       ON CONFLICT (run_id) DO NOTHING RETURNING run_id`,
      [JSON.stringify(records)],
    );
    return new Set(rows.map((r) => r.run_id));
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
