import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { acknowledgeAll, AckFloorProbe, BatchSettlement, CONSUMERS, contractSubject, Limiter, type BusMessage, type MessageBus, type Subscription } from '@evals/bus';
import { decodeMessage, messageProject, SUBJECTS, type AnyMessage, type RefusedItem } from '@evals/contracts';
import type { WorkItem } from '@evals/domain';
import { DeadLetterRepository, KnownProjects, type DeadLetter } from '@evals/persistence';
import { DATA_SOURCE, LOGGER, MESSAGE_BUS, metrics, type JsonLogger } from '@evals/platform';
import { performance } from 'node:perf_hooks';
import type { DataSource } from 'typeorm';
import { IntakeError, unknownRun } from './intake-error';
import { MonitorService } from './monitor.service';
import { RunIntakeService, type Causation, type RunTicket } from './run-intake.service';

/** How long a message for a run not opened yet waits before it is tried again. */
const UNKNOWN_RUN_RETRY_MS = 500;
const SEAL_WAIT_RETRY_MS = 100;
/**
 * Runs of one micro-batch handled at once. Each waits mostly on round trips (PostgreSQL, JetStream): a few
 * dozen overlap their bus round trips with the database's, whose own bound is the connection pool
 * (DATABASE_POOL_SIZE); a seal waiting for the ack floor does not hold a slot.
 */
const MAX_CONCURRENT_RUNS = 32;
/** Session signals open and feed monitor window runs named inside the monitor: they keep one lane, in order. */
const SIGNAL_LANE = '\0session-signals';

/**
 * Issue 30 (docs/adr/0009-projects.md): the dead-letter code of a message whose `metadata.project` names no
 * project in the `projects` table. Beside the decoder's codes (docs/contracts.md) and the intake's
 * (IntakeErrorCode); its reason names the field only, never a value of the message (D1).
 */
export const PROJECT_NOT_FOUND = 'PROJECT_NOT_FOUND';

/** One decoded message of a micro-batch, in the lane of its run. */
export interface Entry {
  readonly msg: BusMessage;
  readonly subject: string;
  readonly message: AnyMessage;
  readonly cause: Causation;
  /** Issue 30: the message's project (`messageProject`: `default` when the envelope names none). */
  readonly project: string;
  /** A batch message's outputs the decoder took out (invalid on their own), by their index in the batch. */
  readonly refused?: readonly RefusedItem[];
}

type Letter = { letter: DeadLetter; msg: BusMessage };

interface LaneStats {
  seals: number;
  sealsHandedBack: number;
  sealWaitMs: number;
}

/**
 * The durable consumer of EVALS_INBOUND (docs/pipeline.md step 1). Every message is validated at the edge:
 * a malformed or invalid one is dead-lettered with its reason - never its body - and acknowledged, and the
 * consumer goes on. Outputs of one micro-batch for one run are forwarded as one work message.
 *
 * A micro-batch is split into lanes, one per run: a lane keeps its messages in stream order (open, then
 * outputs, then seal), and lanes run concurrently (issue 15: each run.requested and run.sealed handled
 * alone, in turn, made 50 runs a second the bound, waiting on round trips). Each message is acknowledged
 * only once its effects are durable. A seal still needs every earlier output of its run forwarded: those
 * in the batch are before it in its lane; for the others it asks the ack floor, below the batch's own
 * messages (BatchSettlement.sealFloor), and one consumer-info request answers every seal ready at once.
 *
 * Every message acts in its project (issue 30): a run requested is opened in it, and outputs, seals and
 * signals reach only its runs - a run of another project is refused as an unknown one. A lane is one
 * project's messages of one run id. A message of a project that does not exist is dead-lettered
 * PROJECT_NOT_FOUND.
 */
