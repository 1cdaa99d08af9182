import { correctedPassRate, type CalibrationReport, type CorrectedPassRate } from '@evals/domain';
import type { Sql } from './sql';

/** A judge pin's calibration standing (J4, GT1): the status of its latest calibration report. */
export type JudgeCertification = 'certified' | 'not_certified' | 'not_certifiable' | 'uncalibrated';

export interface JudgeStatus {
  readonly status: JudgeCertification;
  readonly judge_model: string;
  readonly prompt_version: string;
  /** The latest report for this pin, or null when the pin was never calibrated (`uncalibrated`). */
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
 * Reads a judge pin's status from the append-only `calibration_reports` (the latest report wins). Exported
 * for the gate (ingestion) and served by the regression app at `GET /v1/judges/status`.
 */
export class JudgeStatusRepository {
  async status(sql: Sql, judgeModel: string, promptVersion: string): Promise<JudgeStatus> {
    const rows = await sql.query(
      `SELECT id, set_id, status, report, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at
       FROM calibration_reports WHERE judge_model = $1 AND prompt_version = $2
       ORDER BY created_at DESC, id DESC LIMIT 1`,
      [judgeModel, promptVersion],
    );
    if (rows.length === 0) {
      return {
        status: 'uncalibrated',
        judge_model: judgeModel,
        prompt_version: promptVersion,
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
    const row = rows[0];
    const report = row.report as CalibrationReport;
    return {
      status: row.status,
      judge_model: judgeModel,
      prompt_version: promptVersion,
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
}

/**
 * A certified judge's apparent pass rate corrected for its measured sensitivity and specificity
 * (Rogan-Gladen, J4): an estimate of the pass rate humans would give. Null unless the pin is certified.
 */
export function judgeCorrectedPassRate(status: JudgeStatus, apparent: number): CorrectedPassRate | null {
  if (status.status !== 'certified' || !status.sensitivity || !status.specificity) return null;
  return correctedPassRate(apparent, { sensitivity: status.sensitivity, specificity: status.specificity });
}
