import { JUDGE_ERROR_CODES, JUDGE_NOT_CONFIGURED, MISSING_OUTPUT, type RunCompleteness } from '@evals/domain';
import type { Sql } from './sql';

/** One completed run as the regression app decided it (G1-G2); append-only. */
export interface RunVerdictRow {
  readonly run_id: string;
  readonly suite_key: string;
  readonly suite_version: number;
  readonly subject_kind: string;
  readonly subject_id: string;
  readonly variant: string | null;
  readonly completed_at: string;
  readonly n: number;
  readonly passed: number;
  readonly score: number;
  readonly pass_threshold: number;
  readonly scorer_versions: Readonly<Record<string, string>>;
  readonly verdict: string;
  /** R7: every case scored, some left unscored, or sealed by expiry (only `complete` runs are baselines). */
  readonly completeness: RunCompleteness;
  readonly baseline_run_id: string | null;
  readonly baseline_choice: string | null;
  readonly comparison: unknown;
}

export interface BaselinePin {
  readonly suite_key: string;
  readonly subject_kind: string;
  readonly subject_id: string;
  readonly variant: string | null;
  readonly run_id: string;
  readonly pinned_at?: string;
}

/** A completed run as a baseline candidate: its verdict row without the comparison it was decided by. */
export type BaselineCandidate = Omit<RunVerdictRow, 'comparison'>;

const ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
const CANDIDATE_COLUMNS = `run_id, suite_key, suite_version, subject_kind, subject_id, variant,
  to_char(completed_at AT TIME ZONE 'UTC', ${ISO}) AS completed_at, n, passed, score, pass_threshold,
  scorer_versions, verdict, completeness, baseline_run_id, baseline_choice`;
const COLUMNS = `${CANDIDATE_COLUMNS}, comparison`;

/**
 * G7: the cases two runs both scored, paired. A case counts only when both runs have evidence for it with
 * a real score: not `missing_output`, and for `llm_judge` a verdict the judge gave (not skipped, refused,
 * unconfigured or failed). `b` = passed in the baseline only, `c` = passed in the run only (Newcombe's
 * paired cells f and g).
 */
export interface ComparedCases {
  readonly compared: number;
  /** Passed in both, baseline only, run only, neither. */
  readonly a: number;
  readonly b: number;
  readonly c: number;
  readonly d: number;
  readonly run_score_sum: number;
  readonly baseline_score_sum: number;
  /** Evidence rows of each run, and how many of them had a real score. */
  readonly run_cases: number;
  readonly run_scored: number;
  readonly baseline_cases: number;
  readonly baseline_scored: number;
  /** Each run over its own scored cases (two suite versions: independent samples, not pairs). */
  readonly run_scored_passed: number;
  readonly run_scored_score_sum: number;
  readonly baseline_scored_passed: number;
  readonly baseline_scored_score_sum: number;
}

/** Labels of evidence rows that carry no real score (R1, GT2, GT4, J3). */
const UNSCORED_JUDGE_LABELS = [...JUDGE_ERROR_CODES, JUDGE_NOT_CONFIGURED];
const SCORED_ROW = `NOT (label = '${MISSING_OUTPUT}' OR (scorer = 'llm_judge' AND (judge_model IS NULL OR label = ANY($3::text[]))))`;

export class RegressionRepository {
  /** True when this call recorded the verdict (a redelivered event finds it there and does nothing). */
  async record(sql: Sql, row: RunVerdictRow): Promise<boolean> {
    const rows = await sql.query(
      `INSERT INTO run_verdicts (run_id, suite_key, suite_version, subject_kind, subject_id, variant, completed_at, n, passed,
         score, pass_threshold, scorer_versions, verdict, baseline_run_id, baseline_choice, comparison, completeness)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13, $14, $15, $16::jsonb, $17)
       ON CONFLICT (run_id) DO NOTHING RETURNING 1`,
      [row.run_id, row.suite_key, row.suite_version, row.subject_kind, row.subject_id, row.variant, row.completed_at, row.n, row.passed, row.score, row.pass_threshold, JSON.stringify(row.scorer_versions), row.verdict, row.baseline_run_id, row.baseline_choice, row.comparison === null ? null : JSON.stringify(row.comparison), row.completeness],
    );
    return rows.length === 1;
  }

