import type { Sql } from './sql';

/** One pairwise A/B report (J5): append-only evidence. Never an output, never the judge's reasoning. */
export interface ComparisonReportRecord {
  readonly id: string;
  readonly run_a: string;
  readonly run_b: string;
  readonly judge_model: string;
  readonly prompt_version: string;
  /** SHA-256 hex of the rubric the pairs were compared against. */
  readonly rubric_hash: string;
  readonly report: unknown;
  readonly created_at?: string;
}

const ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

/** Issue 30: a report belongs to the project of its two runs; another project's report is a missing one. */
export class ComparisonRepository {
  async add(sql: Sql, project: string, record: ComparisonReportRecord): Promise<ComparisonReportRecord> {
    const [row] = await sql.query(
      `INSERT INTO comparison_reports (id, run_a, run_b, judge_model, prompt_version, rubric_hash, report, project)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8) RETURNING to_char(created_at AT TIME ZONE 'UTC', ${ISO}) AS created_at`,
      [record.id, record.run_a, record.run_b, record.judge_model, record.prompt_version, record.rubric_hash, JSON.stringify(record.report), project],
    );
    return { ...record, created_at: row.created_at };
  }

  async find(sql: Sql, project: string, id: string): Promise<ComparisonReportRecord | null> {
    const rows = await sql.query(
      `SELECT id, run_a, run_b, judge_model, prompt_version, rubric_hash, report, to_char(created_at AT TIME ZONE 'UTC', ${ISO}) AS created_at
       FROM comparison_reports WHERE id = $1 AND project = $2`,
      [id, project],
    );
    return rows[0] ?? null;
  }
}
