import { Inject, Injectable } from '@nestjs/common';
import type { BudgetDecision, JudgeCalibrationStatus } from '@evals/domain';
import { BudgetRepository, JudgeStatusRepository } from '@evals/persistence';
import { DATA_SOURCE } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { INGESTION_CONFIG, type IngestionConfig } from './config';

/** Why a gate run's judge cases get a label instead of a call (GT2, GT4, J4). */
export type GateJudgeSkip = 'budget_blocked' | 'judge_credential_missing' | 'judge_uncalibrated';

/** What the gate knows about the judge of the cases it gates, before any judge spend. */
export interface GateJudgeAssessment {
  /** Whether the gated cases (the sample's, GT3) include `llm_judge` ones; false: nothing was asked, nothing is spent. */
  readonly used: boolean;
  /** The pin's calibration (J4); null when the judge is not used. */
  readonly status: JudgeCalibrationStatus | null;
  readonly credential_missing: boolean;
  readonly budget: BudgetDecision;
  /** The label the run's judge cases get instead of a call, or null: the judge may be called. */
  readonly skip: GateJudgeSkip | null;
  /** The configured pin, reported whether or not the judge is used. */
  readonly model: string | null;
  readonly prompt_version: string | null;
}

/**
 * The gate's judge policy (GT2, GT4, J4): for a suite whose gated cases include `llm_judge` ones, the judge
 * pin's calibration status, whether its credential is missing, and the budget decision - read before any
 * judge spend - and from them whether the judge may be called at all. A suite without judge cases reads
 * nothing and spends nothing.
 */
@Injectable()
export class GateJudgePolicy {
  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(INGESTION_CONFIG) private readonly config: Pick<IngestionConfig, 'judge'>,
    private readonly statuses: JudgeStatusRepository,
    private readonly budgets: BudgetRepository,
  ) {}

  async assess(suiteKey: string, used: boolean): Promise<GateJudgeAssessment> {
    const judge = this.config.judge;
    const pin = { model: judge?.model ?? null, prompt_version: judge?.prompt_version ?? null };
    if (!used) return { used, status: null, credential_missing: false, budget: 'not_needed', skip: null, ...pin };
    const status: JudgeCalibrationStatus = judge ? await this.calibration(judge.model, judge.prompt_version) : 'uncalibrated';
    const facts = { used, status, credential_missing: !judge || judge.credential_missing, budget: await this.budget(suiteKey, judge?.model ?? null) };
    return { ...facts, skip: judgeSkip(facts), ...pin };
  }

  /** GT4: the judge spend the gate records after the judge calls: the run's judge cost, when the judge was called. */
  spend(assessment: GateJudgeAssessment, usage: { readonly cost_usd?: number } | null): number {
    if (!assessment.used || assessment.skip) return 0;
    const cost = Number(usage?.cost_usd ?? 0);
    return cost > 0 ? cost : 0;
  }

  private async calibration(model: string, promptVersion: string): Promise<JudgeCalibrationStatus> {
    try {
      return (await this.statuses.status(this.db, model, promptVersion)).status;
    } catch {
      // No calibration store: nothing certifies the judge.
      return 'uncalibrated';
    }
  }

  /** GT4: blocking or throttling budget -> no spend; store unreadable -> no spend. */
  private async budget(suiteKey: string, model: string | null): Promise<BudgetDecision> {
    const scopes = ['judge', `suite:${suiteKey}`, ...(model ? [`judge:${model}`] : [])];
    try {
      const applicable = await this.budgets.applicable(this.db, scopes);
      if (applicable.some((b) => b.mode === 'block')) return 'blocked';
      if (applicable.some((b) => b.mode === 'throttle')) return 'throttled';
      return 'allowed';
    } catch {
      return 'store_unreadable';
    }
  }
}

/**
 * No judge spend unless every precondition holds (GT4): a gate that fails anyway spends nothing. One label
 * per run, by precedence: a budget that does not allow the spend, then a missing credential, then a judge
 * that is not certified.
 */
export function judgeSkip(facts: Pick<GateJudgeAssessment, 'used' | 'budget' | 'credential_missing' | 'status'>): GateJudgeSkip | null {
  if (!facts.used) return null;
  if (facts.budget !== 'allowed') return 'budget_blocked';
  if (facts.credential_missing) return 'judge_credential_missing';
  if (facts.status !== 'certified') return 'judge_uncalibrated';
  return null;
}
