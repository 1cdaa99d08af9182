import { CONSUMERS, streamOf, type BusNames } from '@evals/bus';

/**
 * What the scoring service and its consumer need to know, derived once from the configuration. Plain data
 * and framework-free, so the integration tests build it directly.
 */
export interface WorkerSettings {
  readonly names: BusNames;
  /** The wire name of the EVALS_WORK stream. */
  readonly stream: string;
  readonly durable: string;
  readonly maxBatch: number;
  /** Key of the evidence detail hash (D2). */
  readonly hmacSecret: string;
  /** Deliveries after which a message that still cannot be handled is dead-lettered. */
  readonly deadLetterAfter: number;
  /** Redelivery delay of a message that may succeed later (run not yet known) and of a failed batch. */
  readonly retryDelayMs: number;
  /** Redelivery delay of a seal whose earlier work is still in flight. */
  readonly sealWaitMs: number;
  /** While judge calls are outstanding, their messages are kept alive (`working()`) this often (under the ack wait). */
  readonly judgeHeartbeatMs?: number;
}

export function workerSettings(input: { names: BusNames; maxBatch: number; hmacSecret: string } & Partial<WorkerSettings>): WorkerSettings {
  return {
    stream: streamOf(input.names, CONSUMERS.scoringWorker.stream),
    durable: CONSUMERS.scoringWorker.durable,
    deadLetterAfter: CONSUMERS.scoringWorker.deadLetterAfter,
    retryDelayMs: 1_000,
    sealWaitMs: 100,
    judgeHeartbeatMs: Math.max(1_000, Math.floor((CONSUMERS.scoringWorker.ackWaitSeconds * 1000) / 4)),
    ...input,
  };
}
