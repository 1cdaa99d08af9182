import {
  BATCH_TARGET_BYTES,
  ContractError,
  DEFAULT_PROJECT,
  encodeMessage,
  isProjectId,
  isSafeId,
  MAX_BATCH_OUTPUTS,
  MAX_OUTPUT_BYTES,
  SUBJECTS,
  utf8ByteLength,
  type InlineOutputV1,
  type RunRequestedV1,
} from '@evals/contracts';

/**
 * What the publisher needs of a bus: publish `payload` on `subject` with a JetStream message id, resolving
 * once the stream has stored it. `jetStreamPort` (jetstream.port.ts) adapts a `@nats-io/jetstream` client;
 * a test hands in a function.
 */
export interface PublishPort {
  publish(subject: string, payload: string, messageId: string): Promise<{ readonly duplicate: boolean }>;
}

export interface PublisherOptions {
  /** Outputs per batch at most (default and ceiling MAX_BATCH_OUTPUTS, 1 000). */
  readonly batchOutputs?: number;
  /** Bytes of outputs per batch at most (default BATCH_TARGET_BYTES, 768 KiB: fits a stock NATS max_payload). A larger output goes alone. */
  readonly batchBytes?: number;
  /** Batches published and not yet stored at once (default 8): `output()` waits when that many are in flight. */
  readonly maxInFlight?: number;
  /** The clock of `occurred_at`. */
  readonly now?: () => Date;
  /**
   * Distinguishes this publisher's message ids from another's of the same run (a sandbox that restarted and
   * publishes the run again): JetStream drops a message whose id it saw within its window, so a batch id must
   * never name other outputs. Give a fresh value per process (e.g. a UUID); required.
   */
  readonly sessionId: string;
  /**
   * Issue 30 (docs/adr/0009-projects.md): the project every run of this publisher belongs to, written as
   * `metadata.project` on each of its messages (PROJECT_ID_PATTERN). Absent or `default`: nothing is written,
   * so the messages are byte for byte those of a publisher before projects. `open` may name another per run.
   */
  readonly project?: string;
}

/** Per run (`open`): what differs from the publisher's options. */
export interface RunOptions {
  /** The run's project, instead of the publisher's `project`. */
  readonly project?: string;
}

export interface RunSummary {
  readonly run_id: string;
  /** Outputs handed to `output()`. */
  readonly outputs: number;
  readonly batches: number;
  /** Messages JetStream had already stored under the same id (a retry that reached the server twice). */
  readonly duplicates: number;
}

/** A run's opening request without inline outputs: they follow in batches. */
export type RunOpening = Omit<RunRequestedV1, 'outputs'>;

/**
 * The upstream's client of the evals bus contract (issue 28, docs/contracts.md "Publishing a run"): opens a
 * run, publishes its outputs in `evals.outputs.submitted` batches with back-pressure, and seals it after
 * every batch is stored, so the seal never overtakes an output. Messages are validated before they leave
 * (`encodeMessage`): an invalid output throws at `output()`, naming its case - never the output (D1).
 */
export class EvalsPublisher {
  constructor(
    private readonly port: PublishPort,
    private readonly options: PublisherOptions,
  ) {
    if (!isSafeId(options.sessionId)) throw new ContractError('INVALID_PAYLOAD', 'sessionId: isSafeId');
    checkProject(options.project);
  }

  /**
   * Publishes `evals.run.requested` (stored before this resolves) and returns the run's stream of outputs.
   * Every message of the run carries the run's project (`run.project`, else the publisher's, else default).
   */
  async open(request: RunOpening, correlationId: string = request.run_id, run: RunOptions = {}): Promise<RunStream> {
    checkProject(run.project);
    const project = run.project ?? this.options.project ?? DEFAULT_PROJECT;
    const stream = new RunStream(this.port, this.options, request.run_id, correlationId, project);
    await stream.send(SUBJECTS.RUN_REQUESTED, request, 'open');
    return stream;
  }
}

export class RunStream {
  private batch: InlineOutputV1[] = [];
  private batchBytes = 0;
  private batches = 0;
  private outputs = 0;
  private duplicates = 0;
  private sealed = false;
  private readonly inFlight = new Set<Promise<void>>();
  private failure: { error: unknown } | null = null;
  private readonly maxOutputs: number;
  private readonly maxBytes: number;
  private readonly maxInFlight: number;

