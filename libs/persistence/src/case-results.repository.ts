import type { CaseOutcome } from '@evals/domain';
import type { Sql } from './sql';

/** One case of a run as the read model keeps it: its result, never the output, its hash or length (D1, D2). */
export type CaseResultRow = Omit<CaseOutcome, 'judge_model' | 'prompt_version'>;

const ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
const COLUMNS = `case_id, scorer, scorer_version, score, passed, label, to_char(scored_at AT TIME ZONE 'UTC', ${ISO}) AS scored_at`;

/** A judged `llm_judge` case of a run with the pin that judged it (the judge correction's input). */
export interface JudgedCaseRow {
  readonly case_id: string;
  readonly passed: boolean;
  readonly judge_model: string;
  readonly prompt_version: string;
}

/**
 * Where a run view takes a run's cases from: the read model's projection (CaseResultRepository), or the
 * run's `cases.scored` folded from the log (LoggedCaseResults, the ingestion's). Both answer the same rows in
 * the same order.
 */
export interface CaseResultSource {
  /** A run's cases in case id order. */
  forRun(sql: Sql, runId: string): Promise<CaseResultRow[]>;
  /** The run's `llm_judge` cases the judge actually judged (a pin), in case order. */
  judged(sql: Sql, runId: string): Promise<JudgedCaseRow[]>;
}

/**
 * The read model's projection of the runs' per-case results (`read_case_results`, issue 27): written from
 * `cases.scored` v1/v3 by the run projector, read by the run view, the SSE replay, the case pages and the
 * judge correction - in place of the scoring worker's evidence table. Derived from the log like `runs`, so a
 * rebuild truncates it (RunReadModelRepository.reset) and replays it.
 */
export class CaseResultRepository implements CaseResultSource {
  /** Each case once: a redelivered or repeated result (a backfill of a v1 run) writes nothing. */
  insert(sql: Sql, runId: string, outcomes: readonly CaseOutcome[]): Promise<void> {
    return this.insertAll(sql, [{ runId, outcomes }]);
  }

  /** `insert` of many runs' cases in one statement (a micro-batch of the projector, issue 28). */
  async insertAll(sql: Sql, runs: ReadonlyArray<{ readonly runId: string; readonly outcomes: readonly CaseOutcome[] }>): Promise<void> {
    const records = runs.flatMap(({ runId, outcomes }) => outcomes.map((o) => ({ ...o, run_id: runId })));
    if (records.length === 0) return;
    // One json parameter, expanded server side: as the evidence insert, no array literals escaped in JavaScript.
    await sql.query(
      `INSERT INTO read_case_results (run_id, case_id, scorer, scorer_version, score, passed, label, judge_model, prompt_version, scored_at)
       SELECT run_id, case_id, scorer, scorer_version, score, passed, label, judge_model, prompt_version, scored_at
       FROM json_to_recordset($1::json) AS t(run_id text, case_id text, scorer text, scorer_version text, score float8, passed bool, label text,
                                              judge_model text, prompt_version text, scored_at timestamptz)
       ON CONFLICT (run_id, case_id) DO NOTHING`,
      [JSON.stringify(records)],
    );
  }

  /** A run's cases in case id order. */
  async forRun(sql: Sql, runId: string): Promise<CaseResultRow[]> {
    const rows = await sql.query(`SELECT ${COLUMNS} FROM read_case_results WHERE run_id = $1 ORDER BY case_id`, [runId]);
    return rows.map(toRow);
  }

  /** One page of a run's cases in case id order, optionally only those that passed (or failed), and how many there are. */
  async page(sql: Sql, runId: string, passed: boolean | undefined, offset: number, limit: number): Promise<{ items: CaseResultRow[]; total: number }> {
    const [count] = await sql.query(`SELECT count(*)::int AS n FROM read_case_results WHERE run_id = $1 AND ($2::bool IS NULL OR passed = $2)`, [runId, passed ?? null]);
    const rows = await sql.query(
      `SELECT ${COLUMNS} FROM read_case_results WHERE run_id = $1 AND ($2::bool IS NULL OR passed = $2) ORDER BY case_id OFFSET $3 LIMIT $4`,
      [runId, passed ?? null, offset, limit],
    );
    return { items: rows.map(toRow), total: count.n };
  }

  /** The run's `llm_judge` cases the judge actually judged (a pin; skipped and unconfigured cases have none), in case order. */
  async judged(sql: Sql, runId: string): Promise<JudgedCaseRow[]> {
    return sql.query(
      `SELECT case_id, passed, judge_model, prompt_version FROM read_case_results
       WHERE run_id = $1 AND scorer = 'llm_judge' AND judge_model IS NOT NULL AND prompt_version IS NOT NULL
       ORDER BY case_id`,
      [runId],
    );
  }
}

function toRow(r: CaseResultRow): CaseResultRow {
  return { ...r, score: Number(r.score) };
}