  /**
   * G7: the two runs' evidence paired on the cases both scored. One pass over both runs' rows, grouped by
   * case, instead of a join of the two: the comparison runs right after the run's evidence was written, when
   * the planner's statistics do not know those rows yet (autovacuum on a server has not analysed them; PGlite
   * never does) - and a join planned for "one row" was a nested loop over both runs, 9.4 s for two 10 000-case
   * runs on PGlite (issue 15, docs/benchmarks.md). Grouping costs the same whatever the estimate.
   */
  async comparedCases(sql: Sql, runId: string, baselineRunId: string): Promise<ComparedCases> {
    const rows = await sql.query(
      `WITH per_case AS (
         SELECT count(*) FILTER (WHERE run_id = $1) AS run_rows,
                count(*) FILTER (WHERE run_id = $2) AS baseline_rows,
                -- NULL when that run has no scored row for the case
                bool_or(passed) FILTER (WHERE run_id = $1 AND scored) AS r_passed,
                sum(score) FILTER (WHERE run_id = $1 AND scored) AS r_score,
                bool_or(passed) FILTER (WHERE run_id = $2 AND scored) AS b_passed,
                sum(score) FILTER (WHERE run_id = $2 AND scored) AS b_score
         FROM (SELECT run_id, case_id, passed, score, ${SCORED_ROW} AS scored FROM evidence WHERE run_id = $1 OR run_id = $2) AS e
         GROUP BY case_id)
       SELECT count(*) FILTER (WHERE r_passed IS NOT NULL AND b_passed IS NOT NULL)::int AS compared,
              count(*) FILTER (WHERE r_passed AND b_passed)::int AS a,
              count(*) FILTER (WHERE b_passed AND NOT r_passed)::int AS b,
              count(*) FILTER (WHERE r_passed AND NOT b_passed)::int AS c,
              count(*) FILTER (WHERE NOT r_passed AND NOT b_passed)::int AS d,
              coalesce(sum(r_score) FILTER (WHERE b_passed IS NOT NULL), 0)::float8 AS run_score_sum,
              coalesce(sum(b_score) FILTER (WHERE r_passed IS NOT NULL), 0)::float8 AS baseline_score_sum,
              coalesce(sum(run_rows), 0)::int AS run_cases,
              count(r_passed)::int AS run_scored,
              coalesce(sum(baseline_rows), 0)::int AS baseline_cases,
              count(b_passed)::int AS baseline_scored,
              count(*) FILTER (WHERE r_passed)::int AS run_scored_passed,
              coalesce(sum(r_score), 0)::float8 AS run_scored_score_sum,
              count(*) FILTER (WHERE b_passed)::int AS baseline_scored_passed,
              coalesce(sum(b_score), 0)::float8 AS baseline_scored_score_sum
         FROM per_case`,
      [runId, baselineRunId, UNSCORED_JUDGE_LABELS],
    );
    const r = rows[0];
    const sums = ['run_score_sum', 'baseline_score_sum', 'run_scored_score_sum', 'baseline_scored_score_sum'] as const;
    return { ...r, ...Object.fromEntries(sums.map((k) => [k, Number(r[k])])) };
  }

  async find(sql: Sql, runId: string): Promise<RunVerdictRow | null> {
    const rows = await sql.query(`SELECT ${COLUMNS} FROM run_verdicts WHERE run_id = $1`, [runId]);
    return rows.length === 0 ? null : toRow(rows[0]);
  }

  /**
   * Completed runs of one suite and subject, newest first: the baseline candidates of every decision (G4, G5).
   * Without their comparisons, which no choice reads: each is a JSON document of intervals and counts, and a
   * subject with a long history had every new run read (and parse) up to 500 of them: 5.5 ms of client CPU per
   * call with them, 1.8 without (`npm run bench:history`; issue 15).
   */
  async history(sql: Sql, suiteKey: string, subjectKind: string, subjectId: string, limit = 500): Promise<BaselineCandidate[]> {
    const rows = await sql.query(
      `SELECT ${CANDIDATE_COLUMNS} FROM run_verdicts WHERE suite_key = $1 AND subject_kind = $2 AND subject_id = $3
       ORDER BY completed_at DESC, run_id DESC LIMIT $4`,
      [suiteKey, subjectKind, subjectId, limit],
    );
    return rows.map(toRow);
  }