@Injectable()
export class InboundConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private subscription: Subscription | undefined;
  private readonly deadLetters = new DeadLetterRepository();
  /** Issue 30: a message naming a project that does not exist is dead-lettered PROJECT_NOT_FOUND. */
  private readonly projects = new KnownProjects();
  private readonly floor: AckFloorProbe;

  constructor(
    private readonly intake: RunIntakeService,
    private readonly monitor: MonitorService,
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(LOGGER) private readonly logger: JsonLogger,
  ) {
    this.floor = new AckFloorProbe((seq) => this.bus.allAcknowledgedBefore(CONSUMERS.ingestion, seq));
  }

  async onApplicationBootstrap(): Promise<void> {
    this.subscription = await this.bus.consume(CONSUMERS.ingestion, {
      maxBatch: 500,
      handler: (batch) => this.handle(batch),
      onError: (error) => this.logger.event('error', 'inbound batch failed; redelivering', { error: errorName(error) }),
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.subscription?.stop();
  }

  async handle(batch: readonly BusMessage[]): Promise<void> {
    metrics.messagesHandled.inc({ consumer: 'ingestion' }, batch.length);
    const lanes = new Map<string, Entry[]>();
    const decodedBatch: Array<{ msg: BusMessage; subject: string; decoded: ReturnType<typeof decodeMessage> }> = batch.map((msg) => {
      const subject = contractSubject(this.bus.names, msg.subject);
      return { msg, subject, decoded: decodeMessage(subject, msg.data) };
    });
    // The batch's projects, each asked once (a failed lookup hands the whole batch back).
    const unknownProjects = new Set<string>();
    for (const project of new Set(decodedBatch.flatMap((d) => (d.decoded.ok ? [messageProject(d.decoded.message.metadata)] : [])))) {
      if (!(await this.projects.exists(this.db, project))) unknownProjects.add(project);
    }
    const barriers = decodedBatch.filter((d) => d.decoded.ok && laneOf(d.decoded.message) === SIGNAL_LANE).map((d) => d.msg.seq);
    const settlement = new BatchSettlement(batch.map((m) => m.seq), barriers);
    const letters = new LetterSink((entries) => this.deadLetter(entries), settlement);
    for (const { msg, subject, decoded } of decodedBatch) {
      if (!decoded.ok) {
        letters.add({ msg, letter: { subject, code: decoded.code, reason: decoded.reason, message_id: decoded.message_id ?? null, stream_seq: msg.seq } });
        continue;
      }
      const message = decoded.message;
      const cause: Causation = { message_id: message.metadata.message_id, correlation_id: message.metadata.correlation_id };
      const project = messageProject(message.metadata);
      const key = laneOf(message);
      if (key === null) {
        letters.add({ msg, letter: { subject, code: 'UNSUPPORTED_SUBJECT', reason: `no consumer for ${subject}`, message_id: cause.message_id, stream_seq: msg.seq } });
        continue;
      }
      if (unknownProjects.has(project)) {
        letters.add({ msg, letter: { subject, code: PROJECT_NOT_FOUND, reason: 'metadata.project: no such project', message_id: cause.message_id, stream_seq: msg.seq } });
        continue;
      }
      const entry: Entry = decoded.refused ? { msg, subject, message, cause, project, refused: decoded.refused } : { msg, subject, message, cause, project };
      // Another project's messages naming the same run id are a lane of their own: they never share its ticket.
      const lane = key === SIGNAL_LANE ? SIGNAL_LANE : `${project}\0${key}`;
      const entries = lanes.get(lane);
      if (entries) entries.push(entry);
      else lanes.set(lane, [entry]);
    }
    // A lane runs in STREAM order, not delivery order. After a failure, redeliveries come back out of order
    // (a seal nak'ed for 100 ms overtakes its outputs nak'ed for a second), and a seal ahead of an earlier
    // output of its own run would wait for that output to settle while the output waits behind the seal in
    // the lane: the batch never ended (the PostgreSQL-restart fault test, issue 15). In stream order every
    // message a seal waits for in its own lane is handled before it, and across lanes a seal waits only on
    // lower sequences, so no two lanes wait on each other.
    for (const lane of lanes.values()) lane.sort((a, b) => a.msg.seq - b.msg.seq);

    const limiter = new Limiter(MAX_CONCURRENT_RUNS);
    const started = performance.now();
    const requests = this.floor.requests;
    const stats: LaneStats = { seals: 0, sealsHandedBack: 0, sealWaitMs: 0 };
    const results = await Promise.allSettled([...lanes.values()].map((lane) => this.runLane(lane, limiter, settlement, letters, stats)));
    await letters.drained();
    // What a batch cost and what its seals waited for (LOG_LEVEL=debug): where the inbound path's latency goes.
    this.logger.event('debug', 'inbound batch', {
      messages: batch.length,
      runs: lanes.size,
      ms: Math.round(performance.now() - started),
      seals: stats.seals,
      seals_handed_back: stats.sealsHandedBack,
      seal_wait_ms: Math.round(stats.sealWaitMs),
      floor_requests: this.floor.requests - requests,
    });
    // A transient failure (the bus did not take a forward): the batch is redelivered, never dead-lettered.
    // Every lane ran to its end or its failure first, so nothing is acknowledged after the batch is handed back.
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    letters.throwIfFailed();
  }

  /** One run's messages in stream order; outputs in a row are forwarded together. */
  private async runLane(lane: readonly Entry[], limiter: Limiter, settlement: BatchSettlement, letters: LetterSink, stats: LaneStats): Promise<void> {
    await limiter.acquire();
    let ticket: RunTicket | null | undefined;
    let pending: { items: WorkItem[]; entries: Entry[]; cause: Causation } | null = null;
    let index = 0;
    const refuse = (entry: Entry, error: unknown) => {
      if (!(error instanceof IntakeError) || error.transient) throw error;
      letters.add({
        msg: entry.msg,
        letter: { subject: entry.subject, code: error.code, reason: `${error.field ?? 'data'}: ${error.message}`, message_id: entry.cause.message_id, stream_seq: entry.msg.seq },
      });
    };
    // Acknowledged plainly as the lane goes, confirmed at its last message: the server takes one connection's
    // acks of one consumer in order, so that one confirmation covers the lane's (a round trip per run and
    // message less, issue 28). A plain ack that got lost only redelivers its message; the next batch's seals
    // ask the ack floor only after every lane of this one confirmed its last.
    const acknowledge = async (messages: readonly BusMessage[], last: boolean) => {
      if (last) await acknowledgeAll(messages);
      else for (const m of messages) m.ack();
    };
    const flush = async () => {
      if (!pending) return;
      const { items, entries, cause } = pending;
      const runId = (entries[0].message.data as { run_id: string }).run_id;
      let refused: unknown = null;
      try {
        ticket = await this.intake.forward(runId, items, cause, ticket ?? undefined);
        await acknowledge(
          entries.map((e) => e.msg),
          entries[entries.length - 1] === lane[lane.length - 1],
        );
      } catch (error) {
        refused = error;
      }
      // A refusal of the run model (sealed meanwhile by another process) dead-letters each output; anything
      // else fails the lane with these outputs still pending, to be handed back.
      if (refused !== null) for (const entry of entries) refuse(entry, refused);
      else settlement.acked(entries.map((e) => e.msg.seq));
      pending = null;
    };
    try {
      for (; index < lane.length; index++) {
        const entry = lane[index];
        const { msg, message, cause, project } = entry;
        if (message.type !== SUBJECTS.OUTPUT_SUBMITTED && message.type !== SUBJECTS.OUTPUTS_SUBMITTED) await flush();
        try {
          switch (message.type) {
            case SUBJECTS.RUN_REQUESTED: {
              const d = message.data;
              ticket = undefined;
              // The run as the open left it: its outputs and seal in this batch decide on it, without reading it again.
              ticket = (await this.intake.open({ ...d, project, outputs: d.outputs?.map((o) => ({ case_id: o.case_id, output: o.output })) }, cause)).ticket;
              await acknowledge([msg], index === lane.length - 1);
              settlement.acked([msg.seq]);
              break;
            }
            case SUBJECTS.OUTPUT_SUBMITTED:
            case SUBJECTS.OUTPUTS_SUBMITTED: {
              const runId = message.data.run_id;
              if (ticket === undefined) ticket = await this.intake.ticket(runId, project);
              if (!ticket) {
                // The run.requested may still be on its way (another ingestion process): wait, then give up.
                // Another project's run is null too, and waits and gives up alike: nothing tells them apart.
                if (msg.deliveryCount >= CONSUMERS.ingestion.deadLetterAfter) throw unknownRun(runId, 'data.run_id');
                msg.nak(UNKNOWN_RUN_RETRY_MS);
                settlement.notAcked([msg.seq]);
                break;
              }
              if (this.intake.sealedIn(ticket)) throw new IntakeError('RUN_SEALED', `run ${runId} is sealed`, 'data.run_id');
              if (message.type === SUBJECTS.OUTPUT_SUBMITTED) {
                const d = message.data;
                if (!ticket.caseIds.has(d.case_id)) throw new IntakeError('UNKNOWN_CASE', `case ${d.case_id} is not in the run's suite version`, 'data.case_id');
                pending ??= { items: [], entries: [], cause };
                pending.items.push({ case_id: d.case_id, output: d.output });
                pending.entries.push(entry);
                break;
              }
              const { accepted, letters: itemLetters } = sortBatch(entry, ticket.caseIds);
              // Each refused output is written before the batch is acknowledged (with its forward, below), so a
              // failure in between redelivers the batch and writes no letter twice (one per delivery and item).
              await this.deadLetter(itemLetters.map((letter) => ({ letter, msg })), false);
              if (accepted.length === 0) {
                await msg.ackConfirmed();
                settlement.acked([msg.seq]);
                break;
              }
              pending ??= { items: [], entries: [], cause };
              pending.items.push(...accepted);
              pending.entries.push(entry);
              break;
            }
            case SUBJECTS.RUN_SEALED: {
              // Outputs published before the seal may still be in another process's hands (or a batch handed
              // back): the ack floor tells, asked below this batch's messages that other lanes still hold.
              limiter.release();
              const waitFrom = performance.now();
              let acknowledged: boolean;
              try {
                const from = await settlement.sealFloor(msg.seq);
                acknowledged = from !== null && (await this.floor.allAcknowledgedBefore(from));
              } finally {
                await limiter.acquire();
              }
              stats.seals++;
              stats.sealWaitMs += performance.now() - waitFrom;
              if (!acknowledged) {
                stats.sealsHandedBack++;
                msg.nak(SEAL_WAIT_RETRY_MS);
                settlement.notAcked([msg.seq]);
                break;
              }
              const known = ticket ?? undefined;
              ticket = undefined;
              await this.intake.seal(message.data.run_id, project, cause, known);
              await acknowledge([msg], index === lane.length - 1);
              settlement.acked([msg.seq]);
              break;
            }
            case SUBJECTS.SESSION_SIGNAL: {
              await this.monitor.admit(message.data, cause, project);
              await msg.ackConfirmed();
              settlement.acked([msg.seq]);
              break;
            }
          }
        } catch (error) {
          refuse(entry, error);
        }
      }
      await flush();
    } catch (error) {
      // This lane stops here; its messages not settled are handed back with the batch. Seals waiting on them
      // in other lanes learn they were not acknowledged.
      settlement.notAcked([...(pending?.entries ?? []), ...lane.slice(index)].map((e) => e.msg.seq));
      throw error;
    } finally {
      limiter.release();
    }
  }

  /** Writes the letters, then acknowledges their messages - unless `ack` is false (outputs refused inside a batch whose others go on). */
  private async deadLetter(entries: readonly Letter[], ack = true): Promise<void> {
    if (entries.length === 0) return;
    await this.deadLetters.add(this.db, entries.map((e) => e.letter));
    for (const e of entries) {
      const { subject, code, message_id, stream_seq, item_index, case_id } = e.letter;
      metrics.deadLettered.inc({ subject, code });
      this.logger.event('warn', 'message dead-lettered', { subject, code, message_id: message_id ?? null, stream_seq: stream_seq ?? null, ...(item_index != null ? { item_index, case_id: case_id ?? null } : {}) });
      if (ack) e.msg.ack();
    }
  }
}

/**
 * A batch's outputs for its run (issue 28): those to forward, and a dead letter for each one refused - by
 * the decoder (invalid alone: OUTPUT_TOO_LARGE, INVALID_PAYLOAD) or here (UNKNOWN_CASE) - naming its index in
 * the batch as sent and its case id. The decoder took its refusals out of `data.outputs`, so the index of a
 * kept output is counted past them.
 */
export function sortBatch(entry: Entry, caseIds: ReadonlySet<string>): { accepted: WorkItem[]; letters: DeadLetter[] } {
  const data = entry.message.data as { run_id: string; outputs: ReadonlyArray<{ case_id: string; output: string }> };
  const base = { subject: entry.subject, message_id: entry.cause.message_id, stream_seq: entry.msg.seq };
  const refused = entry.refused ?? [];
  const letters: DeadLetter[] = refused.map((r) => ({ ...base, code: r.code, reason: r.reason, item_index: r.index, case_id: r.case_id }));
  const skipped = new Set(refused.map((r) => r.index));
  const accepted: WorkItem[] = [];
  let index = 0;
  for (const output of data.outputs) {
    while (skipped.has(index)) index++;
    if (caseIds.has(output.case_id)) accepted.push({ case_id: output.case_id, output: output.output });
    else letters.push({ ...base, code: 'UNKNOWN_CASE', reason: `data.outputs[${index}].case_id: case ${output.case_id} is not in the run's suite version`, item_index: index, case_id: output.case_id });
    index++;
  }
  letters.sort((a, b) => a.item_index! - b.item_index!);
  return { accepted, letters };
}

/** The lane of a decoded inbound message: its run, or null for a subject this consumer does not take. */
function laneOf(message: AnyMessage): string | null {
  switch (message.type) {
    case SUBJECTS.RUN_REQUESTED:
    case SUBJECTS.OUTPUT_SUBMITTED:
    case SUBJECTS.OUTPUTS_SUBMITTED:
    case SUBJECTS.RUN_SEALED:
      return message.data.run_id;
    case SUBJECTS.SESSION_SIGNAL:
      return SIGNAL_LANE;
    default:
      return null;
  }
}

/**
 * The micro-batch's dead letters, written together: whatever lanes refuse while a write is in flight goes
 * into the next one (one insert per round, not per message). Each is acknowledged once written.
 */
class LetterSink {
  private queued: Letter[] = [];
  private writing: Promise<void> | null = null;
  private failure: { error: unknown } | null = null;

  constructor(
    private readonly write: (entries: readonly Letter[]) => Promise<void>,
    private readonly settlement: BatchSettlement,
  ) {}

  add(entry: Letter): void {
    this.queued.push(entry);
    this.writing ??= this.pump();
  }

  /** Resolves once everything added so far is written (or failed). */
  async drained(): Promise<void> {
    while (this.writing) await this.writing;
  }

  throwIfFailed(): void {
    if (this.failure) throw this.failure.error;
  }

  private async pump(): Promise<void> {
    // Let the lanes that are refusing right now add theirs to this write.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.queued.length > 0) {
      const entries = this.queued;
      this.queued = [];
      const seqs = entries.map((e) => e.msg.seq);
      if (this.failure) {
        this.settlement.notAcked(seqs);
        continue;
      }
      try {
        await this.write(entries);
        this.settlement.acked(seqs);
      } catch (error) {
        this.failure = { error };
        this.settlement.notAcked(seqs);
      }
    }
    this.writing = null;
  }
}

function errorName(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${(error as { code?: string }).code ?? ''}` : 'error';
}
