import { Inject, Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import { RunFoldQueries, type FoldedRun, type RunView } from '@evals/persistence';
import { DATA_SOURCE, RUN_PROGRESS, type RunProgress } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { INGESTION_CONFIG, type IngestionConfig } from './config';
import { IntakeError } from './intake-error';

/**
 * What the waiter waits for (R5, G1): the run compared (the run model's last phase: scored, then compared
 * with its baseline), with its EvalResult and the verdict as the read model projects them.
 */
function settled(run: FoldedRun | null): boolean {
  return run !== null && run.phase === 'compared' && run.eval_result !== null && run.verdict !== null;
}

/**
 * Waits for a run to be completed and compared with its baseline (R5, G1), folding the run's stream from
 * the shared log with a backoff (issue 27: the ingestion reads no table of the read model) - woken early when
 * the read model of this process records the run (RunProgress: the all-in-one; a deployment polls only);
 * past RUN_TIMEOUT_MS it answers 202 RUN_PENDING with where to look. So does every wait when the app shuts
 * down: the consumers that would complete the run stop first, and a request left waiting would hold the HTTP
 * server open until its timeout. The answer is the run's view as the read model serves it, built from the
 * same events by the same functions; the read model itself may show it a moment later (it projects the same
 * `run.compared` from the bus).
 */
@Injectable()
export class RunWaiter implements BeforeApplicationShutdown {
  private readonly queries: RunFoldQueries;
  private stopping = false;

  constructor(
    @Inject(DATA_SOURCE) db: DataSource,
    @Inject(INGESTION_CONFIG) private readonly config: IngestionConfig,
    @Inject(RUN_PROGRESS) private readonly progress: RunProgress,
  ) {
    this.queries = new RunFoldQueries(db);
  }

  async completed(runId: string, options: { includeCases?: boolean } = {}): Promise<RunView> {
    const deadline = Date.now() + this.config.runTimeoutMs;
    let delay = 10;
    for (;;) {
      const wait = this.progress.next(runId, delay);
      try {
        // The fold alone while it is not settled; the cases and the corrections once, for the answer.
        if (settled(await this.queries.fold(runId))) {
          const view = await this.queries.view(runId, options);
          if (view) return view;
        }
        if (this.stopping || Date.now() > deadline) throw new IntakeError('RUN_PENDING', `run ${runId} is still being scored: GET /v1/runs/${runId}`, 'run_id');
        await wait.woken;
      } finally {
        wait.cancel();
      }
      delay = Math.min(delay * 2, 200);
    }
  }

  beforeApplicationShutdown(): void {
    this.stopping = true;
  }

  /** The run's view, or null when there is no such run in `project` (issue 30: another project's run is none). */
  async find(runId: string, project: string, options: { includeCases?: boolean } = {}): Promise<RunView | null> {
    const folded = await this.queries.fold(runId);
    if (folded === null || folded.project !== project) return null;
    return this.queries.view(runId, options);
  }
}
