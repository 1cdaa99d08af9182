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

describe('unit: the inbound consumer and batches of outputs (issue 28)', () => {
  const CANARY = 'CANARY-batch-output-9d2c';
  const batchOf = (seq: number, outputs: unknown[]): BusMessage => {
    const envelope = {
      schema: `${SUBJECTS.OUTPUTS_SUBMITTED}.v1`,
      type: SUBJECTS.OUTPUTS_SUBMITTED,
      version: 1,
      data: { run_id: 'r1', outputs },
      metadata: { message_id: `m${seq}`, occurred_at: '2026-01-01T00:00:00Z' },
    };
    return { ...runRequested(seq, []), subject: `t.${SUBJECTS.OUTPUTS_SUBMITTED}`, data: Buffer.from(JSON.stringify(envelope)) };
  };
  const setup = (forward: () => Promise<void> = async () => undefined) => {
    const letters: unknown[][] = [];
    const db = { query: jest.fn(async (_sql: string, params: unknown[]) => void letters.push(params)) } as unknown as DataSource;
    const ticket = { caseIds: new Set(['c1', 'c2', 'c3', 'c4']), state: {} };
    const intake = { forward: jest.fn(forward), ticket: jest.fn(async () => ticket), sealedIn: () => false } as unknown as RunIntakeService;
    const logged: unknown[] = [];
    const logger = { event: (...args: unknown[]) => void logged.push(args) } as unknown as JsonLogger;
    return { consumer: new InboundConsumer(intake, {} as MonitorService, db, { names } as unknown as MessageBus, logger), intake, letters, logged };
  };

  it('forwards the valid outputs of a batch and dead-letters each refused one alone, with its code, index and case id', async () => {
    const { consumer, intake, letters, logged } = setup();
    // index 1: invalid alone (decoder); index 3: not in the suite version (the run); the rest go on.
    const msg = batchOf(7, [{ case_id: 'c1', output: 'a' }, { case_id: 'c2', output: 42 }, { case_id: 'c3', output: 'c' }, { case_id: 'zz', output: CANARY }, { case_id: 'c4', output: 'd' }]);
    await consumer.handle([msg]);
    expect((intake.forward as jest.Mock).mock.calls[0][1]).toEqual([
      { case_id: 'c1', output: 'a' },
      { case_id: 'c3', output: 'c' },
      { case_id: 'c4', output: 'd' },
    ]);
    // One insert of two letters: codes, item indexes and case ids in columns, reasons without the output (D1).
    expect(letters).toHaveLength(1);
    const [subjects, codes, reasons, , seqs, indexes, caseIds] = letters[0] as string[][];
    expect(subjects).toEqual([SUBJECTS.OUTPUTS_SUBMITTED, SUBJECTS.OUTPUTS_SUBMITTED]);
    expect(codes).toEqual(['INVALID_PAYLOAD', 'UNKNOWN_CASE']);
    expect(indexes).toEqual([1, 3]);
    expect(caseIds).toEqual(['c2', 'zz']);
    expect(seqs).toEqual([7, 7]);
    expect(JSON.stringify([letters, logged])).not.toContain(CANARY);
    // Acknowledged once, after the letters and the forward.
    expect([(msg.ack as jest.Mock).mock.calls.length, (msg.ackConfirmed as jest.Mock).mock.calls.length]).toEqual([0, 1]);
  });

  it('a batch whose forward fails is handed back whole, letters written but the message not acknowledged (redelivery writes none twice)', async () => {
    const { consumer, letters } = setup(async () => {
      throw busUnavailable(new Error('timeout'));
    });
    const msg = batchOf(8, [{ case_id: 'c1', output: 'a' }, { case_id: 'zz', output: 'b' }]);
    await expect(consumer.handle([msg])).rejects.toMatchObject({ code: 'BUS_UNAVAILABLE' });
    expect(letters).toHaveLength(1);
    expect(msg.ack).not.toHaveBeenCalled();
    expect(msg.ackConfirmed).not.toHaveBeenCalled();
  });

  it('a batch of only refused outputs forwards nothing and is acknowledged once its letters are written', async () => {
    const { consumer, intake, letters } = setup();
    const msg = batchOf(9, [{ case_id: 'zz', output: 'a' }, { case_id: 'c1' }]);
    await consumer.handle([msg]);
    expect(intake.forward).not.toHaveBeenCalled();
    expect((letters[0] as string[][])[1]).toEqual(['UNKNOWN_CASE', 'INVALID_PAYLOAD']);
    expect(msg.ackConfirmed).toHaveBeenCalledTimes(1);
  });

  it('single outputs and batches of one run in a micro-batch are forwarded together, in stream order', async () => {
    const { consumer, intake } = setup();
    const single = { ...batchOf(10, []), subject: `t.${SUBJECTS.OUTPUT_SUBMITTED}`, data: Buffer.from(JSON.stringify({ schema: `${SUBJECTS.OUTPUT_SUBMITTED}.v1`, type: SUBJECTS.OUTPUT_SUBMITTED, version: 1, data: { run_id: 'r1', case_id: 'c1', output: 'a' }, metadata: { message_id: 'm10', occurred_at: '2026-01-01T00:00:00Z' } })) };
    await consumer.handle([single, batchOf(11, [{ case_id: 'c2', output: 'b' }, { case_id: 'c3', output: 'c' }])]);
    expect(intake.forward).toHaveBeenCalledTimes(1);
    expect((intake.forward as jest.Mock).mock.calls[0][1].map((o: { case_id: string }) => o.case_id)).toEqual(['c1', 'c2', 'c3']);
  });
});

