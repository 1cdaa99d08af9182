import { Inject, Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import { RunQueries, type RunView } from '@evals/persistence';
import { DATA_SOURCE, RUN_PROGRESS, type RunProgress } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { INGESTION_CONFIG, type IngestionConfig } from './config';
import { IntakeError } from './intake-error';

/**
 * Waits for a run to be completed and compared with its baseline (R5, G1), polling the read model with a
 * backoff - woken early when the read model of this process records the run (RunProgress: the all-in-one;
 * a deployment polls only); past RUN_TIMEOUT_MS it answers 202 RUN_PENDING with where to look. So does every wait when the
 * app shuts down: the consumers that would complete the run stop first, and a request left waiting would
 * hold the HTTP server open until its timeout.
 */
@Injectable()
export class RunWaiter implements BeforeApplicationShutdown {
  private readonly queries: RunQueries;
  private stopping = false;

  constructor(
    @Inject(DATA_SOURCE) db: DataSource,
    @Inject(INGESTION_CONFIG) private readonly config: IngestionConfig,
    @Inject(RUN_PROGRESS) private readonly progress: RunProgress,
  ) {
    this.queries = new RunQueries(db);
  }

  async completed(runId: string, options: { includeCases?: boolean } = {}): Promise<RunView> {
    const deadline = Date.now() + this.config.runTimeoutMs;
    let delay = 10;
    for (;;) {
      const wait = this.progress.next(runId, delay);
      try {
        const view = await this.queries.run(runId, options);
        if (view && view.run.status === 'completed' && view.eval_result && view.regression) return view;
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

  find(runId: string, options: { includeCases?: boolean } = {}): Promise<RunView | null> {
    return this.queries.run(runId, options);
  }
}
