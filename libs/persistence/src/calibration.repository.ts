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

/**
 * Issue 30: a set, its items and its reports belong to the project that labelled the set (ADR 0009): every
 * method takes the project, and another project's set or report is what a missing one is. Items have no
 * project of their own: they are read only through their set, within its project.
 */
export class CalibrationRepository {
  async createSet(sql: Sql, project: string, set: CalibrationSetRecord, items: readonly CalibrationItemRecord[]): Promise<void> {
    await sql.query(
      `INSERT INTO calibration_sets (id, name, golden, rubric, suite_key, suite_version, item_count, project) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [set.id, set.name, set.golden, set.rubric, set.suite_key, set.suite_version, items.length, project],
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

  async findSet(sql: Sql, project: string, id: string): Promise<CalibrationSetRecord | null> {
    const rows = await sql.query(
      `SELECT id, name, golden, rubric, suite_key, suite_version, item_count, to_char(created_at AT TIME ZONE 'UTC', ${ISO}) AS created_at
       FROM calibration_sets WHERE id = $1 AND project = $2`,
      [id, project],
    );
    return rows[0] ?? null;
  }

  /** The items of a set of `project` (none for another project's set). */
  async items(sql: Sql, project: string, setId: string): Promise<CalibrationItemRecord[]> {
    return sql.query(
      `SELECT i.item_id, i.case_id, i.output_hash, i.human_verdict, i.output_chars, i.golden_output, i.golden_input
       FROM calibration_items i JOIN calibration_sets s ON s.id = i.set_id
       WHERE i.set_id = $1 AND s.project = $2 ORDER BY i.ordinal`,
      [setId, project],
    );
  }

  /** A report of a set of `project`; its `calibration.reported` fact carries the project (absent: `default`). */
  async addReport(sql: Sql, project: string, report: CalibrationReportRecord): Promise<CalibrationReportRecord> {
    // The report and its fact in the shared log, in one statement: the gate and the read model learn a judge's
    // standing from `calibration.reported` (JudgeStatusRepository), never from this table (issue 27).
    const [row] = await sql.query(
      `WITH r AS (
         INSERT INTO calibration_reports (id, set_id, judge_model, prompt_version, scope, targets, report, status, project)
         SELECT $1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8, $9
         -- The set must be the project's: a report never attaches to another project's set.
         WHERE EXISTS (SELECT 1 FROM calibration_sets s WHERE s.id = $2 AND s.project = $9)
         RETURNING *
       ), fact AS (
         INSERT INTO events (stream_id, stream_version, type, version, data, metadata, message_id)
         SELECT ${PROJECT_CALIBRATION_FACT_COLUMNS} FROM r
       )
       SELECT to_char(created_at AT TIME ZONE 'UTC', ${ISO}) AS created_at FROM r`,
      [report.id, report.set_id, report.judge_model, report.prompt_version, report.scope, JSON.stringify(report.targets), JSON.stringify(report.report), report.status, project],
    );
    if (!row) throw new Error(`calibration set ${report.set_id} is not a set of project ${project}`);
    return { ...report, created_at: row.created_at };
  }

  async findReport(sql: Sql, project: string, id: string): Promise<CalibrationReportRecord | null> {
    const rows = await sql.query(
      `SELECT id, set_id, judge_model, prompt_version, scope, targets, report, status, to_char(created_at AT TIME ZONE 'UTC', ${ISO}) AS created_at
       FROM calibration_reports WHERE id = $1 AND project = $2`,
      [id, project],
    );
    return rows[0] ?? null;
  }

  /** Reports of one set of `project`, newest first. */
  async reportsForSet(sql: Sql, project: string, setId: string, limit = 50): Promise<CalibrationReportRecord[]> {
    return sql.query(
      `SELECT id, set_id, judge_model, prompt_version, scope, targets, report, status, to_char(created_at AT TIME ZONE 'UTC', ${ISO}) AS created_at
       FROM calibration_reports WHERE set_id = $1 AND project = $3 ORDER BY created_at DESC, id DESC LIMIT $2`,
      [setId, limit, project],
    );
  }
}

/**
 * `calibration.reported` v1 of one `calibration_reports` row `r`, as the columns of `events`: its own stream
 * (`calibration-<report id>`, version 1), the report's id as the message id. Counts, rates and ids only (D1):
 * a report holds no output. The migration that introduced it wrote the same for every earlier report (it
 * runs before reports had a project, so it uses these columns as they were: `default`).
 */
export const CALIBRATION_FACT_COLUMNS = calibrationFactColumns(`'{}'::jsonb`);

/**
 * The same fact with the report's project (issue 30, ADR 0009: `calibration.reported` carries the project of
 * the set it reports), an optional v1 field added additively: absent for `default`, so a default report's
 * fact is what it was before projects, and `JudgeStatusRepository` reads an absent project as `default`.
 */
const PROJECT_CALIBRATION_FACT_COLUMNS = calibrationFactColumns(`CASE WHEN r.project = 'default' THEN '{}'::jsonb ELSE jsonb_build_object('project', r.project) END`);

function calibrationFactColumns(projectField: string): string {
  return `'calibration-' || r.id, 1, 'calibration.reported', 1,
  jsonb_build_object('report_id', r.id, 'set_id', r.set_id, 'judge_model', r.judge_model, 'prompt_version', r.prompt_version,
    'scope', r.scope, 'status', r.status, 'targets', r.targets, 'report', r.report,
    'created_at', to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')) || ${projectField},
  jsonb_build_object('message_id', r.id, 'correlation_id', r.id, 'causation_id', r.id,
    'occurred_at', to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
  r.id::uuid`;
}
