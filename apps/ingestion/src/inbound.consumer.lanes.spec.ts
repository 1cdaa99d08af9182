import type { BusMessage, MessageBus } from '@evals/bus';
import { SESSION_SIGNAL_V1_EXAMPLE, SUBJECTS } from '@evals/contracts';
import type { JsonLogger } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { InboundConsumer } from './inbound.consumer';
import { IntakeError } from './intake-error';
import type { MonitorService } from './monitor.service';
import type { RunIntakeService, RunTicket } from './run-intake.service';

const names = { streamPrefix: 'L_', subjectPrefix: 'l' };

type Log = string[];

function message(seq: number, type: string, data: Record<string, unknown>, log: Log): BusMessage {
  const envelope = { schema: `${type}.v1`, type, version: 1, data, metadata: { message_id: `m${seq}`, occurred_at: '2026-01-01T00:00:00Z' } };
  return {
    subject: `${names.subjectPrefix}.${type}`,
    data: Buffer.from(JSON.stringify(envelope)),
    seq,
    deliveryCount: 1,
    messageId: `m${seq}`,
    ack: jest.fn(() => void log.push(`ack ${seq}`)),
    ackConfirmed: jest.fn(async () => void log.push(`ack ${seq}`)),
    nak: jest.fn(() => void log.push(`nak ${seq}`)),
    working: jest.fn(),
  };
}

const requested = (seq: number, run: string, log: Log) =>
  message(seq, SUBJECTS.RUN_REQUESTED, { run_id: run, suite_key: 's', subject_kind: 'agent', subject_id: 'bot', source: 'ci' }, log);
const output = (seq: number, run: string, log: Log) => message(seq, SUBJECTS.OUTPUT_SUBMITTED, { run_id: run, case_id: `c${seq}`, output: `out ${seq}` }, log);
const sealed = (seq: number, run: string, log: Log) => message(seq, SUBJECTS.RUN_SEALED, { run_id: run }, log);

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** An intake that records what it is asked, per run, and lets a test hold a call until another started. */
function fakeIntake(log: Log, hold: Partial<Record<string, Promise<void>>> = {}, started: Partial<Record<string, () => void>> = {}) {
  const opened = new Set<string>();
  const step = async (what: string) => {
    log.push(`${what} start`);
    started[what]?.();
    await hold[what];
    log.push(`${what} done`);
  };
  const intake = {
    open: jest.fn(async (cmd: { run_id: string }) => {
      await step(`open ${cmd.run_id}`);
      opened.add(cmd.run_id);
      return { created: true };
    }),
    ticket: jest.fn(async (runId: string) => (opened.has(runId) ? ({ caseIds: { has: () => true }, state: {} } as unknown as RunTicket) : null)),
    sealedIn: () => false,
    forward: jest.fn(async (runId: string, items: unknown[]) => step(`forward ${runId} ${items.length}`)),
    seal: jest.fn(async (runId: string) => step(`seal ${runId}`)),
  };
  return intake;
}

function consumer(intake: ReturnType<typeof fakeIntake>, floor: (seq: number) => Promise<boolean>, letters: unknown[][] = []): InboundConsumer {
  const db = { query: jest.fn(async (_sql: string, params: unknown[]) => void letters.push(params)) } as unknown as DataSource;
  const bus = { names, allAcknowledgedBefore: jest.fn(async (_c: unknown, seq: number) => floor(seq)) } as unknown as MessageBus;
  return new InboundConsumer(intake as unknown as RunIntakeService, {} as MonitorService, db, bus, { event: () => undefined } as unknown as JsonLogger);
}

const before = (log: Log, a: string, b: string) => {
  expect(log).toContain(a);
  expect(log).toContain(b);
  return log.indexOf(a) < log.indexOf(b);
};

