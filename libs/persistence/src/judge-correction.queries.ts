import { DEFAULT_PROJECT } from '@evals/contracts';
import { correctedPassRatesByScope, type JudgedCase, type ScopedCorrectedPassRate } from '@evals/domain';
import type { CaseResultSource } from './case-results.repository';
import { JudgeStatusRepository } from './judge-status.repository';
import type { Sql } from './sql';
import { SuiteVersions } from './suite-stream';

/** A run's judge-corrected pass rate under one certified scope of the pin that judged its cases (J4, J9, GT6). */
export interface RunJudgeCorrection extends ScopedCorrectedPassRate {
  readonly judge_model: string;
  readonly prompt_version: string;
}

/**
 * The corrected pass rate of a run's judged `llm_judge` cases (J4, J9): which cases the judge actually judged
 * (results with a judge pin - skipped and unconfigured cases have none: the read model's `read_case_results`,
 * or the run's `cases.scored` folded from the log where the ingestion asks), their rubrics (the suite version's
 * case scorer, else its default - from the version folded from its stream, issue 27: never the ingestion's
 * suite tables), and the certified scopes of that pin now. Read at query time, so a run
 * judged before its scope was certified shows the correction once it is. Empty without judged cases or a
 * certified scope covering them.
 */
export class JudgeCorrectionQueries {
  constructor(
    /** Where the run's judged cases come from: the read model's projection, or the log (the ingestion). */
    private readonly cases: CaseResultSource,
    private readonly statuses = new JudgeStatusRepository(),
    /** Cached: a run view asks again for the same few suite versions. */
    private readonly suites = new SuiteVersions(),
  ) {}

  /**
   * `run.project` is the run's (its document's, folded from its run.opened: absent means `default`, issue 30):
   * the suite version and the judge's certification are looked up in it, never in another project's.
   */
  async forRun(sql: Sql, run: { readonly run_id: string; readonly project?: string; readonly suite_key: string; readonly suite_version: number }): Promise<RunJudgeCorrection[]> {
    // The judged cases first, by the run's key: most runs have none, and then this
    // one cheap read is all (a join that starts from the suite's cases reads every case of the suite, issue 15).
    const judged = await this.cases.judged(sql, run.run_id);
    if (judged.length === 0) return [];
    const suite = await this.suites.find(sql, run.project ?? DEFAULT_PROJECT, run.suite_key, run.suite_version);
    const wanted = new Set(judged.map((r) => r.case_id));
    const scorerOf = new Map<string, { type?: string; rubric?: unknown }>();
    for (const c of suite?.cases ?? []) if (wanted.has(c.case_id)) scorerOf.set(c.case_id, c.scorer ?? suite!.default_scorer);
    // A case the suite version does not have is left out.
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
      // Issue 30: the certification of the run's own project (ADR 0009).
      const scopes = await this.statuses.scopes(sql, run.project ?? DEFAULT_PROJECT, pin.model, pin.promptVersion);
      const certified = new Map(scopes.filter((s) => s.status === 'certified' && s.scope && s.sensitivity && s.specificity).map((s) => [s.scope!, { sensitivity: s.sensitivity!, specificity: s.specificity! }]));
      for (const rate of correctedPassRatesByScope(run.suite_key, pin.cases, certified)) out.push({ judge_model: pin.model, prompt_version: pin.promptVersion, ...rate });
    }
    return out;
  }
}
