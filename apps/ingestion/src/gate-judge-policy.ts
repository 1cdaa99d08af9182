import { Inject, Injectable } from '@nestjs/common';
import { DEFAULT_MIN_JUDGE_STABILITY, rubricScope, suiteScope, type BudgetDecision, type BudgetPlan, type CalibrationReport, type JudgeCalibrationStatus } from '@evals/domain';
import { JudgeStatusRepository } from '@evals/persistence';
import { DATA_SOURCE } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { INGESTION_CONFIG, type IngestionConfig } from './config';
import { GateBudget, type CaseToJudge } from './gate-budget';

/**
 * Why a gate run's judge cases get a label instead of a call (GT2, GT4, J4). One label per cause, the same
 * as a run's: no judge configured is `judge_not_configured` here as in the scoring worker.
 */
export type GateJudgeSkip = 'budget_blocked' | 'judge_not_configured' | 'judge_credential_missing' | 'judge_uncalibrated';

/** A certified scope the gated cases use, with what the corrected pass rate needs from its report (J4, J9). */
export interface CertifiedScope {
  readonly scope: string;
  readonly report_id: string | null;
  readonly sensitivity: CalibrationReport['sensitivity'];
  readonly specificity: CalibrationReport['specificity'];
}

/** What the gate knows about the judge of the cases it gates, before any judge spend. */
export interface GateJudgeAssessment {
  /** Whether the gated cases (the sample's, GT3) include `llm_judge` ones; false: nothing was asked, nothing is spent. */
  readonly used: boolean;
  /** The pin's calibration (J4); null when the judge is not used. */
  readonly status: JudgeCalibrationStatus | null;
  /** No judge configured (JUDGE_PROVIDER unset): the cases are `judge_not_configured`, as in a run. */
  readonly not_configured?: boolean;
  readonly credential_missing: boolean;
  /**
   * J4: the certification scopes the gated cases need (`suite:<key>`, or `rubric:<sha256>` per rubric), those
   * not certified for the pin, and the certified ones that cover the cases; null when the judge is not used.
   */
  readonly scopes?: { readonly needed: readonly string[]; readonly uncovered: readonly string[]; readonly certified: readonly CertifiedScope[] } | null;
  readonly budget: BudgetDecision;
  /** GT4 (issue 13): the estimate weighed against the budgets, and - throttled - the cases that fit; null: store unreadable. */
  readonly budget_plan?: BudgetPlan | null;
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
    @Inject(INGESTION_CONFIG) private readonly config: Pick<IngestionConfig, 'judge' | 'judgeMinStability' | 'judgeUnstable'>,
    private readonly statuses: JudgeStatusRepository,
    private readonly budgets: GateBudget,
  ) {}

  /**
   * `rubrics`: the rubric of each gated `llm_judge` case. The judge is certified for them when the pin has a
   * certified `suite:<key>` scope, or a certified `rubric:<hash>` scope for every distinct rubric (J4): a
   * certification on another rubric of the same pin does not count.
   */
  async assess(project: string, suiteKey: string, used: boolean, rubrics: readonly string[] = [], toJudge: readonly CaseToJudge[] = [], gateId?: string): Promise<GateJudgeAssessment> {
    const judge = this.config.judge;
    const pin = { model: judge?.model ?? null, prompt_version: judge?.prompt_version ?? null };
    if (!used) return { used, status: null, credential_missing: false, budget: 'not_needed', skip: null, scopes: null, ...pin };
    const calibration = judge ? await this.calibration(project, suiteKey, rubrics, judge.model, judge.prompt_version) : { status: 'uncalibrated' as const, scopes: null };
    const facts = {
      used,
      status: calibration.status,
      not_configured: !judge,
      credential_missing: judge !== null && judge.credential_missing,
      // A judge the gate will skip anyway spends nothing: weighed (the report shows it), never held.
      ...(await this.budget(project, suiteKey, judge?.model ?? null, toJudge, judge && !judge.credential_missing && calibration.status === 'certified' ? gateId : undefined)),
    };
    return { ...facts, skip: judgeSkip(facts), scopes: calibration.scopes, ...pin };
  }

  /** Issue 13: the least verdict stability the gate accepts (GATE_JUDGE_MIN_STABILITY), and whether below it fails. */
  stabilityPolicy(): { readonly min: number; readonly fail: boolean } {
    return { min: this.config.judgeMinStability ?? DEFAULT_MIN_JUDGE_STABILITY, fail: this.config.judgeUnstable === 'fail' };
  }

  /** GT4: drops the gate's budget hold when it failed before its run could spend (see GateService). */
  release(project: string, gateId: string): Promise<void> {
    return this.budgets.release(project, gateId);
  }

  /** GT4: the judge spend the gate records after the judge calls: the run's judge cost, when the judge was called. */
  spend(assessment: GateJudgeAssessment, usage: { readonly cost_usd?: number } | null): number {
    if (!assessment.used || assessment.skip) return 0;
    const cost = Number(usage?.cost_usd ?? 0);
    return cost > 0 ? cost : 0;
  }

  private async calibration(
    project: string,
    suiteKey: string,
    rubrics: readonly string[],
    model: string,
    promptVersion: string,
  ): Promise<{ status: JudgeCalibrationStatus; scopes: GateJudgeAssessment['scopes'] }> {
    let measured: Awaited<ReturnType<JudgeStatusRepository['scopes']>>;
    try {
      // Issue 30 (ADR 0009): the judge's standing is the gate's project's; one team's labels never certify
      // another team's judge (calibration.reported carries the project of the set it reports).
      measured = await this.statuses.scopes(this.db, project, model, promptVersion);
    } catch {
      // No calibration store: nothing certifies the judge.
      return { status: 'uncalibrated', scopes: null };
    }
    const certified = measured.filter((m) => m.status === 'certified' && m.scope !== null && m.sensitivity && m.specificity);
    const certifiedScopes = new Set(certified.map((c) => c.scope!));
    const suite = suiteScope(suiteKey);
    // The suite's own scope covers every case; else each distinct rubric needs its own (no rubric known: the suite's).
    const needed: string[] = certifiedScopes.has(suite) || rubrics.length === 0 ? [suite] : [...new Set(rubrics.map(rubricScope))];
    const uncovered = needed.filter((scope) => !certifiedScopes.has(scope));
    const used = certified.filter((c) => needed.includes(c.scope!));
    // The standing of what is missing: a scope measured and failed says `not_certified`, else never measured.
    const missing = measured.filter((m) => m.scope !== null && uncovered.includes(m.scope));
    const status: JudgeCalibrationStatus =
      uncovered.length === 0 ? 'certified' : missing.some((m) => m.status === 'not_certified') ? 'not_certified' : missing.some((m) => m.status === 'not_certifiable') ? 'not_certifiable' : 'uncalibrated';
    return {
      status,
      scopes: {
        needed,
        uncovered,
        certified: used.map((c) => ({ scope: c.scope!, report_id: c.report_id, sensitivity: c.sensitivity!, specificity: c.specificity! })),
      },
    };
  }

  /**
   * GT4 in money (issue 13): `toJudge` are the cases the run would judge, estimated (`repeats` calls each)
   * and weighed against every budget covering the spend. Unreadable store: refused (and logged).
   */
  private async budget(project: string, suiteKey: string, model: string | null, toJudge: readonly CaseToJudge[], gateId?: string): Promise<{ budget: BudgetDecision; budget_plan: BudgetPlan | null }> {
    const assessed = await this.budgets.assess(project, suiteKey, model, toJudge, gateId);
    return { budget: assessed.decision, budget_plan: assessed.plan };
  }
}

/**
 * No judge spend unless every precondition holds (GT4): a gate that fails anyway spends nothing. One label
 * per run, by precedence: a budget that does not allow the spend, then a missing credential, then a judge
 * that is not certified.
 */
export function judgeSkip(facts: Pick<GateJudgeAssessment, 'used' | 'budget' | 'credential_missing' | 'status' | 'not_configured'>): GateJudgeSkip | null {
  if (!facts.used) return null;
  // A throttle judges the cases that fit (the run's `judge_throttle`); block and an unreadable store judge none.
  if (facts.budget !== 'allowed' && facts.budget !== 'throttled') return 'budget_blocked';
  if (facts.not_configured) return 'judge_not_configured';
  if (facts.credential_missing) return 'judge_credential_missing';
  if (facts.status !== 'certified') return 'judge_uncalibrated';
  return null;
}