describe('unit: the inbound consumer and projects (issue 30)', () => {
  const submitted = (seq: number, project?: string): BusMessage => {
    const envelope = {
      schema: `${SUBJECTS.OUTPUT_SUBMITTED}.v1`,
      type: SUBJECTS.OUTPUT_SUBMITTED,
      version: 1,
      data: { run_id: 'shared-run', case_id: 'c1', output: `out ${seq}` },
      metadata: { message_id: `m${seq}`, occurred_at: '2026-01-01T00:00:00Z', ...(project ? { project } : {}) },
    };
    return { ...runRequested(seq, []), subject: `t.${SUBJECTS.OUTPUT_SUBMITTED}`, data: Buffer.from(JSON.stringify(envelope)) };
  };
  /** The run `shared-run` is team-a's: the intake's ticket is null for any other project, as for no run. */
  const setup = (existing: readonly string[] = ['team-a']) => {
    const letters: unknown[][] = [];
    const asked: string[] = [];
    const db = {
      query: jest.fn(async (sql: string, params: unknown[]) => {
        if (sql.includes('FROM projects')) return (asked.push(params[0] as string), existing.includes(params[0] as string) ? [{ '?column?': 1 }] : []);
        letters.push(params);
        return [];
      }),
    } as unknown as DataSource;
    const ticket = { caseIds: new Set(['c1']), state: {} };
    const intake = {
      open: jest.fn(async () => undefined),
      forward: jest.fn(async () => undefined),
      ticket: jest.fn(async (_runId: string, project: string) => (project === 'team-a' ? ticket : null)),
      sealedIn: () => false,
    } as unknown as RunIntakeService;
    const consumer = new InboundConsumer(intake, {} as MonitorService, db, { names } as unknown as MessageBus, { event: () => undefined } as unknown as JsonLogger);
    return { consumer, intake, letters, asked };
  };

  it('a message naming a project that does not exist is dead-lettered PROJECT_NOT_FOUND, naming no value; the intake is never asked', async () => {
    const { consumer, intake, letters } = setup();
    const envelope = JSON.parse(runRequested(1, []).data.toString());
    const msg = { ...runRequested(1, []), data: Buffer.from(JSON.stringify({ ...envelope, metadata: { ...envelope.metadata, project: 'ghost-team' } })) };
    await consumer.handle([msg]);
    expect(intake.open).not.toHaveBeenCalled();
    expect(letters).toHaveLength(1);
    const [, codes, reasons] = letters[0] as string[][];
    expect(codes).toEqual(['PROJECT_NOT_FOUND']);
    expect(reasons).toEqual(['metadata.project: no such project']);
    expect(msg.ack).toHaveBeenCalled();
  });

  it("the same run id from two projects in one micro-batch: each asks its own project's ticket; the foreign output waits as for an unknown run", async () => {
    const { consumer, intake, letters, asked } = setup(['team-a', 'team-b']);
    const own = submitted(1, 'team-a');
    const foreign = submitted(2, 'team-b');
    await consumer.handle([own, foreign]);
    expect(asked.sort()).toEqual(['team-a', 'team-b']);
    expect((intake.ticket as jest.Mock).mock.calls.map((c) => c[1]).sort()).toEqual(['team-a', 'team-b']);
    // Only team-a's output reaches team-a's run; team-b's is handed back, as an output whose run is not open yet.
    expect(intake.forward).toHaveBeenCalledTimes(1);
    expect((intake.forward as jest.Mock).mock.calls[0][1]).toEqual([{ case_id: 'c1', output: 'out 1' }]);
    expect(foreign.nak).toHaveBeenCalled();
    expect(letters).toEqual([]);
  });

  it("past its last delivery, an output for another project's run is dead-lettered UNKNOWN_RUN, worded as for a run that does not exist", async () => {
    const { consumer, letters } = setup(['team-a', 'team-b']);
    await consumer.handle([{ ...submitted(3, 'team-b'), deliveryCount: 10 }]);
    const [, codes, reasons] = letters[0] as string[][];
    expect(codes).toEqual(['UNKNOWN_RUN']);
    expect(reasons).toEqual(['data.run_id: no run shared-run']);
  });
});
