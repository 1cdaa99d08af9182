import { CONSUMERS, type BusMessage, type MessageBus, type Subscription } from '@evals/bus';
import { performance } from 'node:perf_hooks';
import type { BatchOutcome, ScoringService } from './scoring.service';
import type { WorkerSettings } from './settings';

type Level = 'debug' | 'info' | 'warn' | 'error';

/** The part of JsonLogger the consumer uses (structural, so tests can capture lines). */
export interface WorkLogger {
  event(level: Level, msg: string, fields?: Record<string, string | number | boolean | null | undefined>): void;
}

export interface WorkConsumerHooks {
  /** Called with every batch's outcome (tests, metrics). */
  readonly onBatch?: (outcome: BatchOutcome) => void;
}

/**
 * Pulls EVALS_WORK with the shared durable `scoring-worker` in micro-batches and hands each to the
 * ScoringService. Any number of processes (or instances in one process) run side by side. Logs carry ids,
 * counts and codes only (D1).
 */
export class WorkConsumer {
  private consumer: Subscription | undefined;

  constructor(
    private readonly bus: Pick<MessageBus, 'consume'>,
    private readonly settings: WorkerSettings,
    private readonly scoring: ScoringService,
    private readonly logger: WorkLogger,
    private readonly hooks: WorkConsumerHooks = {},
  ) {}

  async start(): Promise<void> {
    if (this.consumer) return;
    this.consumer = await this.bus.consume(CONSUMERS.scoringWorker, {
      maxBatch: this.settings.maxBatch,
      retryDelayMs: this.settings.retryDelayMs,
      handler: (batch) => this.handle(batch),
      onError: (error, batch) =>
        this.logger.event('warn', 'work batch failed; redelivering', { error: errorName(error), code: errorCode(error), messages: batch.length }),
    });
  }

  /** Stops pulling, finishes the batch in hand and hands the buffered rest back (X4). */
  async stop(): Promise<void> {
    const consumer = this.consumer;
    this.consumer = undefined;
    await consumer?.stop();
  }

  /** Messages being handled right now. */
  get busy(): number {
    return this.consumer?.busy ?? 0;
  }

  private async handle(batch: BusMessage[]): Promise<void> {
    const started = performance.now();
    const outcome = await this.scoring.handle(batch);
    this.hooks.onBatch?.(outcome);
    this.logger.event('debug', 'work batch handled', {
      messages: outcome.messages,
      inserted: outcome.inserted,
      duplicates: outcome.duplicates,
      events: outcome.events,
      retried: outcome.retried,
      seals_waiting: outcome.sealsWaiting,
      // What a batch cost (LOG_LEVEL=debug): a seal waits for the batch ahead of it, then its own.
      ms: Math.round(performance.now() - started),
    });
    const letters = new Map<string, { subject: string; code: string; count: number }>();
    for (const l of outcome.deadLettered) {
      const key = `${l.subject} ${l.code}`;
      letters.set(key, { ...l, count: (letters.get(key)?.count ?? 0) + 1 });
    }
    for (const l of letters.values()) this.logger.event('warn', 'work dead-lettered', l);
    for (const runId of outcome.sealedRunIds) this.logger.event('info', 'run scored', { run_id: runId });
  }
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : 'error';
}

/** A stable code (ours or PostgreSQL's SQLSTATE), never an error message: those may quote data. */
function errorCode(error: unknown): string | null {
  const e = error as { code?: unknown; driverError?: { code?: unknown } } | null;
  const code = e?.code ?? e?.driverError?.code;
  return typeof code === 'string' || typeof code === 'number' ? String(code) : null;
}
