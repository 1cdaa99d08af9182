import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { CONSUMERS, contractSubject, type BusMessage, type MessageBus, type Subscription } from '@evals/bus';
import { decodeMessage, SUBJECTS } from '@evals/contracts';
import type { WorkItem } from '@evals/domain';
import { DeadLetterRepository, type DeadLetter } from '@evals/persistence';
import { DATA_SOURCE, LOGGER, MESSAGE_BUS, metrics, type JsonLogger } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { IntakeError } from './intake-error';
import { MonitorService } from './monitor.service';
import { RunIntakeService, type Causation, type RunTicket } from './run-intake.service';

interface PendingRun {
  readonly items: WorkItem[];
  readonly messages: BusMessage[];
  readonly cause: Causation;
}

/** How long a message for a run not opened yet waits before it is tried again. */
const UNKNOWN_RUN_RETRY_MS = 500;
const SEAL_WAIT_RETRY_MS = 100;

/**
 * The durable consumer of EVALS_INBOUND (docs/pipeline.md step 1). Every message is validated at the edge:
 * a malformed or invalid one is dead-lettered with its reason - never its body - and acknowledged, and the
 * consumer goes on. Outputs of one micro-batch for one run are forwarded as one work message.
 */
@Injectable()
export class InboundConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private subscription: Subscription | undefined;
  private readonly deadLetters = new DeadLetterRepository();

  constructor(
    private readonly intake: RunIntakeService,
    private readonly monitor: MonitorService,
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(LOGGER) private readonly logger: JsonLogger,
  ) {}

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
    const pending = new Map<string, PendingRun>();
    // One look-up per run per micro-batch, not per output: the stream is re-read only after this batch
    // opened or sealed the run itself.
    const tickets = new Map<string, RunTicket | null>();
    const ticketOf = async (runId: string) => {
      if (!tickets.has(runId)) tickets.set(runId, await this.intake.ticket(runId));
      return tickets.get(runId)!;
    };
    const letters: Array<{ letter: DeadLetter; msg: BusMessage }> = [];
    const flush = async () => {
      for (const [runId, run] of pending) {
        await this.intake.forward(runId, run.items, run.cause);
        await ackAll(run.messages);
      }
      pending.clear();
      await this.deadLetter(letters.splice(0));
    };

    for (const msg of batch) {
      const subject = contractSubject(this.bus.names, msg.subject);
      const decoded = decodeMessage(subject, msg.data);
      if (!decoded.ok) {
        letters.push({ msg, letter: { subject, code: decoded.code, reason: decoded.reason, message_id: decoded.message_id ?? null, stream_seq: msg.seq } });
        continue;
      }
      const message = decoded.message;
      const cause: Causation = { message_id: message.metadata.message_id, correlation_id: message.metadata.correlation_id };
      try {
        switch (message.type) {
          case SUBJECTS.RUN_REQUESTED: {
            await flush();
            const d = message.data;
            tickets.delete(d.run_id);
            await this.intake.open({ ...d, outputs: d.outputs?.map((o) => ({ case_id: o.case_id, output: o.output })) }, cause);
            await msg.ackConfirmed();
            break;
          }
          case SUBJECTS.OUTPUT_SUBMITTED: {
            const d = message.data;
            const ticket = await ticketOf(d.run_id);
            if (!ticket) {
              // The run.requested may still be on its way (another ingestion process): wait, then give up.
              if (msg.deliveryCount >= CONSUMERS.ingestion.deadLetterAfter) throw new IntakeError('UNKNOWN_RUN', `no run ${d.run_id}`, 'data.run_id');
              await flush();
              msg.nak(UNKNOWN_RUN_RETRY_MS);
              break;
            }
            if (this.intake.sealedIn(ticket)) throw new IntakeError('RUN_SEALED', `run ${d.run_id} is sealed`, 'data.run_id');
            if (!ticket.caseIds.has(d.case_id)) throw new IntakeError('UNKNOWN_CASE', `case ${d.case_id} is not in the run's suite version`, 'data.case_id');
            const run = pending.get(d.run_id) ?? { items: [], messages: [], cause };
            run.items.push({ case_id: d.case_id, output: d.output });
            run.messages.push(msg);
            pending.set(d.run_id, run);
            break;
          }
          case SUBJECTS.RUN_SEALED: {
            await flush();
            // Outputs published before the seal may still be in another ingestion process's hands.
            if (!(await this.bus.allAcknowledgedBefore(CONSUMERS.ingestion, msg.seq))) {
              msg.nak(SEAL_WAIT_RETRY_MS);
              break;
            }
            tickets.delete(message.data.run_id);
            await this.intake.seal(message.data.run_id, cause);
            await msg.ackConfirmed();
            break;
          }
          case SUBJECTS.SESSION_SIGNAL: {
            await flush();
            await this.monitor.admit(message.data, cause);
            await msg.ackConfirmed();
            break;
          }
          default:
            letters.push({ msg, letter: { subject, code: 'UNSUPPORTED_SUBJECT', reason: `no consumer for ${subject}`, message_id: cause.message_id, stream_seq: msg.seq } });
        }
      } catch (error) {
        // A transient failure (the bus did not take a forward): the batch is redelivered, never dead-lettered.
        if (!(error instanceof IntakeError) || error.transient) throw error;
        letters.push({
          msg,
          letter: { subject, code: error.code, reason: `${error.field ?? 'data'}: ${error.message}`, message_id: cause.message_id, stream_seq: msg.seq },
        });
      }
    }
    await flush();
  }

  private async deadLetter(entries: Array<{ letter: DeadLetter; msg: BusMessage }>): Promise<void> {
    if (entries.length === 0) return;
    await this.deadLetters.add(this.db, entries.map((e) => e.letter));
    for (const e of entries) {
      metrics.deadLettered.inc({ subject: e.letter.subject, code: e.letter.code });
      this.logger.event('warn', 'message dead-lettered', { subject: e.letter.subject, code: e.letter.code, message_id: e.letter.message_id ?? null, stream_seq: e.letter.stream_seq ?? null });
      e.msg.ack();
    }
  }
}

/**
 * Acknowledges the messages of one forward: the last one confirmed, the others plain. A confirmed ack per
 * output was one NATS request (reply inbox, timer, error objects) per message - the largest cost of the
 * streamed path after decoding. The server handles one connection's acks of one consumer in order, so once
 * the last is confirmed the ack floor is past all of them; an earlier ack that got lost would only make a
 * seal wait (it checks the real ack floor) and redeliver that output, which the worker recognises by its
 * keyed hash (at-least-once holds either way).
 */
async function ackAll(messages: readonly BusMessage[]): Promise<void> {
  if (messages.length === 0) return;
  for (let i = 0; i < messages.length - 1; i++) messages[i].ack();
  await messages[messages.length - 1].ackConfirmed();
}

function errorName(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${(error as { code?: string }).code ?? ''}` : 'error';
}