describe('unit: the inbound consumer handles the runs of a micro-batch concurrently, each in order (issue 15)', () => {
  it('opens a second run while the first one\'s open is still in flight, and keeps each run\'s open, outputs, seal in order', async () => {
    const log: Log = [];
    // Run a's open completes only once run b's open has started: handled one after the other, this batch
    // would never finish (the test times out); concurrently, both complete.
    const bStarted = deferred();
    const intake = fakeIntake(log, { 'open a': bStarted.promise }, { 'open b': bStarted.resolve });
    const batch = [requested(1, 'a', log), requested(2, 'b', log), output(3, 'a', log), output(4, 'b', log), output(5, 'a', log), sealed(6, 'a', log), sealed(7, 'b', log)];
    await consumer(intake, async () => true).handle(batch);

    expect(before(log, 'open b start', 'open a done')).toBe(true);
    // Each run: open, then its outputs forwarded together (and acknowledged), then the seal.
    for (const [run, outputs, open, seal] of [['a', 2, 1, 6], ['b', 1, 2, 7]] as const) {
      expect(before(log, `open ${run} done`, `ack ${open}`)).toBe(true);
      expect(before(log, `ack ${open}`, `forward ${run} ${outputs} start`)).toBe(true);
      expect(before(log, `forward ${run} ${outputs} done`, `seal ${run} start`)).toBe(true);
      expect(before(log, `seal ${run} done`, `ack ${seal}`)).toBe(true);
    }
    expect(intake.forward).toHaveBeenCalledTimes(2);
    // Every message acknowledged exactly once, none handed back.
    for (const m of batch) expect((m.ack as jest.Mock).mock.calls.length + (m.ackConfirmed as jest.Mock).mock.calls.length).toBe(1);
    expect(log.filter((x) => x.startsWith('nak'))).toEqual([]);
  }, 10_000);

  it('seals a run while another run\'s earlier outputs are still being forwarded (no gap in the batch: they are not its outputs)', async () => {
    const log: Log = [];
    // Run b's forward completes only once run a's seal has started: a seal that waited for every earlier
    // message of the batch (or a serial consumer) would never finish.
    const aSealing = deferred();
    const intake = fakeIntake(log, { 'forward b 1': aSealing.promise }, { 'seal a': aSealing.resolve });
    const asked: number[] = [];
    const batch = [requested(1, 'b', log), output(2, 'b', log), requested(3, 'a', log), output(4, 'a', log), sealed(5, 'a', log)];
    await consumer(intake, async (seq) => {
      asked.push(seq);
      return true;
    }).handle(batch);
    expect(before(log, 'seal a start', 'forward b 1 done')).toBe(true);
    expect(before(log, 'forward a 1 done', 'seal a start')).toBe(true);
    // The floor is asked below the batch: everything from seq 1 to the seal is in this batch.
    expect(asked).toEqual([1]);
  }, 10_000);

  it('below a gap in the batch (a message another process holds), a seal waits for the batch\'s earlier messages, then asks the floor at the gap', async () => {
    const log: Log = [];
    const release = deferred();
    const intake = fakeIntake(log, { 'forward b 1': release.promise });
    const asked: number[] = [];
    // Seq 3 is not in this batch.
    const batch = [requested(1, 'b', log), output(2, 'b', log), requested(4, 'a', log), output(5, 'a', log), sealed(6, 'a', log)];
    const handled = consumer(intake, async (seq) => {
      asked.push(seq);
      log.push(`floor ${seq}`);
      return true;
    }).handle(batch);
    await new Promise((r) => setTimeout(r, 50));
    expect(asked).toEqual([]);
    expect(log).not.toContain('seal a start');
    release.resolve();
    await handled;
    expect(before(log, 'ack 2', 'floor 4')).toBe(true);
    expect(before(log, 'floor 4', 'seal a start')).toBe(true);
    expect(asked).toEqual([4]);
  });

  it('a seal whose floor says no is handed back, not sealed', async () => {
    const log: Log = [];
    const intake = fakeIntake(log);
    const batch = [requested(1, 'a', log), output(2, 'a', log), sealed(3, 'a', log)];
    await consumer(intake, async () => false).handle(batch);
    expect(log).toContain('ack 2');
    expect(log).toContain('nak 3');
    expect(intake.seal).not.toHaveBeenCalled();
  });

  it('one consumer-info request answers the seals of several runs that are ready together', async () => {
    const log: Log = [];
    const intake = fakeIntake(log);
    const asked: number[] = [];
    const runs = ['a', 'b', 'c', 'd', 'e'];
    let seq = 0;
    const batch = [...runs.map((r) => requested(++seq, r, log)), ...runs.map((r) => sealed(++seq, r, log))];
    await consumer(intake, async (s) => {
      asked.push(s);
      return true;
    }).handle(batch);
    expect(intake.seal).toHaveBeenCalledTimes(runs.length);
    expect(asked).toEqual([1]);
  });

  it('a seal after a gap, with a batch message below it handed back (run not opened yet), is handed back too, not sealed', async () => {
    const log: Log = [];
    const intake = fakeIntake(log);
    const batch = [output(1, 'x', log), requested(3, 'a', log), sealed(4, 'a', log)];
    const floor = jest.fn(async () => true);
    await consumer(intake, floor).handle(batch);
    expect(log).toContain('nak 1');
    expect(log).toContain('nak 4');
    expect(intake.seal).not.toHaveBeenCalled();
    expect(floor).not.toHaveBeenCalled();
  });

  it('a transient failure in one run fails the batch only after the other runs finished; the failed run goes no further', async () => {
    const log: Log = [];
    const intake = fakeIntake(log);
    intake.forward.mockImplementation(async (runId: string) => {
      if (runId === 'a') throw new Error('bus timeout');
      log.push(`forward ${runId} done`);
    });
    const batch = [requested(1, 'a', log), requested(2, 'b', log), output(3, 'a', log), output(4, 'b', log), sealed(5, 'a', log), sealed(6, 'b', log)];
    await expect(consumer(intake, async () => true).handle(batch)).rejects.toThrow('bus timeout');
    // Run a: its output is not acknowledged and its seal not handled (the batch is redelivered).
    expect(batch[2].ack).not.toHaveBeenCalled();
    expect(batch[2].ackConfirmed).not.toHaveBeenCalled();
    expect(batch[4].ackConfirmed).not.toHaveBeenCalled();
    expect(intake.seal).not.toHaveBeenCalledWith('a', expect.anything());
    // Run b is complete in itself: forwarded, acknowledged, sealed.
    expect(log).toContain('forward b done');
    expect(before(log, 'ack 4', 'seal b start')).toBe(true);
    expect(log).toContain('ack 6');
  });

  it('session signals wait as barriers: a seal after one waits for it to be handled', async () => {
    const log: Log = [];
    const intake = fakeIntake(log);
    const release = deferred();
    const signal = message(2, SUBJECTS.SESSION_SIGNAL, { ...SESSION_SIGNAL_V1_EXAMPLE }, log);
    const batch = [requested(1, 'a', log), signal, sealed(3, 'a', log)];
    const monitor = {
      admit: jest.fn(async () => {
        log.push('admit start');
        await release.promise;
        log.push('admit done');
      }),
    };
    const asked: number[] = [];
    const db = { query: jest.fn(async () => undefined) } as unknown as DataSource;
    const bus = { names, allAcknowledgedBefore: async (_c: unknown, seq: number) => (asked.push(seq), true) } as unknown as MessageBus;
    const c = new InboundConsumer(intake as unknown as RunIntakeService, monitor as unknown as MonitorService, db, bus, { event: () => undefined } as unknown as JsonLogger);
    const handled = c.handle(batch);
    await new Promise((r) => setTimeout(r, 30));
    release.resolve();
    await handled;
    expect(monitor.admit).toHaveBeenCalledTimes(1);
    expect(asked).toEqual([3]);
    expect(before(log, 'admit done', 'seal a start')).toBe(true);
    expect(before(log, 'ack 2', 'seal a start')).toBe(true);
  });

  it('dead-letters an output the run model refuses at forward time (sealed by another process) with its code', async () => {
    const log: Log = [];
    const letters: unknown[][] = [];
    const intake = fakeIntake(log);
    intake.forward.mockRejectedValue(new IntakeError('RUN_SEALED', 'run a is sealed', 'run_id'));
    const batch = [requested(1, 'a', log), output(2, 'a', log), output(3, 'a', log)];
    await consumer(intake, async () => true, letters).handle(batch);
    expect(letters).toHaveLength(1);
    expect(letters[0][1]).toEqual(['RUN_SEALED', 'RUN_SEALED']);
    expect(batch[1].ack).toHaveBeenCalled();
    expect(batch[2].ack).toHaveBeenCalled();
  });
});

