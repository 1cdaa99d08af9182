import { isSafeId } from '@evals/contracts';
import { RunModel, runStreamId, type FoldedRunView, type RunDoc, type RunPhase } from '@evals/domain';
import type { DataSource } from 'typeorm';
import { EventStore } from './event-store';
import { LoggedCaseResults } from './case-outcome-log';
import { JudgeCorrectionQueries } from './judge-correction.queries';
import { foldStoredRunView } from './run-stream';
import { runView, type RunView } from './run.queries';
import type { Sql } from './sql';

/**
 * A run that exists (its stream has a `run.opened`, so it has a document): the facts of its view, and its
 * phase as the run's model folds it. Not its whole model state: a sampled or throttled run's carries case id
 * lists that a cache of many runs need not hold.
 */
export type FoldedRun = FoldedRunView & {
  readonly doc: RunDoc;
  readonly phase: RunPhase;
  /** Issue 30: the run's project, as its `run.opened` names it (`RunModel.runProject`): a caller of another project sees no run. */
  readonly project: string;
};

/** Settled folds kept in memory: a gate reads its run several times, and a CI wave gates many runs at once. */
const SETTLED_CACHE_SIZE = 1000;

/**
 * A run's view as the ingestion answers it (the gate, the synchronous run, R5), folded from the run's stream
 * in the shared log (issue 27, ADR 0006) - never read from the read model's tables: the same document,
 * EvalResult and regression decision the read model serves, built by the same functions of libs/domain
 * (`foldRunView`) and put together by the same `runView`. The cases and the judge-corrected pass rates still
 * are folded from the run's `cases.scored` in the log too (LoggedCaseResults), as the regression app folds them.
 *
 * Only the run's own stream is read: the worker's `cases.scored` go to streams of their own and carry live
 * counts, which `run.scored` replaces, so a completed run's document is the same without them - and the
 * ingestion answers completed runs only (an open run's document here counts no case yet).
 *
 * A run whose verdict is folded is settled: nothing its stream may still receive changes the fold (the run
 * model and the projection ignore every event after `run.compared`), so it is kept in memory and not read again.
 */
export class RunFoldQueries {
  private readonly settled = new Map<string, FoldedRun>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly store = new EventStore(),
    private readonly cases = new LoggedCaseResults(),
    private readonly corrections = new JudgeCorrectionQueries(cases),
  ) {}

  /** The run folded from its stream; null when it has no `run.opened` (no such run, or not yet). */
  async fold(runId: string): Promise<FoldedRun | null> {
    if (!isSafeId(runId)) return null;
    return this.folded(this.dataSource, runId);
  }

  /** The run's view (`GET /v1/runs/:id` of the read model, from the log), in one snapshot with its cases; null when there is no such run. */
  async view(runId: string, options: { includeCases?: boolean } = {}): Promise<RunView | null> {
    if (!isSafeId(runId)) return null;
    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      await manager.query('SET TRANSACTION READ ONLY');
      const folded = await this.folded(manager, runId);
      return folded === null ? null : runView(manager, folded, options, this.cases, this.corrections);
    });
  }

  private async folded(sql: Sql, runId: string): Promise<FoldedRun | null> {
    const known = this.settled.get(runId);
    if (known) return known;
    const { state, doc, eval_result, verdict } = foldStoredRunView(await this.store.readStream(sql, runStreamId(runId)));
    if (doc === null) return null;
    const run: FoldedRun = { phase: state.phase, project: RunModel.runProject(state), doc, eval_result, verdict };
    if (run.verdict !== null) this.remember(runId, run);
    return run;
  }

  private remember(runId: string, folded: FoldedRun): void {
    if (this.settled.size >= SETTLED_CACHE_SIZE) this.settled.delete(this.settled.keys().next().value as string);
    this.settled.set(runId, folded);
  }
}
