import { Inject, Injectable } from '@nestjs/common';
import {
  caseOutcomeOf,
  encodeCaseOutcomes,
  MAX_LISTED_MISSING,
  missingOutputEvidence,
  RUN_EVENTS,
  RunModel,
  RunRuleError,
  runStreamId,
  type CaseEvidence,
  type CompiledSuite,
  type RunScoredV1,
  type WorkMetadata,
} from '@evals/domain';
import { Coalescer, type ItemOutcome } from '@evals/bus';
import { EventStore, loadRuns, type EvidenceAggregate, type Sql, type StreamAppend } from '@evals/persistence';
import { DATA_SOURCE } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { EventStamper, withConflictRetry } from './event-stamper';
import { compare, RunEvidence } from './run-evidence';

/** The most seals (and run-state reads) one transaction or query takes: a micro-batch's seals, bounded. */
export const MAX_SEAL_GROUP = 128;

interface SealRequest {
  readonly runId: string;
  readonly suite: CompiledSuite;
  readonly cause: WorkMetadata;
}

/** Rolls a group's transaction back when the model refused some of its runs; they leave the group and the rest is sealed again. */
class RunsRefused extends Error {}

/**
 * The seal of a run (R1, R2, R7; docs/pipeline.md step 2): in one transaction, holding the run's lock
 * exclusively, `missing_output` evidence for the cases the run's model lists as missing (and its
 * `cases.scored` v3), the aggregate from the evidence, and `run.scored` as the model decides it. The run is
 * read only as its model folds it (`loadRuns`): a run not yet sealed is refused by the model, a run scored
 * already decides nothing.
 *
 * Issue 28: seals asked for together are decided together (Coalescer) - one transaction, one lock
 * statement, one stream read, one evidence read (case ids and aggregate together) and one append for the
 * whole group, where each seal had its own of each. Every run's decision is still its own: a run the model
 * refuses is taken out and the rest sealed again, and a duplicate seal of a run in the group decides
 * nothing, as a redelivered seal after it would.
 */
