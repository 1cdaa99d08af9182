import { correctedPassRatesByScope, type JudgedCase, type ScopedCorrectedPassRate } from '@evals/domain';
import { JudgeStatusRepository } from './judge-status.repository';
import type { Sql } from './sql';

/** A run's judge-corrected pass rate under one certified scope of the pin that judged its cases (J4, J9, GT6). */
export interface RunJudgeCorrection extends ScopedCorrectedPassRate {
  readonly judge_model: string;
  readonly prompt_version: string;
}

/**
 * The corrected pass rate of a run's judged `llm_judge` cases (J4, J9): which cases the judge actually judged
 * (evidence with a judge pin - skipped and unconfigured cases have none), their rubrics (the suite version's
 * case scorer, else its default), and the certified scopes of that pin now. Read at query time, so a run
 * judged before its scope was certified shows the correction once it is. Empty without judged cases or a
 * certified scope covering them.
 */
export class JudgeCorrectionQueries {
  constructor(private readonly statuses = new JudgeStatusRepository()) {}

  async forRun(sql: Sql, run: { readonly run_id: string; readonly suite_key: string; readonly suite_version: number }): Promise<RunJudgeCorrection[]> {
    const rows: Array<{ case_id: string; passed: boolean; judge_model: string; prompt_version: string; scorer: { type?: string; rubric?: unknown } | null }> = await sql.query(
      `SELECT e.case_id, e.passed, e.judge_model, e.prompt_version, COALESCE(sc.scorer, sv.default_scorer) AS scorer
       FROM evidence e
       JOIN suite_versions sv ON sv.suite_key = $2 AND sv.version = $3
       JOIN suite_cases sc ON sc.suite_key = $2 AND sc.suite_version = $3 AND sc.case_id = e.case_id
       WHERE e.run_id = $1 AND e.scorer = 'llm_judge' AND e.judge_model IS NOT NULL AND e.prompt_version IS NOT NULL
       ORDER BY e.case_id`,
      [run.run_id, run.suite_key, run.suite_version],
    );
    const byPin = new Map<string, { model: string; promptVersion: string; cases: JudgedCase[] }>();
    for (const r of rows) {
      if (typeof r.scorer?.rubric !== 'string') continue;
      const key = JSON.stringify([r.judge_model, r.prompt_version]);
      const pin = byPin.get(key) ?? { model: r.judge_model, promptVersion: r.prompt_version, cases: [] };
      pin.cases.push({ rubric: r.scorer.rubric, passed: r.passed });
      byPin.set(key, pin);
    }
    const out: RunJudgeCorrection[] = [];
    for (const pin of byPin.values()) {
      const scopes = await this.statuses.scopes(sql, pin.model, pin.promptVersion);
      const certified = new Map(scopes.filter((s) => s.status === 'certified' && s.scope && s.sensitivity && s.specificity).map((s) => [s.scope!, { sensitivity: s.sensitivity!, specificity: s.specificity! }]));
      for (const rate of correctedPassRatesByScope(run.suite_key, pin.cases, certified)) out.push({ judge_model: pin.model, prompt_version: pin.promptVersion, ...rate });
    }
    return out;
  }
}
