import type { BusMessage, MessageBus } from '@evals/bus';
import { INBOUND_SUBJECTS, MESSAGE_DEFINITIONS, type MessageDefinition } from '@evals/contracts';
import type { JsonLogger } from '@evals/platform';
import fc from 'fast-check';
import type { DataSource } from 'typeorm';
import { fuzzSeed, hostileBusMessage, OUTPUT_CANARY, Tally } from '../../../test/support/hostile-inputs';
import { InboundConsumer } from './inbound.consumer';
import type { MonitorService } from './monitor.service';
import type { RunIntakeService } from './run-intake.service';

/**
 * Issue 18 part 3, the consumer's edge: batches of generated hostile messages on the four inbound subjects
 * go through InboundConsumer.handle (the code between the stream and the intake). Every message is settled
 * exactly once - handled, retried later (nak: a run not opened yet) or dead-lettered with a code and
 * acknowledged - the batch never throws, and no dead-letter reason carries an output (D1). The intake behind
 * it accepts everything: what is tested is the edge. Replay with FUZZ_SEED=<the printed seed>.
 */
const INBOUND = (MESSAGE_DEFINITIONS as unknown as readonly MessageDefinition[]).filter((d) =>
  (INBOUND_SUBJECTS as readonly string[]).includes(d.type),
);
const BATCHES = 60;
const BATCH = 50;
const names = { streamPrefix: 'H_', subjectPrefix: 'h' };

describe('hostile bus messages at the inbound consumer (issue 18, R7, D1)', () => {
  it(`${BATCHES * BATCH} messages in batches of ${BATCH}: each handled, retried or dead-lettered with a code`, async () => {
    const seed = fuzzSeed();
    console.log(`hostile inbound batches: seed ${seed} (replay: FUZZ_SEED=${seed})`);
    const tally = new Tally();
    const letters: Array<{ code: string; reason: string }> = [];
    const db = {
      query: async (_sql: string, params: unknown[]) => {
        const [, codes, reasons] = params as [string[], string[], string[]];
        codes.forEach((code, i) => letters.push({ code, reason: reasons[i]! }));
      },
    } as unknown as DataSource;
    const intake = {
      open: async () => ({ created: true, ticket: null }),
      forward: async () => undefined,
      seal: async () => undefined,
      ticket: async () => null,
      sealedIn: () => false,
    } as unknown as RunIntakeService;
    const monitor = { admit: async () => undefined } as unknown as MonitorService;
    const bus = { names, allAcknowledgedBefore: async () => true } as unknown as MessageBus;
    const logger = { event: () => undefined } as unknown as JsonLogger;
    const consumer = new InboundConsumer(intake, monitor, db, bus, logger);

    let seq = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(hostileBusMessage(INBOUND), { minLength: BATCH, maxLength: BATCH }), async (batch) => {
        const settled = new Map<number, string[]>();
        const settle = (s: number, how: string) => settled.set(s, [...(settled.get(s) ?? []), how]);
        const messages: BusMessage[] = batch.map((m) => {
          const s = ++seq;
          return {
            subject: `${names.subjectPrefix}.${m.subject}`,
            data: m.bytes,
            seq: s,
            deliveryCount: 1,
            messageId: `m${s}`,
            ack: () => settle(s, 'ack'),
            ackConfirmed: async () => void settle(s, 'ack'),
            nak: () => settle(s, 'nak'),
            working: () => undefined,
          };
        });
        const lettersBefore = letters.length;
        try {
          await consumer.handle(messages);
        } catch (error) {
          tally.crashes++;
          throw error;
        }
        tally.tried += messages.length;
        for (const m of messages) expect({ seq: m.seq, settled: settled.get(m.seq) }).toEqual({ seq: m.seq, settled: [expect.stringMatching(/^(ack|nak)$/)] });
        const batchLetters = letters.slice(lettersBefore);
        for (const l of batchLetters) {
          expect(l.code).toMatch(/^[A-Z][A-Z0-9_]+$/);
          expect(l.reason).not.toContain(OUTPUT_CANARY);
          tally.refuse(l.code);
        }
        tally.accepted += messages.length - batchLetters.length;
      }),
      { seed, numRuns: BATCHES },
    );
    console.log(`hostile inbound batches: ${tally.summary()}`);
    expect(tally.tried).toBe(BATCHES * BATCH);
    expect(tally.refusedTotal).toBeGreaterThan(tally.tried / 2);
  }, 120_000);
});
