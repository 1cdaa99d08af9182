import { Inject, Injectable } from '@nestjs/common';
import { subjectOf, type BusNames, type MessagePublisher } from '@evals/bus';
import {
  compileSuite,
  encodeWork,
  sampleCaseIds,
  RUN_EVENTS,
  runStreamId,
  WORK_SUBJECTS,
  type CompiledSuite,
  type RunOpenedV1,
  type RunSource,
  type WorkItem,
  type WorkMetadata,
} from '@evals/domain';
import { EventStore, RegressionRepository, StreamVersionConflict, SuiteRepository, type NewEvent, type SuiteVersionWithCases } from '@evals/persistence';
import { BUS_NAMES, CLOCK, DATA_SOURCE, ID_GENERATOR, MESSAGE_BUS, type Clock, type IdGenerator } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { IntakeError } from './intake-error';

export interface OpenRunCommand {
  readonly run_id: string;
  readonly suite_key: string;
  readonly suite_version?: number;
  readonly subject_kind: string;
  readonly subject_id: string;
  readonly variant?: string;
  readonly baseline_run_id?: string;
  readonly source: RunSource;
  /** Present: the run is complete with these outputs and is sealed at once. Absent: outputs follow. */
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

/** What the intake knows about an open run; immutable but for `sealed`. */
export interface RunTicket {
  readonly opened: RunOpenedV1;
  /** The cases this run scores: the suite version's, or its sample's (GT3). */
  readonly caseIds: ReadonlySet<string>;
  readonly allCaseIds: ReadonlySet<string>;
  readonly version: number;
}

/** Work messages stay well under NATS's default 1 MiB max payload (JSON escaping can grow text). */
const MAX_WORK_ITEMS = 500;
const MAX_WORK_BYTES = 384 * 1024;

/**
 * Opens runs, forwards outputs to the scoring workers and seals runs (docs/pipeline.md step 1). Shared by
 * the bus consumer and the HTTP API, so a run over NATS and the same run over HTTP are the same run.
 */
@Injectable()
export class RunIntakeService {
  private readonly events = new EventStore();
  private readonly suites = new SuiteRepository();
  private readonly verdicts = new RegressionRepository();
  private readonly compiled = new Map<string, CompiledSuite>();
  /** Opened runs never change (only their sealing does), so their tickets are cached, boundedly. */
  private readonly tickets = new Map<string, Omit<RunTicket, 'version'>>();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(MESSAGE_BUS) private readonly publisher: MessagePublisher,
    @Inject(BUS_NAMES) private readonly names: BusNames,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
  ) {}

  /**
   * Opens the run (idempotent on run_id: the same request again is the same run; a different one under
   * the same id is RUN_ID_CONFLICT), forwards inline outputs and, when they are given, seals it.
   */
  async open(cmd: OpenRunCommand, cause: Causation): Promise<{ created: boolean; ticket: RunTicket }> {
    const existing = await this.ticket(cmd.run_id);
    let ticket: RunTicket;
    let created = false;
    if (existing) {
      assertSameRun(existing.opened, cmd);
      ticket = existing;
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
      const opened: RunOpenedV1 = {
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
      const events: NewEvent[] = [this.event(RUN_EVENTS.opened, opened, cause)];
      if (cmd.outputs) events.push(this.event(RUN_EVENTS.sealed, { run_id: cmd.run_id }, cause));
      try {
        await this.db.transaction((m) => this.events.append(m, runStreamId(cmd.run_id), 0, events));
        created = true;
      } catch (error) {
        // A concurrent request for the same run id won: it is the same run if it asked the same thing.
        if (!(error instanceof StreamVersionConflict)) throw error;
        const winner = await this.ticket(cmd.run_id);
        if (!winner) throw error;
        assertSameRun(winner.opened, cmd);
      }
      ticket = (await this.ticket(cmd.run_id))!;
    }
    if (cmd.outputs) {
      checkOutputs(cmd.outputs, ticket.allCaseIds);
      await this.forward(cmd.run_id, cmd.outputs.filter((o) => ticket.caseIds.has(o.case_id)), cause);
      await this.publishSeal(cmd.run_id, cause);
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

  /** The run as the intake sees it, from its own stream; null when never opened. */
  async ticket(runId: string): Promise<RunTicket | null> {
    const stream = await this.events.readStream(this.db, runStreamId(runId));
    const opened = stream.find((e) => e.type === RUN_EVENTS.opened);
    if (!opened) return null;
    const cached = this.tickets.get(runId);
    if (cached) return { ...cached, version: stream.length };
    const data = opened.data as RunOpenedV1;
    const suite = await this.suites.find(this.db, data.suite_key, data.suite_version);
    const allCaseIds = new Set((suite?.cases ?? []).map((c) => c.case_id));
    const ticket = { opened: data, allCaseIds, caseIds: data.sample ? new Set(data.sample.case_ids) : allCaseIds };
    if (this.tickets.size >= 10_000) this.tickets.delete(this.tickets.keys().next().value!);
    this.tickets.set(runId, ticket);
    return { ...ticket, version: stream.length };
  }

  /** Whether the run is sealed, from its own stream (a cheap indexed read). */
  sealedIn(ticket: RunTicket): boolean {
    return ticket.version >= 2;
  }

  async isSealed(runId: string): Promise<boolean> {
    const stream = await this.events.readStream(this.db, runStreamId(runId));
    return stream.some((e) => e.type === RUN_EVENTS.sealed);
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

  /** Appends run.sealed (idempotent) and forwards the seal to the workers. */
  async seal(runId: string, cause: Causation): Promise<void> {
    const ticket = await this.ticket(runId);
    if (!ticket) throw new IntakeError('UNKNOWN_RUN', `no run ${runId}`, 'run_id');
    if (!(await this.isSealed(runId))) {
      try {
        await this.db.transaction((m) => this.events.append(m, runStreamId(runId), ticket.version, [this.event(RUN_EVENTS.sealed, { run_id: runId }, cause)]));
      } catch (error) {
        if (!(error instanceof StreamVersionConflict)) throw error;
      }
    }
    await this.publishSeal(runId, cause);
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

  private event(type: string, data: unknown, cause: Causation): NewEvent {
    return {
      type,
      version: 1,
      data,
      metadata: { message_id: this.ids.uuid(), correlation_id: cause.correlation_id, causation_id: cause.message_id, occurred_at: this.clock.now().toISOString() },
    };
  }

  private workMetadata(messageId: string, cause: Causation): WorkMetadata {
    return { message_id: messageId, correlation_id: cause.correlation_id, causation_id: cause.message_id, occurred_at: this.clock.now().toISOString() };
  }
}

function assertSameRun(opened: RunOpenedV1, cmd: OpenRunCommand): void {
  const same =
    opened.suite_key === cmd.suite_key &&
    (cmd.suite_version === undefined || opened.suite_version === cmd.suite_version) &&
    opened.subject_kind === cmd.subject_kind &&
    opened.subject_id === cmd.subject_id &&
    opened.variant === (cmd.variant ?? null) &&
    opened.baseline_run_id === (cmd.baseline_run_id ?? null);
  if (!same) throw new IntakeError('RUN_ID_CONFLICT', `run ${opened.run_id} exists with a different suite, subject, variant or baseline`, 'run_id');
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
