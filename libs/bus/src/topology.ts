import type { AckPolicy, DeliverPolicy, DiscardPolicy, JetStreamManager, RetentionPolicy, StorageType, StreamConfig } from '@nats-io/jetstream';

// The NATS client's constants by value, its types by name only: the all-in-one (whose bus is in-process)
// loads this module too, and loading the client costs 50-70 ms of every cold start (issue 15). topology.spec.ts
// holds each value to the client's own.
const WORKQUEUE: RetentionPolicy = 'workqueue';
const LIMITS: RetentionPolicy = 'limits';
const FILE: StorageType = 'file';
const MEMORY: StorageType = 'memory';
const DISCARD_OLD: DiscardPolicy = 'old';
const ACK_EXPLICIT: AckPolicy = 'explicit';
const DELIVER_ALL: DeliverPolicy = 'all';
/** JetStream durations are nanoseconds. */
const nanos = (millis: number): number => millis * 1_000_000;

/**
 * Stream and subject names, prefixable so tests (and several deployments on one cluster) never share them.
 * Production uses no prefix: subjects are exactly those of spec section 10.
 */
export interface BusNames {
  readonly streamPrefix: string;
  readonly subjectPrefix: string;
}

export const PRODUCTION_NAMES: BusNames = { streamPrefix: '', subjectPrefix: '' };

export function subjectOf(names: BusNames, subject: string): string {
  return names.subjectPrefix ? `${names.subjectPrefix}.${subject}` : subject;
}

/** The subject as the contract names it, with the deployment prefix removed. */
export function contractSubject(names: BusNames, wireSubject: string): string {
  const prefix = names.subjectPrefix ? `${names.subjectPrefix}.` : '';
  return prefix && wireSubject.startsWith(prefix) ? wireSubject.slice(prefix.length) : wireSubject;
}

export function streamOf(names: BusNames, stream: StreamName): string {
  return `${names.streamPrefix}${stream}`;
}

export type StreamName = 'EVALS_INBOUND' | 'EVALS_WORK' | 'EVALS_EVENTS' | 'EVALS_OUTBOUND';

export interface StreamSpec {
  readonly name: StreamName;
  readonly subjects: readonly string[];
  readonly retention: RetentionPolicy;
  /** Seconds; 0 keeps messages until acknowledged (work queues) or forever within the limits. */
  readonly maxAgeSeconds: number;
  readonly description: string;
}

const DAY = 24 * 3600;

/** docs/pipeline.md explains each stream; deploy/ declares the same ones for a cluster. */
export const STREAMS: readonly StreamSpec[] = [
  {
    name: 'EVALS_INBOUND',
    subjects: ['evals.run.requested', 'evals.output.submitted', 'evals.outputs.submitted', 'evals.run.sealed', 'evals.session.signal'],
    retention: WORKQUEUE,
    maxAgeSeconds: 7 * DAY,
    description: 'Inbound runs, outputs, seals and session signals; deleted once ingested (D1).',
  },
  {
    name: 'EVALS_WORK',
    subjects: ['evals.work.>'],
    retention: WORKQUEUE,
    maxAgeSeconds: 7 * DAY,
    description: 'Scoring work batches; deleted once scored (D1).',
  },
  {
    name: 'EVALS_EVENTS',
    subjects: ['evals.event.>'],
    retention: LIMITS,
    maxAgeSeconds: 7 * DAY,
    description: 'Internal domain events relayed from the outbox.',
  },
  {
    name: 'EVALS_OUTBOUND',
    // Issue 30: `default` publishes on the bare subjects, every other project with its trailing token (projectSubject).
    subjects: ['evals.result.recorded', 'evals.result.recorded.*', 'finding.reported', 'finding.reported.*'],
    retention: LIMITS,
    maxAgeSeconds: 14 * DAY,
    description: 'EvalResults (R4) and findings (G6) for other modules.',
  },
];

export interface ConsumerSpec {
  readonly stream: StreamName;
  readonly durable: string;
  /**
   * Deliveries after which the consumer code dead-letters a message it still cannot handle. The server
   * itself redelivers without limit: a seal that waits for in-flight outputs naks itself many times, and a
   * server-side cap would silently drop it.
   */
  readonly deadLetterAfter: number;
  readonly ackWaitSeconds: number;
  readonly filterSubject?: string;
}

export const CONSUMERS = {
  ingestion: { stream: 'EVALS_INBOUND', durable: 'ingestion', deadLetterAfter: 10, ackWaitSeconds: 30 },
  scoringWorker: { stream: 'EVALS_WORK', durable: 'scoring-worker', deadLetterAfter: 10, ackWaitSeconds: 60 },
  readModel: { stream: 'EVALS_EVENTS', durable: 'read-model', deadLetterAfter: 20, ackWaitSeconds: 30 },
  // Only completed runs concern the regression app.
  regression: { stream: 'EVALS_EVENTS', durable: 'regression', deadLetterAfter: 20, ackWaitSeconds: 30, filterSubject: 'evals.event.run.scored' },
} as const satisfies Record<string, ConsumerSpec>;

export interface TopologyOptions {
  readonly replicas?: number;
  readonly storage?: 'file' | 'memory';
  /** Duplicate window for Nats-Msg-Id de-duplication. */
  readonly duplicateWindowSeconds?: number;
}

export function streamConfig(names: BusNames, spec: StreamSpec, options: TopologyOptions = {}): Partial<StreamConfig> & { name: string } {
  return {
    name: streamOf(names, spec.name),
    description: spec.description,
    subjects: spec.subjects.map((s) => subjectOf(names, s)),
    retention: spec.retention,
    storage: options.storage === 'memory' ? MEMORY : FILE,
    num_replicas: options.replicas ?? 1,
    max_age: nanos(spec.maxAgeSeconds * 1000),
    duplicate_window: nanos((options.duplicateWindowSeconds ?? 120) * 1000),
    discard: DISCARD_OLD,
  };
}

/** Creates (or updates) every stream and durable consumer. Idempotent; run by each app at boot. */
export async function ensureTopology(jsm: JetStreamManager, names: BusNames, options: TopologyOptions = {}): Promise<void> {
  for (const spec of STREAMS) {
    const config = streamConfig(names, spec, options);
    try {
      await jsm.streams.info(config.name);
      const { name, retention: _retention, storage: _storage, ...update } = config;
      await jsm.streams.update(name, update);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      await jsm.streams.add(config);
    }
  }
  for (const spec of Object.values(CONSUMERS) as ConsumerSpec[]) {
    await ensureConsumer(jsm, names, spec);
  }
}

export async function ensureConsumer(jsm: JetStreamManager, names: BusNames, spec: ConsumerSpec): Promise<void> {
  const stream = streamOf(names, spec.stream);
  const config = {
    durable_name: spec.durable,
    ack_policy: ACK_EXPLICIT,
    deliver_policy: DELIVER_ALL,
    max_deliver: -1,
    ack_wait: nanos(spec.ackWaitSeconds * 1000),
    max_ack_pending: 10_000,
    ...(spec.filterSubject ? { filter_subject: subjectOf(names, spec.filterSubject) } : {}),
  };
  try {
    await jsm.consumers.info(stream, spec.durable);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    await jsm.consumers.add(stream, config);
  }
}

function isNotFound(error: unknown): boolean {
  const text = error instanceof Error ? `${error.name} ${error.message} ${(error as { code?: unknown }).code ?? ''}` : String(error);
  return /not found|404|10059|10014/i.test(text);
}
