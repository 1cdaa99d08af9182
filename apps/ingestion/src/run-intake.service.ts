import { Inject, Injectable } from '@nestjs/common';
import { subjectOf, type BusNames, type MessagePublisher } from '@evals/bus';
import {
  compileSuite,
  encodeWork,
  parseRunEvent,
  RunModel,
  sampleCaseIds,
  runStreamId,
  WORK_SUBJECTS,
  type CompiledSuite,
  type RunCommand,
  type RunEvent,
  type RunOpenedV1,
  type RunSource,
  type RunState,
  type WorkItem,
  type WorkMetadata,
} from '@evals/domain';
import { EventStore, RegressionRepository, StreamVersionConflict, SuiteRepository, type NewEvent, type SuiteVersionWithCases } from '@evals/persistence';
import { BUS_NAMES, CLOCK, DATA_SOURCE, ID_GENERATOR, MESSAGE_BUS, type Clock, type IdGenerator } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { busUnavailable, IntakeError, underRunRules } from './intake-error';
import { canonicalOutputs, requestMessageId, runRequestHash } from './run-request-hash';

export interface OpenRunCommand {
  readonly run_id: string;
  readonly suite_key: string;
  readonly suite_version?: number;
  readonly subject_kind: string;
  readonly subject_id: string;
  readonly variant?: string;
  readonly baseline_run_id?: string;
  readonly source: RunSource;
  /** Present: the run is complete with these outputs and is sealed once they are on the bus. Absent: outputs follow. */
  readonly outputs?: readonly WorkItem[];
  /** GT3: score only the cases this seed samples; outputs for other cases are ignored. */
  readonly sample?: { readonly size: number; readonly seed: string };
  readonly judge_cache?: boolean;
  readonly judge_skip?: string;
}

export interface Causation {
  /** Id of the message or request that caused this; work message ids derive from it (de-duplication). */
  readonly message_id: string;
  readonly correlation_id: string;
}

/** What the intake knows about an opened run. */
export interface RunTicket {
  readonly opened: RunOpenedV1;
  /** The cases this run scores: the suite version's, or its sample's (GT3). */
  readonly caseIds: ReadonlySet<string>;
  readonly allCaseIds: ReadonlySet<string>;
  /** The run's state, folded from its stream by the run model (R7). */
  readonly state: RunState;
  /** The stream version the state was folded at (the expected version of the next append). */
  readonly version: number;
}

/** Work messages stay well under NATS's default 1 MiB max payload (JSON escaping can grow text). */
const MAX_WORK_ITEMS = 500;
const MAX_WORK_BYTES = 384 * 1024;
/** Appends that lost a race to another writer of the same run are decided again on the new state. */
const MAX_APPEND_ATTEMPTS = 5;

/**
 * Opens runs, forwards outputs to the scoring workers and seals runs (docs/pipeline.md step 1). Shared by
 * the bus consumer and the HTTP API, so a run over NATS and the same run over HTTP are the same run. What
 * is appended to a run's stream is decided by the run model (`RunModel.decide` on the state folded from
 * the stream, R7); this service only reads, appends and publishes.
 */
