import { Inject, Injectable } from '@nestjs/common';
import { budgetScopes, estimateJudgeCaseCost, planJudgeSpend, type BudgetDecision, type BudgetPlan, type CompiledCase, type JudgeCaseCost } from '@evals/domain';
import { BudgetRepository, type BudgetRow } from '@evals/persistence';
import { CLOCK, DATA_SOURCE, LOGGER, metrics, type Clock, type JsonLogger } from '@evals/platform';
import type { DataSource } from 'typeorm';
import type { Sql } from '@evals/persistence';
import { INGESTION_CONFIG, type IngestionConfig } from './config';

/** A judge case the gate's run would send to the judge, with its output (in memory only, for the estimate). */
export interface CaseToJudge {
  readonly compiled: CompiledCase;
  readonly output: string;
}

/** The gate's budget decision before any judge spend, and what it weighed (null when the store could not be read). */
export interface GateBudgetAssessment {
  readonly decision: BudgetDecision;
  readonly plan: BudgetPlan | null;
}

/**
 * How long a gate's hold counts when its gate never comes back (a crashed process): past the longest
 * synchronous run wait (RUN_TIMEOUT_MS, at most an hour), so a slow run's hold never lapses while it spends.
 */
export const RESERVATION_TTL_MS = 2 * 60 * 60 * 1000;

/** `GET /v1/budgets`: one budget with its limit, what its window has spent and what is left. */
export interface BudgetView {
  readonly scope: string;
  readonly mode: BudgetRow['mode'];
  readonly period: BudgetRow['period'];
  readonly window_start: string | null;
  readonly limit_usd: number;
  readonly spent_usd: number;
  readonly reserved_usd: number;
  readonly left_usd: number;
  readonly updated_at: string;
}

/**
 * Budgets in money (GT4, issue 13 part 4): before any judge spend the gate estimates it and weighs it against
 * every budget whose scope covers it (`planJudgeSpend`); after the run, the actual spend is appended to the
 * ledger, from which every scope's spent amount follows. All of it per project (issue 30). A store that cannot be read refuses the spend and
 * says why in the log (the error's name and message: a relation or a connection, never an output).
 */
@Injectable()
export class GateBudget {
  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    private readonly budgets: BudgetRepository,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(LOGGER) private readonly logger: Pick<JsonLogger, 'event'>,
    @Inject(INGESTION_CONFIG) private readonly config: Pick<IngestionConfig, 'judge' | 'judgeEstimatedOutputTokens'>,
  ) {}

  /**
   * The estimated cost of each case, in order: `repeats` calls of its prompt's estimated tokens and the
   * assumed reply tokens at the configured price. No price configured (a free local model): zero.
   */
  estimate(toJudge: readonly CaseToJudge[]): JudgeCaseCost[] {
    const pricing = this.config.judge?.pricing ?? { input_per_mtok_usd: 0, output_per_mtok_usd: 0 };
    return toJudge.flatMap((c) => estimateJudgeCaseCost(c.compiled, c.output, pricing, this.config.judgeEstimatedOutputTokens) ?? []);
  }

  /**
   * Weighs the estimate against the budgets and - with a `gateId`, when the plan spends - holds what it will
   * spend, in one transaction under one advisory lock (GT4): the next gate's weighing waits for this one's
   * commit and counts its hold, so two gates at once cannot both fit the same remaining budget. The hold
   * becomes the actual spend in `record`, or is dropped by `release`.
   */
  async assess(project: string, suiteKey: string, model: string | null, toJudge: readonly CaseToJudge[], gateId?: string): Promise<GateBudgetAssessment> {
    const cases = this.estimate(toJudge);
    const now = this.clock.now();
    let plan: BudgetPlan;
    try {
      plan = await this.db.transaction(async (tx) => {
        const holds = gateId !== undefined && cases.some((c) => c.cost_usd > 0);
        if (holds) await this.budgets.lockSpending(tx, project);
        const rows = await this.budgets.standings(tx, project, budgetScopes(suiteKey, model), now);
        // What is left is the limit less the ledger's spend and what running gates hold (both shown in the report).
        const planned = planJudgeSpend(
          rows.map((r) => ({ ...r, spent_usd: r.spent_usd + (r.reserved_usd ?? 0), ledger_spent_usd: r.spent_usd, reserved_usd: r.reserved_usd ?? 0 })),
          cases,
        );
        const held = planned.decision === 'allowed' ? planned.estimate_usd : planned.decision === 'throttled' ? (planned.judged_estimate_usd ?? 0) : 0;
        if (holds && held > 0) {
          await this.budgets.reserve(tx, project, {
            gate_id: gateId,
            amount_usd: held,
            judge_model: model,
            suite_key: suiteKey,
            reserved_at: now.toISOString(),
            expires_at: new Date(now.getTime() + RESERVATION_TTL_MS).toISOString(),
          });
        }
        return planned;
      });
    } catch (error) {
      this.logger.event('warn', 'budget store unreadable: judge spend refused (GT4)', {
        suite_key: suiteKey,
        error: error instanceof Error ? `${error.name}: ${error.message}`.slice(0, 300) : 'error',
      });
      metrics.judgeBudgetRefusals.inc({ decision: 'store_unreadable' });
      return { decision: 'store_unreadable', plan: null };
    }
    // Nothing to judge (an existing run, no judge case with an output) spends nothing: allowed.
    const decision: BudgetDecision = plan.decision === 'not_needed' ? 'allowed' : plan.decision;
    if (decision === 'blocked' || decision === 'throttled') metrics.judgeBudgetRefusals.inc({ decision });
    return { decision, plan };
  }

  /**
   * The actual judge spend of a gate's run, appended to the ledger inside the gate's transaction, which also
   * drops the gate's hold: the budgets count the one or the other, never both, never neither.
   */
  async record(tx: Sql, project: string, entry: { gate_id: string; amount_usd: number; judge_model: string | null; suite_key: string }): Promise<void> {
    await this.budgets.release(tx, project, entry.gate_id);
    if (!(entry.amount_usd > 0)) return;
    await this.budgets.recordSpend(tx, project, { ...entry, recorded_at: this.clock.now().toISOString() });
  }

  /** Drops a gate's hold when the gate failed before its run could spend anything (best effort: a hold left expires). */
  async release(project: string, gateId: string): Promise<void> {
    try {
      await this.budgets.release(this.db, project, gateId);
    } catch (error) {
      this.logger.event('warn', 'budget hold not released; it expires by itself (GT4)', { gate_id: gateId, error: error instanceof Error ? `${error.name}: ${error.message}`.slice(0, 300) : 'error' });
    }
  }

  /** `GET /v1/budgets`: every budget of the project, its limit, what its current window has spent (from the ledger) and what is left. */
  async list(project: string): Promise<{ budgets: BudgetView[]; as_of: string }> {
    const now = this.clock.now();
    let rows: BudgetRow[];
    try {
      rows = await this.budgets.standings(this.db, project, null, now);
    } catch (error) {
      this.logger.event('warn', 'budget store unreadable', { error: error instanceof Error ? `${error.name}: ${error.message}`.slice(0, 300) : 'error' });
      throw error;
    }
    return {
      as_of: now.toISOString(),
      budgets: rows.map((r) => ({
        scope: r.scope,
        mode: r.mode,
        period: r.period,
        window_start: r.window_start,
        limit_usd: r.limit_usd,
        spent_usd: r.spent_usd,
        reserved_usd: r.reserved_usd ?? 0,
        left_usd: Math.max(0, r.limit_usd - r.spent_usd - (r.reserved_usd ?? 0)),
        updated_at: r.updated_at,
      })),
    };
  }
}
