import type { BusMessage, MessageBus } from '@evals/bus';
import { SUBJECTS } from '@evals/contracts';
import type { JsonLogger } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { InboundConsumer } from './inbound.consumer';
import { busUnavailable, IntakeError } from './intake-error';
import type { MonitorService } from './monitor.service';
import type { RunIntakeService } from './run-intake.service';

const names = { streamPrefix: 'T_', subjectPrefix: 't' };

function runRequested(seq: number, outputs: unknown[]): BusMessage {
  const envelope = {
    schema: `${SUBJECTS.RUN_REQUESTED}.v1`,
    type: SUBJECTS.RUN_REQUESTED,
    version: 1,
    data: { run_id: `r${seq}`, suite_key: 's', subject_kind: 'agent', subject_id: 'bot', source: 'ci', outputs },
    metadata: { message_id: `m${seq}`, occurred_at: '2026-01-01T00:00:00Z' },
  };
  return {
    subject: `t.${SUBJECTS.RUN_REQUESTED}`,
    data: Buffer.from(JSON.stringify(envelope)),
    seq,
    deliveryCount: 1,
    messageId: `m${seq}`,
    ack: jest.fn(),
    ackConfirmed: jest.fn(async () => undefined),
    nak: jest.fn(),
    working: jest.fn(),
  };
}

function consumerWith(open: () => Promise<never>): { consumer: InboundConsumer; deadLetters: unknown[][] } {
  const deadLetters: unknown[][] = [];
  const db = { query: jest.fn(async (_sql: string, params: unknown[]) => void deadLetters.push(params)) } as unknown as DataSource;
  const intake = { open: jest.fn(open), forward: jest.fn(), ticket: jest.fn(async () => null) } as unknown as RunIntakeService;
  const bus = { names } as unknown as MessageBus;
  const logger = { event: () => undefined } as unknown as JsonLogger;
  return { consumer: new InboundConsumer(intake, {} as MonitorService, db, bus, logger), deadLetters };
}

describe('unit: the inbound consumer and the run model\'s refusals (R7)', () => {
  it('dead-letters a run.requested the model refuses (EMPTY_RUN) with its code, and acknowledges it', async () => {
    const { consumer, deadLetters } = consumerWith(async () => {
      throw new IntakeError('EMPTY_RUN', 'the outputs list is empty: a run needs at least one output', 'outputs');
    });
    const msg = runRequested(1, []);
    await consumer.handle([msg]);
    expect(deadLetters).toHaveLength(1);
    expect(deadLetters[0][1]).toEqual(['EMPTY_RUN']);
    expect(msg.ack).toHaveBeenCalled();
  });

  it('a bus that did not take the forward (BUS_UNAVAILABLE) fails the batch, to be redelivered: never a dead letter', async () => {
    const { consumer, deadLetters } = consumerWith(async () => {
      throw busUnavailable(new Error('timeout'));
    });
    const msg = runRequested(2, [{ case_id: 'c1', output: 'x' }]);
    await expect(consumer.handle([msg])).rejects.toMatchObject({ code: 'BUS_UNAVAILABLE' });
    expect(deadLetters).toHaveLength(0);
    expect(msg.ack).not.toHaveBeenCalled();
  });

  it('forwards a micro-batch of outputs of one run once, and confirms only its last ack (the earlier ones plain, in order)', async () => {
    const submitted = (seq: number): BusMessage => {
      const envelope = {
        schema: `${SUBJECTS.OUTPUT_SUBMITTED}.v1`,
        type: SUBJECTS.OUTPUT_SUBMITTED,
        version: 1,
        data: { run_id: 'r1', case_id: `c${seq}`, output: `out ${seq}` },
        metadata: { message_id: `m${seq}`, occurred_at: '2026-01-01T00:00:00Z' },
      };
      return { ...runRequested(seq, []), subject: `t.${SUBJECTS.OUTPUT_SUBMITTED}`, data: Buffer.from(JSON.stringify(envelope)) };
    };
    const ticket = { caseIds: new Set(['c1', 'c2', 'c3']), state: {} };
    const intake = { forward: jest.fn(async () => undefined), ticket: jest.fn(async () => ticket), sealedIn: () => false } as unknown as RunIntakeService;
    const consumer = new InboundConsumer(intake, {} as MonitorService, {} as DataSource, { names } as unknown as MessageBus, { event: () => undefined } as unknown as JsonLogger);
    const batch = [submitted(1), submitted(2), submitted(3)];
    await consumer.handle(batch);
    expect(intake.forward).toHaveBeenCalledTimes(1);
    expect((intake.forward as jest.Mock).mock.calls[0][1]).toEqual([1, 2, 3].map((i) => ({ case_id: `c${i}`, output: `out ${i}` })));
    expect(intake.ticket).toHaveBeenCalledTimes(1);
    expect(batch.map((m) => [(m.ack as jest.Mock).mock.calls.length, (m.ackConfirmed as jest.Mock).mock.calls.length])).toEqual([[1, 0], [1, 0], [0, 1]]);
  });
});
