import type { Sql } from './sql';

/**
 * Calibration sets, their human-labelled items and the calibration reports (J4, D4). All append-only: a set
 * is created once with its items; a report is written once. Items hold the output's hash and length; the
 * text only in a golden set (D4), clamped by the handler before it gets here.
 */
export interface CalibrationSetRecord {
  readonly id: string;
  readonly name: string;
  readonly golden: boolean;
  /** The rubric the humans labelled against (when the items are not cases of a suite with their own). */
  readonly rubric: string | null;
  readonly suite_key: string | null;
  readonly suite_version: number | null;
  readonly item_count: number;
  readonly created_at?: string;
}

export interface CalibrationItemRecord {
  readonly item_id: string;
  readonly case_id: string | null;
  /** SHA-256 hex of the output text the human labelled. */
  readonly output_hash: string;
  readonly human_verdict: 'pass' | 'fail';
  readonly output_chars: number;
  /** Golden sets only (D4), at most 4 000 characters. */
  readonly golden_output: string | null;
  readonly golden_input: string | null;
}

export interface CalibrationReportRecord {
  readonly id: string;
  readonly set_id: string;
  readonly judge_model: string;
  readonly prompt_version: string;
  /** What the report certifies (J4): `rubric:<sha256>` or `suite:<key>`; null on reports from before scopes. */
  readonly scope: string | null;
  readonly targets: object;
  readonly report: unknown;
  readonly status: 'certified' | 'not_certified' | 'not_certifiable' | 'insufficient_set';
  readonly created_at?: string;
}

const ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

export class CalibrationRepository {
  async createSet(sql: Sql, set: CalibrationSetRecord, items: readonly CalibrationItemRecord[]): Promise<void> {
    await sql.query(
      `INSERT INTO calibration_sets (id, name, golden, rubric, suite_key, suite_version, item_count) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [set.id, set.name, set.golden, set.rubric, set.suite_key, set.suite_version, items.length],
    );
    if (items.length === 0) return;
    await sql.query(
      `INSERT INTO calibration_items (set_id, item_id, ordinal, case_id, output_hash, human_verdict, output_chars, golden_output, golden_input)
       SELECT $1, t.item_id, t.ordinal, t.case_id, t.output_hash, t.human_verdict, t.output_chars, t.golden_output, t.golden_input
       FROM unnest($2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[], $9::text[])
         AS t(item_id, ordinal, case_id, output_hash, human_verdict, output_chars, golden_output, golden_input)`,
      [
        set.id,
        items.map((i) => i.item_id),
        items.map((_, n) => n),
        items.map((i) => i.case_id),
        items.map((i) => i.output_hash),
        items.map((i) => i.human_verdict),
        items.map((i) => i.output_chars),
        items.map((i) => i.golden_output),
        items.map((i) => i.golden_input),
      ],
    );
  }

  async findSet(sql: Sql, id: string): Promise<CalibrationSetRecord | null> {
    const rows = await sql.query(
      `SELECT id, name, golden, rubric, suite_key, suite_version, item_count, to_char(created_at AT TIME ZONE 'UTC', ${ISO}) AS created_at
       FROM calibration_sets WHERE id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }

  async items(sql: Sql, setId: string): Promise<CalibrationItemRecord[]> {
    return sql.query(
      `SELECT item_id, case_id, output_hash, human_verdict, output_chars, golden_output, golden_input
       FROM calibration_items WHERE set_id = $1 ORDER BY ordinal`,
      [setId],
    );
  }

  async addReport(sql: Sql, report: CalibrationReportRecord): Promise<CalibrationReportRecord> {
    // The report and its fact in the shared log, in one statement: the gate and the read model learn a judge's
    // standing from `calibration.reported` (JudgeStatusRepository), never from this table (issue 27).
    const [row] = await sql.query(
      `WITH r AS (
         INSERT INTO calibration_reports (id, set_id, judge_model, prompt_version, scope, targets, report, status)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8)
         RETURNING *
       ), fact AS (
         INSERT INTO events (stream_id, stream_version, type, version, data, metadata, message_id)
         SELECT ${CALIBRATION_FACT_COLUMNS} FROM r
       )
       SELECT to_char(created_at AT TIME ZONE 'UTC', ${ISO}) AS created_at FROM r`,
      [report.id, report.set_id, report.judge_model, report.prompt_version, report.scope, JSON.stringify(report.targets), JSON.stringify(report.report), report.status],
    );
    return { ...report, created_at: row.created_at };
  }

  async findReport(sql: Sql, id: string): Promise<CalibrationReportRecord | null> {
    const rows = await sql.query(
      `SELECT id, set_id, judge_model, prompt_version, scope, targets, report, status, to_char(created_at AT TIME ZONE 'UTC', ${ISO}) AS created_at
       FROM calibration_reports WHERE id = $1`,
      [id],
    );
    return rows[0] ?? null;
  }

  /** Reports of one set, newest first. */
  async reportsForSet(sql: Sql, setId: string, limit = 50): Promise<CalibrationReportRecord[]> {
    return sql.query(
      `SELECT id, set_id, judge_model, prompt_version, scope, targets, report, status, to_char(created_at AT TIME ZONE 'UTC', ${ISO}) AS created_at
       FROM calibration_reports WHERE set_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
      [setId, limit],
    );
  }
}

/**
 * `calibration.reported` v1 of one `calibration_reports` row `r`, as the columns of `events`: its own stream
 * (`calibration-<report id>`, version 1), the report's id as the message id. Counts, rates and ids only (D1):
 * a report holds no output. The migration that introduced it wrote the same for every earlier report.
 */
export const CALIBRATION_FACT_COLUMNS = `'calibration-' || r.id, 1, 'calibration.reported', 1,
  jsonb_build_object('report_id', r.id, 'set_id', r.set_id, 'judge_model', r.judge_model, 'prompt_version', r.prompt_version,
    'scope', r.scope, 'status', r.status, 'targets', r.targets, 'report', r.report,
    'created_at', to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')),
  jsonb_build_object('message_id', r.id, 'correlation_id', r.id, 'causation_id', r.id,
    'occurred_at', to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
  r.id::uuid`;
