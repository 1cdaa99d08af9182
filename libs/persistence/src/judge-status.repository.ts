import { DEFAULT_PROJECT } from '@evals/contracts';
import { correctedJudgePassRate, type CalibrationReport, type CorrectedJudgePassRate } from '@evals/domain';
import type { Sql } from './sql';

/** A judge scope's calibration standing (J4, GT1): the status of the latest measured report of that scope. */
export type JudgeCertification = 'certified' | 'not_certified' | 'not_certifiable' | 'uncalibrated';

export interface JudgeStatus {
  readonly status: JudgeCertification;
  readonly judge_model: string;
  readonly prompt_version: string;
  /** What it certifies: `rubric:<sha256>` or `suite:<key>` (J4); null for a pin never measured in any scope. */
  readonly scope: string | null;
  /** The latest measured report of this scope, or null when it was never measured (`uncalibrated`). */
  readonly report_id: string | null;
  readonly set_id: string | null;
  readonly calibrated_at: string | null;
  readonly n: number | null;
  readonly agreement: CalibrationReport['agreement'] | null;
  readonly kappa: number | null;
  readonly sensitivity: CalibrationReport['sensitivity'] | null;
  readonly specificity: CalibrationReport['specificity'] | null;
  readonly targets: CalibrationReport['targets'] | null;
  readonly reasons: readonly string[];
}

/**
 * Which reports count: measured ones of a scope. A refused set (`insufficient_set`: too small, or one human
 * class) was never measured and displaces nothing; a report from before scopes (scope NULL) certifies no
 * scope. Within a scope the latest report wins - and only within it: a report for rubric B never replaces
 * rubric A's.
 */
const MEASURED = `data->>'scope' IS NOT NULL AND data->>'status' <> 'insufficient_set'`;

/**
 * A report as the regression app recorded it in the shared log (`calibration.reported`, written with the
 * row by CalibrationRepository.addReport): the gate (ingestion) and the read model fold a judge's standing
 * from the log, never from the regression app's table (issue 27, ownership.ts). `created_at` is kept to the
 * microsecond in the fact, so its text orders as the timestamp did; it is shown to the millisecond.
 */
const REPORT_FACT = `data->>'report_id' AS id, data->>'set_id' AS set_id, data->>'scope' AS scope, data->>'status' AS status,
  data->'report' AS report, left(data->>'created_at', 23) || 'Z' AS created_at
  FROM events WHERE type = 'calibration.reported' AND data->>'judge_model' = $1 AND data->>'prompt_version' = $2
    AND coalesce(data->>'project', '${DEFAULT_PROJECT}') = $3`;

/**
 * Reads judge scopes' standing from the `calibration.reported` facts of the shared log. Exported for the gate (ingestion)
 * and served by the regression app at `GET /v1/judges/status`. Issue 30 (ADR 0009): the standing is per
 * project - a fact counts only in the project of the set it reports (no `project` in the fact: `default`),
 * so one team's labels never certify another team's judge.
 */
export class JudgeStatusRepository {
  /**
   * One scope of a pin: its latest measured report, or `uncalibrated`. Without a scope, the pin's latest
   * measured report of any scope - a summary for listings only: the gate asks by scope (`scopes`).
   */
  async status(sql: Sql, project: string, judgeModel: string, promptVersion: string, scope?: string): Promise<JudgeStatus> {
    const rows = await sql.query(
      `SELECT ${REPORT_FACT} AND ${MEASURED} ${scope === undefined ? '' : "AND data->>'scope' = $4"}
       ORDER BY data->>'created_at' DESC, data->>'report_id' DESC LIMIT 1`,
      scope === undefined ? [judgeModel, promptVersion, project] : [judgeModel, promptVersion, project, scope],
    );
    return rows.length === 0 ? uncalibrated(judgeModel, promptVersion, scope) : fromRow(judgeModel, promptVersion, rows[0]);
  }

  /** Every measured scope of a pin, each by its latest report, in scope order. */
  async scopes(sql: Sql, project: string, judgeModel: string, promptVersion: string): Promise<JudgeStatus[]> {
    const rows = await sql.query(
      `SELECT DISTINCT ON (data->>'scope') ${REPORT_FACT} AND ${MEASURED}
       ORDER BY data->>'scope', data->>'created_at' DESC, data->>'report_id' DESC`,
      [judgeModel, promptVersion, project],
    );
    return rows.map((row: Record<string, unknown>) => fromRow(judgeModel, promptVersion, row));
  }
}

function uncalibrated(judgeModel: string, promptVersion: string, scope: string | undefined): JudgeStatus {
  return {
    status: 'uncalibrated',
    judge_model: judgeModel,
    prompt_version: promptVersion,
    scope: scope ?? null,
    report_id: null,
    set_id: null,
    calibrated_at: null,
    n: null,
    agreement: null,
    kappa: null,
    sensitivity: null,
    specificity: null,
    targets: null,
    reasons: ['never_calibrated'],
  };
}

function fromRow(judgeModel: string, promptVersion: string, row: Record<string, any>): JudgeStatus {
  const report = row.report as CalibrationReport;
  return {
    status: row.status,
    judge_model: judgeModel,
    prompt_version: promptVersion,
    scope: row.scope,
    report_id: row.id,
    set_id: row.set_id,
    calibrated_at: row.created_at,
    n: report.n,
    agreement: report.agreement,
    kappa: report.kappa?.value ?? null,
    sensitivity: report.sensitivity,
    specificity: report.specificity,
    targets: report.targets,
    reasons: report.reasons ?? [],
  };
}

/**
 * A certified scope's correction of `passed` of `n` judged cases (Rogan-Gladen with the Lang & Reiczigel
 * 2014 interval, J4/J9). Null unless the scope is certified.
 */
export function judgeCorrectedPassRate(status: JudgeStatus, apparent: { readonly passed: number; readonly n: number }): CorrectedJudgePassRate | null {
  if (status.status !== 'certified' || !status.sensitivity || !status.specificity) return null;
  return correctedJudgePassRate(apparent, { sensitivity: status.sensitivity, specificity: status.specificity });
}
