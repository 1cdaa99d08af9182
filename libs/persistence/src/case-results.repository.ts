import type { CaseOutcome } from '@evals/domain';
import { copyRows, type CopyColumn } from './copy-rows';
import type { Sql } from './sql';

/** One case of a run as the read model keeps it: its result, never the output, its hash or length (D1, D2). */
export type CaseResultRow = Omit<CaseOutcome, 'judge_model' | 'prompt_version'>;

const ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
const COLUMNS = `case_id, scorer, scorer_version, score, passed, label, to_char(scored_at AT TIME ZONE 'UTC', ${ISO}) AS scored_at`;

interface CaseResultRecord {
  readonly run_id: string;
  readonly outcome: CaseOutcome;
}

/**
 * The columns of a row, typed as the table's: `label` is `text`, not `varchar(120)`, so a label too long is
 * refused by the column, as the statement's implicit cast refused it - never clamped (copy-rows.ts clamps a
 * `varchar(n)`).
 */
const CASE_RESULT_COLUMNS: ReadonlyArray<CopyColumn<CaseResultRecord>> = [
  { name: 'run_id', type: 'text', value: (r) => r.run_id },
  { name: 'case_id', type: 'text', value: (r) => r.outcome.case_id },
  { name: 'scorer', type: 'text', value: (r) => r.outcome.scorer },
  { name: 'scorer_version', type: 'text', value: (r) => r.outcome.scorer_version },
  { name: 'score', type: 'float8', value: (r) => r.outcome.score },
  { name: 'passed', type: 'bool', value: (r) => r.outcome.passed },
  { name: 'label', type: 'text', value: (r) => r.outcome.label },
  { name: 'judge_model', type: 'text', value: (r) => r.outcome.judge_model },
  { name: 'prompt_version', type: 'text', value: (r) => r.outcome.prompt_version },
  { name: 'scored_at', type: 'timestamptz', value: (r) => r.outcome.scored_at },
];

const INSERT_CASE_RESULTS = `INSERT INTO read_case_results (${CASE_RESULT_COLUMNS.map((c) => c.name).join(', ')})
  SELECT * FROM unnest(${CASE_RESULT_COLUMNS.map((c, i) => `$${i + 1}::${c.type}[]`).join(', ')})
  ON CONFLICT (run_id, case_id) DO NOTHING`;

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

  /**
   * `insert` of many runs' cases at once (a micro-batch of the projector, issue 28). A batch of some size goes
   * by COPY behind a savepoint (copy-rows.ts): about a third of the server's CPU per row of the statement's
   * (`bench/read-model/case-results-insert.bench.ts`); a case already there (a redelivery, a backfill
   * repeating a v1 run's cases) makes it write nothing, and the statement below writes the batch, skipping
   * those. The statement takes one typed array per column: `json_to_recordset` cost the server about twice
   * `unnest`'s per row, more than `pg`'s escaping of the arrays costs the client.
   */
  async insertAll(sql: Sql, runs: ReadonlyArray<{ readonly runId: string; readonly outcomes: readonly CaseOutcome[] }>): Promise<void> {
    const records = runs.flatMap(({ runId, outcomes }) => outcomes.map((outcome): CaseResultRecord => ({ run_id: runId, outcome })));
    if (records.length === 0) return;
    if (await copyRows(sql, 'read_case_results', records, CASE_RESULT_COLUMNS)) return;
    await sql.query(INSERT_CASE_RESULTS, CASE_RESULT_COLUMNS.map((c) => records.map(c.value)));
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