@Injectable()
export class RunSealer {
  private readonly waiting = new Coalescer<string, boolean>((runIds) => this.awaitingSeal(runIds), MAX_SEAL_GROUP);
  private readonly sealing = new Coalescer<SealRequest, boolean>((requests) => this.sealGroup(requests), MAX_SEAL_GROUP);
  private retriedGroups = 0;

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    private readonly events: EventStore,
    private readonly evidence: RunEvidence,
    private readonly stamper: EventStamper,
  ) {}

  /** R7: the run is opened and its model does not see it sealed - its seal must wait. False for a run never opened. */
  awaitsSeal(runId: string): Promise<boolean> {
    return this.waiting.submit(runId);
  }

  /**
   * Seals the run against its compiled suite. Returns whether `run.scored` was appended: false when the run
   * is scored already (a redelivered seal). Throws RunRuleError when the model refuses the result (the run
   * is not sealed): nothing of that run is written.
   */
  seal(runId: string, suite: CompiledSuite, cause: WorkMetadata): Promise<boolean> {
    return this.sealing.submit({ runId, suite, cause });
  }

  /** Transactions run (tests, diagnostics): one per group, one more after each refusal. */
  get transactions(): number {
    return this.sealing.groups + this.retriedGroups;
  }

  private async awaitingSeal(runIds: readonly string[]): Promise<Array<ItemOutcome<boolean>>> {
    const runs = await loadRuns(this.db, this.events, runIds);
    return runIds.map((id) => {
      const { state } = runs.get(id)!;
      return { ok: true, value: state.opened !== null && !RunModel.isSealed(state) };
    });
  }

  private async sealGroup(requests: readonly SealRequest[]): Promise<Array<ItemOutcome<boolean>>> {
    const outcomes = new Map<SealRequest, ItemOutcome<boolean>>();
    let pending = requests;
    for (;;) {
      const refused = new Map<SealRequest, RunRuleError>();
      try {
        const appended = await withConflictRetry(() =>
          this.db.transaction(async (tx) => {
            refused.clear();
            const done = await this.sealIn(tx, pending, refused);
            if (refused.size > 0) throw new RunsRefused();
            return done;
          }),
        );
        pending.forEach((r, i) => outcomes.set(r, { ok: true, value: appended[i] }));
        return requests.map((r) => outcomes.get(r)!);
      } catch (error) {
        if (!(error instanceof RunsRefused)) throw error;
      }
      for (const [r, error] of refused) outcomes.set(r, { ok: false, error });
      pending = pending.filter((r) => !refused.has(r));
      if (pending.length === 0) return requests.map((r) => outcomes.get(r)!);
      this.retriedGroups++;
    }
  }

  /** Whether each request appended `run.scored`, in order; the refused are put in `refused` (then nothing may commit). */
  private async sealIn(tx: Sql, requests: readonly SealRequest[], refused: Map<SealRequest, RunRuleError>): Promise<boolean[]> {
    // The first request of a run decides; a second one in the group is the redelivered seal that finds it scored.
    const first = new Map<string, SealRequest>();
    for (const r of requests) if (!first.has(r.runId)) first.set(r.runId, r);
    const runIds = [...first.keys()];
    await this.evidence.lockExclusiveAll(tx, runIds);
    const runs = await loadRuns(tx, this.events, runIds);
    const open = [...first.values()].filter((r) => {
      const phase = runs.get(r.runId)!.state.phase;
      return phase !== 'scored' && phase !== 'compared';
    });
    // The runs' evidence is read once, before the insert below: its case ids decide what is missing, and its
    // aggregate plus the rows inserted is the run's aggregate (no other transaction writes these runs now).
    const held = await this.evidence.summaries(
      tx,
      open.map((r) => r.runId),
    );
    const scoredAt = this.stamper.now();
    const missingOf = new Map<string, CaseEvidence[]>();
    for (const { runId, suite } of open) {
      // The model's missing cases - of its sample when the gate sampled (GT3), none of a monitor run - in suite order.
      const missingIds = new Set(RunModel.missingAtSeal(runs.get(runId)!.state, [...suite.cases.keys()], held.get(runId)!.case_ids));
      missingOf.set(
        runId,
        [...suite.cases.values()].filter((c) => missingIds.has(c.case_id)).map((c) => missingOutputEvidence(c, { runId, scoredAt })),
      );
    }
    // Runs' locks are all held exclusively: no other transaction writes these runs' evidence, so one insert in (run, case) order.
    const inserted = await this.evidence.insert(
      tx,
      open.flatMap((r) => [...missingOf.get(r.runId)!].sort((a, b) => compare(a.case_id, b.case_id))),
    );
    const insertedOf = new Map<string, CaseEvidence[]>();
    for (const row of inserted) insertedOf.set(row.run_id, [...(insertedOf.get(row.run_id) ?? []), row]);

    const appends: StreamAppend[] = [];
    const appended = new Set<string>();
    for (const request of open) {
      const { runId, suite, cause } = request;
      const { state, version } = runs.get(runId)!;
      const aggregate = withInserted(held.get(runId)!, insertedOf.get(runId) ?? []);
      const missing = missingOf.get(runId)!;
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
      let decided;
      try {
        decided = RunModel.decide({ type: 'record_scored', data }, state);
      } catch (error) {
        if (!(error instanceof RunRuleError)) throw error;
        for (const r of requests) if (r.runId === runId) refused.set(r, error);
        continue;
      }
      if (decided.length === 0) continue;
      // The missing_output rows cross like any other results (cases.scored v3), before the run.scored that
      // counts them: one seal per run gets this far (the exclusive lock, the model's phase), so one stream.
      const results = encodeCaseOutcomes(runId, (insertedOf.get(runId) ?? []).map(caseOutcomeOf)).map((d) => ({
        type: RUN_EVENTS.casesScored,
        version: 3,
        data: d,
        metadata: this.stamper.metadata(cause),
      }));
      const metadata = this.stamper.metadata(cause);
      appends.push({ streamId: `${runStreamId(runId)}.missing`, expectedVersion: 0, events: results });
      appends.push({ streamId: runStreamId(runId), expectedVersion: version, events: decided.map((e) => ({ ...e, metadata })) });
      appended.add(runId);
    }
    if (refused.size > 0) return [];
    await this.events.appendMany(tx, appends);
    return requests.map((r) => first.get(r.runId) === r && appended.has(r.runId));
  }
}

/**
 * The aggregate of a run's evidence after the seal's insert, from what it held before and the rows the seal
 * wrote: what a query after the insert counted. The rows are `missing_output`, scored 0 and failed, so the
 * sum is exact whatever order PostgreSQL's `sum` would have met them in (x + 0 is x; -0 + 0 is 0, here too).
 */
export function withInserted(held: EvidenceAggregate, inserted: readonly CaseEvidence[]): EvidenceAggregate {
  let { n, passed, score_sum } = held;
  for (const row of inserted) {
    n++;
    if (row.passed) passed++;
    score_sum += row.score;
  }
  return { n, passed, score_sum };
}
