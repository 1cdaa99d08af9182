import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { RUN_RULE_CODES, RunRuleError } from '@evals/domain';
import { LOGGER, type JsonLogger } from '@evals/platform';
import { INGESTION_CONFIG, type IngestionConfig } from './config';
import { IntakeError } from './intake-error';
import { RunIntakeService } from './run-intake.service';
import { RunStreams } from './run-streams';

/** How many runs one sweep expires at most; the next sweep takes the rest. */
const SWEEP_LIMIT = 500;

/**
 * R7: no run stays open forever. A run whose owner never sealed it - a client that crashed between its
 * outputs and its seal, a stream of `evals.output.submitted` that stopped - is sealed by the system once
 * `EVALS_RUN_TTL_SECONDS` have passed since it was opened, with reason `expired`: its missing cases are
 * scored `missing_output`, it completes like any run, and it is never a baseline (G4). The model decides
 * each expiry against its own clock, so two ingestion processes sweeping at once expire a run once. A run
 * sealed a TTL ago and still not scored (its seal message was lost and nobody retried) gets its seal again.
 */
@Injectable()
export class RunExpiryService implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<unknown> | undefined;

  constructor(
    private readonly intake: RunIntakeService,
    private readonly streams: RunStreams,
    @Inject(INGESTION_CONFIG) private readonly config: Pick<IngestionConfig, 'runTtlSeconds'>,
    @Inject(LOGGER) private readonly logger: JsonLogger,
  ) {}

  onApplicationBootstrap(): void {
    // A quarter of the TTL, between 1 s and 30 s: an expired run is sealed within about a quarter of its time.
    const every = Math.min(30_000, Math.max(1_000, (this.config.runTtlSeconds * 1000) / 4));
    this.timer = setInterval(() => {
      if (this.sweeping) return;
      this.sweeping = this.sweep()
        .catch((error) => this.logger.event('warn', 'run expiry sweep failed; retrying', { error: error instanceof Error ? error.name : 'error' }))
        .finally(() => (this.sweeping = undefined));
    }, every);
    this.timer.unref();
  }

  /** Expires every open run past its time; returns the ids this call expired. */
  async sweep(): Promise<string[]> {
    const now = this.streams.now();
    const cutoff = new Date(now.getTime() - this.config.runTtlSeconds * 1000);
    const expired: string[] = [];
    for (const runId of await this.streams.openBefore(cutoff, SWEEP_LIMIT)) {
      try {
        if (await this.intake.expire(runId, now, this.config.runTtlSeconds)) expired.push(runId);
      } catch (error) {
        // Not due by the model's reckoning (clocks of two processes differ): the next sweep takes it.
        if (isNotExpired(error)) continue;
        throw error;
      }
      this.logger.event('info', 'run expired', { run_id: runId, ttl_seconds: this.config.runTtlSeconds });
    }
    // A run sealed a TTL ago and still not scored lost its seal message: hand it over again.
    for (const runId of await this.streams.sealedNotScoredBefore(cutoff, SWEEP_LIMIT)) {
      await this.intake.resendSeal(runId);
      this.logger.event('warn', 'seal handed to the workers again', { run_id: runId });
    }
    return expired;
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.sweeping;
  }
}

function isNotExpired(error: unknown): boolean {
  return (error instanceof RunRuleError || error instanceof IntakeError) && error.code === RUN_RULE_CODES.runNotExpired;
}
