import { Inject, Injectable } from '@nestjs/common';
import { caseOutcomeOf, encodeCaseOutcomes, MAX_LISTED_MISSING, missingOutputEvidence, RUN_EVENTS, RunModel, runStreamId, type CompiledSuite, type RunScoredV1, type WorkMetadata } from '@evals/domain';
import { EventStore, loadRun, type Sql } from '@evals/persistence';
import { DATA_SOURCE } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { EventStamper, withConflictRetry } from './event-stamper';
import { compare, RunEvidence } from './run-evidence';

/**
 * The seal of a run (R1, R2, R7; docs/pipeline.md step 2): in one transaction, holding the run's lock
 * exclusively, `missing_output` evidence for the cases the run's model lists as missing (and its
 * `cases.scored` v3), the aggregate from
 * the evidence, and `run.scored` as the model decides it. The run is read only as its model folds it
 * (`loadRun`): a run not yet sealed is refused by the model, a run scored already decides nothing.
 */
@Injectable()
export class RunSealer {
  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    private readonly events: EventStore,
    private readonly evidence: RunEvidence,
    private readonly stamper: EventStamper,
  ) {}

  /** R7: the run is opened and its model does not see it sealed - its seal must wait. False for a run never opened. */
  async awaitsSeal(runId: string): Promise<boolean> {
    const { state } = await loadRun(this.db, this.events, runId);
    return state.opened !== null && !RunModel.isSealed(state);
  }

  /**
   * Seals the run against its compiled suite. Returns whether `run.scored` was appended: false when the run
   * is scored already (a redelivered seal). Throws RunRuleError when the model refuses the result (the run
   * is not sealed), which rolls the transaction back.
   */
  seal(runId: string, suite: CompiledSuite, cause: WorkMetadata): Promise<boolean> {
    return withConflictRetry(() => this.db.transaction((tx) => this.sealIn(tx, runId, suite, cause)));
  }

  private async sealIn(tx: Sql, runId: string, suite: CompiledSuite, cause: WorkMetadata): Promise<boolean> {
    await this.evidence.lockExclusive(tx, runId);
    const { state, version } = await loadRun(tx, this.events, runId);
    if (state.phase === 'scored' || state.phase === 'compared') return false;
    const have = await this.evidence.caseIds(tx, runId);
    const scoredAt = this.stamper.now();
    // The model's missing cases - of its sample when the gate sampled (GT3), none of a monitor run - in suite order.
    const missingIds = new Set(RunModel.missingAtSeal(state, [...suite.cases.keys()], have));
    const missing = [...suite.cases.values()].filter((c) => missingIds.has(c.case_id)).map((c) => missingOutputEvidence(c, { runId, scoredAt }));
    const inserted = await this.evidence.insert(
      tx,
      [...missing].sort((a, b) => compare(a.case_id, b.case_id)),
    );
    const aggregate = await this.evidence.aggregate(tx, runId);
    // The run's judge usage, summed from its evidence: only a suite version with `llm_judge` cases has one.
    const judge = suite.scorer_versions['llm_judge'] !== undefined ? await this.evidence.judgeUsage(tx, runId) : null;
    const stability = judge ? await this.evidence.judgeStability(tx, runId) : null;
    const data: RunScoredV1 = {
      run_id: runId,
      n: aggregate.n,
      passed: aggregate.passed,
      score_sum: aggregate.score_sum,
      missing_count: missing.length,
      missing_case_ids: missing.slice(0, MAX_LISTED_MISSING).map((c) => c.case_id),
      ...(judge ? { judge } : {}),
      ...(stability ? { judge_stability: stability } : {}),
      // R7: nobody sealed it; the system did after its time. The EvalResult says so.
      ...(state.seal_reason === 'expired' ? { expired: true as const } : {}),
    };
    const decided = RunModel.decide({ type: 'record_scored', data }, state);
    if (decided.length === 0) return false;
    // The missing_output rows cross like any other results (cases.scored v3), before the run.scored that
    // counts them: one seal per run gets this far (the exclusive lock, the model's phase), so one stream.
    const results = encodeCaseOutcomes(runId, inserted.map(caseOutcomeOf)).map((data) => ({ type: RUN_EVENTS.casesScored, version: 3, data, metadata: this.stamper.metadata(cause) }));
    await this.events.append(tx, `${runStreamId(runId)}.missing`, 0, results);
    const metadata = this.stamper.metadata(cause);
    await this.events.append(
      tx,
      runStreamId(runId),
      version,
      decided.map((e) => ({ ...e, metadata })),
    );
    return true;
  }
}
