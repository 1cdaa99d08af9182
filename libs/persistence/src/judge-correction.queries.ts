import { correctedPassRatesByScope, type JudgedCase, type ScopedCorrectedPassRate } from '@evals/domain';
import { CaseResultRepository } from './case-results.repository';
import { JudgeStatusRepository } from './judge-status.repository';
import type { Sql } from './sql';

/** A run's judge-corrected pass rate under one certified scope of the pin that judged its cases (J4, J9, GT6). */
export interface RunJudgeCorrection extends ScopedCorrectedPassRate {
  readonly judge_model: string;
  readonly prompt_version: string;
}

/**
 * The corrected pass rate of a run's judged `llm_judge` cases (J4, J9): which cases the judge actually judged
 * (results with a judge pin - skipped and unconfigured cases have none; the read model's `read_case_results`), their rubrics (the suite version's
 * case scorer, else its default), and the certified scopes of that pin now. Read at query time, so a run
 * judged before its scope was certified shows the correction once it is. Empty without judged cases or a
 * certified scope covering them.
 */
export class JudgeCorrectionQueries {
  constructor(
    private readonly statuses = new JudgeStatusRepository(),
    private readonly cases = new CaseResultRepository(),
  ) {}

  async forRun(sql: Sql, run: { readonly run_id: string; readonly suite_key: string; readonly suite_version: number }): Promise<RunJudgeCorrection[]> {
    // The judged cases first, by the run's key: most runs have none, and then this
    // one cheap read is all (a join that starts from the suite's cases reads every case of the suite, issue 15).
    const judged = await this.cases.judged(sql, run.run_id);
    if (judged.length === 0) return [];
    const scorers: Array<{ case_id: string; scorer: { type?: string; rubric?: unknown } | null }> = await sql.query(
      `SELECT sc.case_id, COALESCE(sc.scorer, sv.default_scorer) AS scorer
       FROM suite_cases sc JOIN suite_versions sv ON sv.suite_key = sc.suite_key AND sv.version = sc.suite_version
       WHERE sc.suite_key = $1 AND sc.suite_version = $2 AND sc.case_id = ANY($3::text[])`,
      [run.suite_key, run.suite_version, judged.map((r) => r.case_id)],
    );
    const scorerOf = new Map(scorers.map((r) => [r.case_id, r.scorer]));
    // A case the suite version does not have is left out, as the join left it out.
    const rows = judged.filter((r) => scorerOf.has(r.case_id)).map((r) => ({ ...r, scorer: scorerOf.get(r.case_id) ?? null }));
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
