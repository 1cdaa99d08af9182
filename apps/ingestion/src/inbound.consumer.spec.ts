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
});