describe('unit: a micro-batch delivered out of stream order (redeliveries after a failure)', () => {
  /** Handles the batch, or answers 'stuck' when it has not ended within two seconds. */
  async function within(handled: Promise<void>): Promise<'done' | 'stuck'> {
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([handled.then(() => 'done' as const), new Promise<'stuck'>((r) => (timer = setTimeout(() => r('stuck'), 2_000)))]);
    clearTimeout(timer);
    return outcome;
  }

  it('forwards a run\'s redelivered earlier outputs before its seal (in delivery order they came after it, and would be refused as sealed)', async () => {
    const log: Log = [];
    const intake = fakeIntake(log);
    // After a database outage, run a's seal (nak'ed for 100 ms) came back before outputs 2 and 3 (nak'ed
    // for a second).
    const batch = [requested(1, 'a', log), sealed(4, 'a', log), output(2, 'a', log), output(3, 'a', log)];
    expect(await within(consumer(intake, async () => true).handle(batch))).toBe('done');
    expect(before(log, 'forward a 2 done', 'seal a start')).toBe(true);
    for (const m of batch) expect((m.ack as jest.Mock).mock.calls.length + (m.ackConfirmed as jest.Mock).mock.calls.length).toBe(1);
  }, 10_000);

  it('ends a batch whose seal overtook an earlier output of its run across a gap (the seal waited for it forever)', async () => {
    const log: Log = [];
    const intake = fakeIntake(log);
    // Seq 4 is not in the batch, so the seal at 5 waits for the batch's messages below it to settle - and
    // in delivery order output 3 waited behind the seal in run a's lane (the PostgreSQL-restart fault test).
    const batch = [requested(1, 'a', log), sealed(5, 'a', log), output(3, 'a', log)];
    expect(await within(consumer(intake, async () => true).handle(batch))).toBe('done');
    expect(before(log, 'forward a 1 done', 'seal a start')).toBe(true);
  }, 10_000);
});