@Injectable()
export class RunIntakeService {
  private readonly events = new EventStore();
  private readonly suites = new SuiteRepository();
  private readonly verdicts = new RegressionRepository();
  private readonly compiled = new Map<string, CompiledSuite>();
  /** Opened runs never change (only their state does), so what the intake needs of them is cached, boundedly. */
  private readonly tickets = new Map<string, Omit<RunTicket, 'state' | 'version'>>();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(MESSAGE_BUS) private readonly publisher: MessagePublisher,
    @Inject(BUS_NAMES) private readonly names: BusNames,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
  ) {}

  /**
   * Opens the run - idempotent on run_id: the same request again (same request hash) is the same run; other
   * content under the same id is RUN_ID_CONFLICT; an empty outputs list is EMPTY_RUN and records nothing.
   * With outputs (HTTP, or inline on the bus), the run is then completed in this order, so no run is left
   * sealed with outputs that never reached the bus: `run.opened`, every output published as
   * `evals.work.score`, `run.sealed`, `evals.work.seal`. The work message ids derive from the run id and the
   * request hash, so a retry of the same request after a failure anywhere in between completes the run
   * without scoring anything twice. A bus that does not take a message answers BUS_UNAVAILABLE (503).
   */
  async open(cmd: OpenRunCommand, cause: Causation): Promise<{ created: boolean; ticket: RunTicket }> {
    const requestHash = runRequestHash(cmd);
    const outputs = cmd.outputs ? canonicalOutputs(cmd.outputs) : null;
    const existing = await this.ticket(cmd.run_id);
    let opened: RunOpenedV1;
    if (existing) {
      // Nothing new is opened: the model compares the request hash with the one the run was opened with.
      if (cmd.outputs) checkOutputs(cmd.outputs, existing.allCaseIds);
      opened = existing.opened;
    } else {
      const suite = await this.suites.find(this.db, cmd.suite_key, cmd.suite_version);
      if (!suite) {
        const anyVersion = cmd.suite_version === undefined ? null : await this.suites.find(this.db, cmd.suite_key);
        throw anyVersion
          ? new IntakeError('SUITE_VERSION_NOT_FOUND', `suite ${cmd.suite_key} has no version ${cmd.suite_version}`, 'suite_version')
          : new IntakeError('SUITE_NOT_FOUND', `no suite with key ${cmd.suite_key}`, 'suite_key');
      }
      if (cmd.baseline_run_id) await this.checkBaseline(cmd.baseline_run_id, suite.suite_key);
      const compiled = this.compile(suite);
      const allCaseIds = suite.cases.map((c) => c.case_id);
      if (cmd.outputs) checkOutputs(cmd.outputs, new Set(allCaseIds));
      const sampled = cmd.sample ? sampleCaseIds(allCaseIds, cmd.sample) : null;
      opened = {
        run_id: cmd.run_id,
        suite_key: suite.suite_key,
        suite_version: suite.version,
        suite_content_hash: suite.content_hash,
        pass_threshold: suite.pass_threshold,
        regression_threshold: suite.regression_threshold,
        subject_kind: cmd.subject_kind,
        subject_id: cmd.subject_id,
        variant: cmd.variant ?? null,
        baseline_run_id: cmd.baseline_run_id ?? null,
        source: cmd.source,
        case_count: sampled ? sampled.length : suite.cases.length,
        scorer_versions: compiled.scorer_versions,
        ...(cmd.sample && sampled ? { sample: { size: cmd.sample.size, seed: cmd.sample.seed, case_ids: sampled } } : {}),
        ...(cmd.judge_cache ? { judge_cache: true } : {}),
        ...(cmd.judge_skip ? { judge_skip: cmd.judge_skip } : {}),
      };
    }
    const command: RunCommand = { type: 'open', data: opened, request_hash: requestHash, outputs: outputs ? outputs.length : null };
    // A concurrent request for the same run id may win the append: decided again, it is the same run if it
    // asked the same thing, else RUN_ID_CONFLICT.
    const created = await underRunRules(() => this.decideAndAppend(cmd.run_id, command, cause));
    let ticket = (await this.ticket(cmd.run_id))!;
    if (outputs) {
      const work: Causation = { message_id: requestMessageId(cmd.run_id, requestHash), correlation_id: cause.correlation_id };
      await this.onTheBus(() => this.forward(cmd.run_id, outputs.filter((o) => ticket.caseIds.has(o.case_id)), work));
      // Only now that every output is on the bus: sealed (a no-op when a previous attempt got this far).
      await underRunRules(() => this.decideAndAppend(cmd.run_id, { type: 'seal', run_id: cmd.run_id, received: outputs.length }, cause));
      await this.onTheBus(() => this.publishSeal(cmd.run_id, work));
      ticket = (await this.ticket(cmd.run_id))!;
    }
    return { created, ticket };
  }

  /** G5: an explicit baseline must be a completed run of the same suite key, refused up front otherwise. */
  private async checkBaseline(baselineRunId: string, suiteKey: string): Promise<void> {
    const baseline = await this.verdicts.find(this.db, baselineRunId);
    if (!baseline) throw new IntakeError('BASELINE_NOT_FOUND', `baseline ${baselineRunId} is not a completed run`, 'baseline_run_id');
    if (baseline.suite_key !== suiteKey) {
      throw new IntakeError('BASELINE_OTHER_SUITE', `baseline ${baselineRunId} is a run of suite ${baseline.suite_key}, not ${suiteKey}`, 'baseline_run_id');
    }
  }

  /** The run as the intake sees it, folded from its own stream; null when never opened. */
  async ticket(runId: string): Promise<RunTicket | null> {
    const { state, version } = await this.load(runId);
    const data = state.opened;
    if (!data) return null;
    const cached = this.tickets.get(runId);
    if (cached) return { ...cached, state, version };
    const suite = await this.suites.find(this.db, data.suite_key, data.suite_version);
    const allCaseIds = new Set((suite?.cases ?? []).map((c) => c.case_id));
    const ticket = { opened: data, allCaseIds, caseIds: data.sample ? new Set(data.sample.case_ids) : allCaseIds };
    if (this.tickets.size >= 10_000) this.tickets.delete(this.tickets.keys().next().value!);
    this.tickets.set(runId, ticket);
    return { ...ticket, state, version };
  }

  /** Whether the run was sealed when its ticket was read (the run model's answer). */
  sealedIn(ticket: RunTicket): boolean {
    return RunModel.isSealed(ticket.state);
  }

  /** Forwards outputs as `evals.work.score` batches; ids derive from the cause, so a retry de-duplicates. */
  async forward(runId: string, items: readonly WorkItem[], cause: Causation): Promise<void> {
    let chunk: WorkItem[] = [];
    let bytes = 0;
    let index = 0;
    const flush = async () => {
      if (chunk.length === 0) return;
      const metadata = this.workMetadata(`${cause.message_id}:score:${index++}`, cause);
      const payload = encodeWork({ type: WORK_SUBJECTS.score, version: 1, data: { run_id: runId, items: chunk }, metadata });
      await this.publisher.publish(subjectOf(this.names, WORK_SUBJECTS.score), payload, metadata.message_id);
      chunk = [];
      bytes = 0;
    };
    for (const item of items) {
      const size = Buffer.byteLength(item.output, 'utf8') * 2 + item.case_id.length + 32;
      if (chunk.length >= MAX_WORK_ITEMS || (chunk.length > 0 && bytes + size > MAX_WORK_BYTES)) await flush();
      chunk.push(item);
      bytes += size;
    }
    await flush();
  }

  /**
   * Seals the run (`evals.run.sealed`, a monitor window's close): the model decides `run.sealed` (nothing
   * when it is sealed already), then the seal is forwarded to the workers. A run never opened is UNKNOWN_RUN.
   */
  async seal(runId: string, cause: Causation): Promise<void> {
    await underRunRules(() => this.decideAndAppend(runId, { type: 'seal', run_id: runId }, cause));
    await this.publishSeal(runId, cause);
  }

  /** The run's stream, validated and folded by the run model, and its version. */
  private async load(runId: string): Promise<{ state: RunState; version: number }> {
    const stream = await this.events.readStream(this.db, runStreamId(runId));
    const events = stream.map((e) => {
      const event = parseRunEvent({ type: e.type, version: e.version, data: e.data });
      if ('error' in event) throw new Error(`stream ${e.stream_id} version ${e.stream_version} holds an invalid event: ${event.error}`);
      return { event, occurred_at: e.metadata.occurred_at };
    });
    return { state: RunModel.foldRun(events), version: stream.length === 0 ? 0 : stream[stream.length - 1].stream_version };
  }

  /**
   * Decides the command on the run's current state and appends what it decided, at the version it was
   * decided on. Another writer that appended first makes it decide again on the new state. Returns whether
   * anything was appended. Throws RunRuleError when the command breaks a rule of the model.
   */
  private async decideAndAppend(runId: string, command: RunCommand, cause: Causation): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      const { state, version } = await this.load(runId);
      const decided = RunModel.decide(command, state);
      if (decided.length === 0) return false;
      try {
        await this.db.transaction((m) => this.events.append(m, runStreamId(runId), version, decided.map((e) => this.event(e, cause))));
        return true;
      } catch (error) {
        if (!(error instanceof StreamVersionConflict) || attempt >= MAX_APPEND_ATTEMPTS) throw error;
      }
    }
  }

  /** Publishes on the request's behalf: a bus that does not take the message is a retryable 503, not a 500. */
  private async onTheBus(publish: () => Promise<void>): Promise<void> {
    try {
      await publish();
    } catch (error) {
      throw busUnavailable(error);
    }
  }

  private async publishSeal(runId: string, cause: Causation): Promise<void> {
    const metadata = this.workMetadata(`${cause.message_id}:seal`, cause);
    const payload = encodeWork({ type: WORK_SUBJECTS.seal, version: 1, data: { run_id: runId }, metadata });
    await this.publisher.publish(subjectOf(this.names, WORK_SUBJECTS.seal), payload, metadata.message_id);
  }

  private compile(suite: SuiteVersionWithCases): CompiledSuite {
    const key = `${suite.suite_key}@${suite.version}`;
    let compiled = this.compiled.get(key);
    if (!compiled) {
      try {
        compiled = compileSuite(suite);
      } catch {
        throw new IntakeError('SUITE_INVALID', `suite ${key} cannot be scored by this version of the service`, 'suite_key');
      }
      this.compiled.set(key, compiled);
    }
    return compiled;
  }

  private event(event: RunEvent, cause: Causation): NewEvent {
    return {
      type: event.type,
      version: event.version,
      data: event.data,
      metadata: { message_id: this.ids.uuid(), correlation_id: cause.correlation_id, causation_id: cause.message_id, occurred_at: this.clock.now().toISOString() },
    };
  }

  private workMetadata(messageId: string, cause: Causation): WorkMetadata {
    return { message_id: messageId, correlation_id: cause.correlation_id, causation_id: cause.message_id, occurred_at: this.clock.now().toISOString() };
  }
}

/** R1: an output for an unknown case id is refused, naming the case; two outputs for one case too. */
function checkOutputs(outputs: readonly WorkItem[], caseIds: ReadonlySet<string>): void {
  const seen = new Set<string>();
  outputs.forEach((o, i) => {
    if (!caseIds.has(o.case_id)) throw new IntakeError('UNKNOWN_CASE', `case ${o.case_id} is not in the suite version`, `outputs[${i}].case_id`);
    if (seen.has(o.case_id)) throw new IntakeError('DUPLICATE_CASE', `case ${o.case_id} has more than one output`, `outputs[${i}].case_id`);
    seen.add(o.case_id);
  });
}