  async subjects(sql: Sql, filter: { suite_key?: string; subject_kind?: string; subject_id?: string }): Promise<Array<{ suite_key: string; subject_kind: string; subject_id: string }>> {
    return sql.query(
      `SELECT DISTINCT suite_key, subject_kind, subject_id FROM run_verdicts
       WHERE ($1::text IS NULL OR suite_key = $1) AND ($2::text IS NULL OR subject_kind = $2) AND ($3::text IS NULL OR subject_id = $3)
       ORDER BY suite_key, subject_kind, subject_id`,
      [filter.suite_key ?? null, filter.subject_kind ?? null, filter.subject_id ?? null],
    );
  }

  async pin(sql: Sql, pin: BaselinePin): Promise<void> {
    await sql.query(
      `INSERT INTO baseline_pins (suite_key, subject_kind, subject_id, variant, run_id) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (suite_key, subject_kind, subject_id, variant) DO UPDATE SET run_id = EXCLUDED.run_id, pinned_at = now()`,
      [pin.suite_key, pin.subject_kind, pin.subject_id, pin.variant ?? '', pin.run_id],
    );
  }

  async pinFor(sql: Sql, suiteKey: string, subjectKind: string, subjectId: string, variant: string | null): Promise<BaselinePin | null> {
    const rows = await sql.query(
      `SELECT suite_key, subject_kind, subject_id, variant, run_id FROM baseline_pins
       WHERE suite_key = $1 AND subject_kind = $2 AND subject_id = $3 AND variant = $4`,
      [suiteKey, subjectKind, subjectId, variant ?? ''],
    );
    return rows.length === 0 ? null : { ...rows[0], variant: rows[0].variant === '' ? null : rows[0].variant };
  }

  async pins(sql: Sql, filter: { suite_key?: string; subject_id?: string }): Promise<BaselinePin[]> {
    const rows = await sql.query(
      `SELECT suite_key, subject_kind, subject_id, variant, run_id, to_char(pinned_at AT TIME ZONE 'UTC', ${ISO}) AS pinned_at
       FROM baseline_pins WHERE ($1::text IS NULL OR suite_key = $1) AND ($2::text IS NULL OR subject_id = $2)
       ORDER BY suite_key, subject_kind, subject_id, variant`,
      [filter.suite_key ?? null, filter.subject_id ?? null],
    );
    return rows.map((r: any) => ({ ...r, variant: r.variant === '' ? null : r.variant }));
  }

  async addFinding(sql: Sql, finding: { finding_id: string; kind: string; run_id: string; payload: unknown; occurred_at: string }): Promise<boolean> {
    const rows = await sql.query(
      `INSERT INTO findings (finding_id, kind, run_id, payload, occurred_at) VALUES ($1, $2, $3, $4::jsonb, $5)
       ON CONFLICT DO NOTHING RETURNING 1`,
      [finding.finding_id, finding.kind, finding.run_id, JSON.stringify(finding.payload), finding.occurred_at],
    );
    return rows.length === 1;
  }

  /** Stored finding payloads, newest first, optionally of one suite and subject. */
  async findings(sql: Sql, filter: { suite_key?: string; subject_id?: string; limit: number }): Promise<unknown[]> {
    const rows = await sql.query(
      `SELECT payload FROM findings
        WHERE ($1::text IS NULL OR payload->>'suite' = $1) AND ($2::text IS NULL OR payload->>'subject_id' = $2)
        ORDER BY occurred_at DESC, finding_id LIMIT $3`,
      [filter.suite_key ?? null, filter.subject_id ?? null, filter.limit],
    );
    return rows.map((r: { payload: unknown }) => r.payload);
  }

  async findingFor(sql: Sql, runId: string): Promise<{ finding_id: string; payload: unknown } | null> {
    const rows = await sql.query(`SELECT finding_id, payload FROM findings WHERE run_id = $1`, [runId]);
    return rows[0] ?? null;
  }
}

function toRow<T extends BaselineCandidate>(r: any): T {
  return { ...r, score: Number(r.score), pass_threshold: Number(r.pass_threshold) };
}