  constructor(
    private readonly port: PublishPort,
    private readonly options: PublisherOptions,
    readonly runId: string,
    private readonly correlationId: string,
    /** Issue 30: the project each message of the run names (`metadata.project`; nothing for `default`). */
    readonly project: string = DEFAULT_PROJECT,
  ) {
    this.maxOutputs = Math.max(1, Math.min(options.batchOutputs ?? MAX_BATCH_OUTPUTS, MAX_BATCH_OUTPUTS));
    this.maxBytes = Math.max(1, options.batchBytes ?? BATCH_TARGET_BYTES);
    this.maxInFlight = Math.max(1, options.maxInFlight ?? 8);
  }

  /** Adds one output; publishes a batch when it is full, waiting while `maxInFlight` batches are unstored. */
  async output(caseId: string, output: string): Promise<void> {
    if (this.sealed) throw new ContractError('INVALID_PAYLOAD', `run ${this.runId} is sealed`);
    this.throwIfFailed();
    if (!isSafeId(caseId)) throw new ContractError('INVALID_PAYLOAD', 'case_id: isSafeId');
    if (typeof output !== 'string') throw new ContractError('INVALID_PAYLOAD', `output of case ${caseId}: isString`);
    const bytes = utf8ByteLength(output);
    if (bytes > MAX_OUTPUT_BYTES) throw new ContractError('OUTPUT_TOO_LARGE', `output of case ${caseId}: maxUtf8Bytes (limit ${MAX_OUTPUT_BYTES} bytes)`);
    // JSON escaping can grow a string; its UTF-8 length plus the case id is close enough to cut on.
    const size = bytes + caseId.length + 32;
    if (this.batch.length > 0 && this.batchBytes + size > this.maxBytes) await this.cut();
    this.batch.push({ case_id: caseId, output });
    this.batchBytes += size;
    this.outputs++;
    if (this.batch.length >= this.maxOutputs) await this.cut();
  }

  /** Publishes what is buffered and waits until every batch so far is stored. */
  async flush(): Promise<void> {
    if (this.batch.length > 0) await this.cut();
    while (this.inFlight.size > 0) await Promise.race(this.inFlight);
    this.throwIfFailed();
  }

  /** Flushes, then publishes `evals.run.sealed`: no more outputs; cases without one fail as missing_output (R1). */
  async seal(): Promise<RunSummary> {
    await this.flush();
    this.sealed = true;
    await this.send(SUBJECTS.RUN_SEALED, { run_id: this.runId }, 'seal');
    return { run_id: this.runId, outputs: this.outputs, batches: this.batches, duplicates: this.duplicates };
  }

  /** One message of this run, encoded and validated, stored before this resolves. */
  async send(type: typeof SUBJECTS.RUN_REQUESTED | typeof SUBJECTS.RUN_SEALED | typeof SUBJECTS.OUTPUTS_SUBMITTED, data: object, part: string): Promise<void> {
    const messageId = `${this.runId}:${this.options.sessionId}:${part}`;
    const metadata = {
      message_id: messageId,
      correlation_id: this.correlationId,
      causation_id: messageId,
      occurred_at: (this.options.now ?? (() => new Date()))().toISOString(),
      // `encodeMessage` writes it only when not `default` (a default-project message is unchanged).
      project: this.project,
    };
    const wire = encodeMessage(type, 1, data as never, metadata);
    const ack = await this.port.publish(type, JSON.stringify(wire), messageId);
    if (ack.duplicate) this.duplicates++;
  }

  private async cut(): Promise<void> {
    const outputs = this.batch;
    this.batch = [];
    this.batchBytes = 0;
    const part = `b${++this.batches}`;
    while (this.inFlight.size >= this.maxInFlight) await Promise.race(this.inFlight);
    this.throwIfFailed();
    const sending: Promise<void> = this.send(SUBJECTS.OUTPUTS_SUBMITTED, { run_id: this.runId, outputs }, part).then(
      () => void this.inFlight.delete(sending),
      (error: unknown) => {
        this.inFlight.delete(sending);
        this.failure ??= { error };
      },
    );
    this.inFlight.add(sending);
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.failure.error;
  }
}

/** A project given to the publisher must be a project id: refused at once, not at the first message. */
function checkProject(project: string | undefined): void {
  if (project !== undefined && !isProjectId(project)) throw new ContractError('INVALID_ENVELOPE', 'project: isProjectId');
}
