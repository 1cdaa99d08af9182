import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { testBusNames } from '../../../test/support/isolation';
import { InProcessBus, type InProcessBusOptions } from './in-process.bus';
import { messageBusContract, waitFor } from './message-bus.contract';
import type { BusMessage, ConsumeOptions, Subscription } from './message-bus.port';
import { CONSUMERS, subjectOf, type BusNames, type ConsumerSpec } from './topology';

// Touches the filesystem (journal directories under the OS temp dir), hence an integration spec.

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'evals-inproc-bus-'));
}

function uniqueNames(): BusNames {
  const t = testBusNames('ipb');
  return { streamPrefix: `IPB_${t.suffix}_`, subjectPrefix: `ipb_${t.suffix}` };
}

/** Every file of the directory, as raw text, for what must (not) be on disk. */
function dirText(dir: string): string {
  return fs
    .readdirSync(dir)
    .map((f) => fs.readFileSync(path.join(dir, f)).toString('latin1'))
    .join('\n');
}

const onDisk = (dir: string, payload: string) => {
  const all = dirText(dir);
  return all.includes(payload) || all.includes(Buffer.from(payload).toString('base64'));
};

messageBusContract('in-process, journalled', async () => {
  const dir = tempDir();
  const bus = await InProcessBus.open(uniqueNames(), { dir });
  return {
    bus,
    async teardown() {
      await bus.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
});

messageBusContract('in-process, memory only', async () => {
  const bus = await InProcessBus.open(uniqueNames());
  return { bus, teardown: () => bus.close() };
});

describe('integration: in-process bus durability and retention', () => {
  const dirs: string[] = [];
  const buses: InProcessBus[] = [];
  const subscriptions: Subscription[] = [];

  const newDir = () => {
    const dir = tempDir();
    dirs.push(dir);
    return dir;
  };
  const open = async (names: BusNames, options: InProcessBusOptions = {}) => {
    const bus = await InProcessBus.open(names, options);
    buses.push(bus);
    await bus.ensureTopology();
    return bus;
  };
  const consume = async (bus: InProcessBus, consumer: ConsumerSpec, options: ConsumeOptions) => {
    const subscription = await bus.consume(consumer, options);
    subscriptions.push(subscription);
    return subscription;
  };
  /** Collects (and acknowledges, unless told otherwise) what a durable delivers. */
  const collect = async (bus: InProcessBus, consumer: ConsumerSpec, keep: (m: BusMessage) => boolean = () => true) => {
    const seen: BusMessage[] = [];
    await consume(bus, consumer, {
      maxBatch: 50,
      handler: async (batch) => {
        for (const m of batch) {
          seen.push(m);
          if (keep(m)) await m.ackConfirmed();
        }
      },
    });
    return seen;
  };

  afterEach(async () => {
    await Promise.all(subscriptions.splice(0).map((s) => s.stop()));
    await Promise.all(buses.splice(0).map((b) => b.close()));
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('after a restart delivers exactly the unacknowledged messages, and still knows the ids', async () => {
    const dir = newDir();
    const names = uniqueNames();
    const first = await open(names, { dir });
    const published = [];
    for (let i = 0; i < 10; i++) published.push(await first.publish(subjectOf(names, 'evals.work.score'), `w${i}`, `w-${i}`));
    const seen = await collect(first, CONSUMERS.scoringWorker, (m) => m.seq % 2 === 0);
    await waitFor(() => seen.length === 10, 'all ten delivered');
    expect(await first.pending(CONSUMERS.scoringWorker)).toBe(5);
    await first.close();

    const second = await open(names, { dir });
    expect(await second.pending(CONSUMERS.scoringWorker)).toBe(5);
    const again = await collect(second, CONSUMERS.scoringWorker);
    await waitFor(async () => (await second.pending(CONSUMERS.scoringWorker)) === 0, 'the five redelivered and acknowledged');
    expect(again.map((m) => m.messageId)).toEqual(['w-0', 'w-2', 'w-4', 'w-6', 'w-8']);
    expect(again.map((m) => m.seq).every((seq) => seq % 2 === 1)).toBe(true);
    // Ids of acknowledged (deleted) and of redelivered messages are both still within the window.
    expect(await second.publish(subjectOf(names, 'evals.work.score'), 'dup', 'w-1')).toEqual({ seq: published[1].seq, duplicate: true });
    expect(await second.publish(subjectOf(names, 'evals.work.score'), 'dup', 'w-0')).toEqual({ seq: published[0].seq, duplicate: true });
    expect(await second.publish(subjectOf(names, 'evals.work.score'), 'new', 'w-new')).toEqual({ seq: 11, duplicate: false });
    await waitFor(() => again.length === 6, 'the new one delivered');
    await second.close();

    const third = await open(names, { dir });
    expect(await third.pending(CONSUMERS.scoringWorker)).toBe(0);
    expect(third.streamInfo('EVALS_WORK')).toMatchObject({ messages: 0, lastSeq: 11 });
    expect(await third.publish(subjectOf(names, 'evals.work.score'), 'next', 'w-next')).toEqual({ seq: 12, duplicate: false });
  }, 30_000);

  it('loses no published message when the process is killed (SIGKILL), and takes over its lock', async () => {
    const dir = newDir();
    const names = uniqueNames();
    const child = spawn(process.execPath, ['-r', '@swc-node/register', path.join(__dirname, 'in-process.bus.probe.ts'), dir, names.streamPrefix, names.subjectPrefix], {
      cwd: path.resolve(__dirname, '../../..'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const work = new Set<string>();
    const inbound = new Set<string>();
    const confirmed = new Set<string>();
    let stderr = '';
    let pid = 0;
    let rest = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.stdout.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop()!;
      for (const line of lines) {
        const fact = JSON.parse(line) as { ready?: number; work?: string[]; inbound?: string[]; confirmed?: string };
        if (fact.ready) pid = fact.ready;
        for (const id of fact.work ?? []) work.add(id);
        for (const id of fact.inbound ?? []) inbound.add(id);
        if (fact.confirmed) confirmed.add(fact.confirmed);
      }
    });
    const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));
    try {
      await waitFor(() => work.size >= 400 && confirmed.size >= 50, `the probe at work (stderr: ${stderr})`, 60_000);
    } finally {
      child.kill('SIGKILL');
    }
    expect(await exited).toBe('SIGKILL');
    expect(fs.readFileSync(path.join(dir, 'LOCK'), 'utf8').trim()).toBe(String(pid));

    const bus = await open(names, { dir });
    expect(fs.readFileSync(path.join(dir, 'LOCK'), 'utf8').trim()).toBe(String(process.pid));
    const workSeen = await collect(bus, CONSUMERS.scoringWorker);
    const inboundSeen = await collect(bus, CONSUMERS.ingestion);
    await waitFor(
      async () => (await bus.pending(CONSUMERS.scoringWorker)) === 0 && (await bus.pending(CONSUMERS.ingestion)) === 0,
      'everything redelivered after the crash',
    );
    const workIds = new Set(workSeen.map((m) => m.messageId));
    const inboundIds = new Set(inboundSeen.map((m) => m.messageId));
    expect([...work].filter((id) => !workIds.has(id))).toEqual([]);
    // A confirmed acknowledgement is never undone; every other inbound message the probe saw published is back
    // but for at most the one whose acknowledgement was written and not yet reported when the kill came.
    expect([...confirmed].filter((id) => inboundIds.has(id))).toEqual([]);
    expect([...inbound].filter((id) => !inboundIds.has(id) && !confirmed.has(id)).length).toBeLessThanOrEqual(1);
    expect(workSeen.length).toBe(workIds.size);
  }, 90_000);

  it('leaves no acknowledged work-queue payload on disk after compaction (D1)', async () => {
    const dir = newDir();
    const names = uniqueNames();
    const gone = `CANARY-acked-${names.subjectPrefix}`;
    const kept = `CANARY-kept-${names.subjectPrefix}`;
    const bus = await open(names, { dir });
    await bus.publish(subjectOf(names, 'evals.output.submitted'), gone, 'c-1');
    await bus.publish(subjectOf(names, 'evals.work.score'), kept, 'c-2');
    const seen = await collect(bus, CONSUMERS.ingestion);
    await waitFor(async () => seen.length === 1 && (await bus.pending(CONSUMERS.ingestion)) === 0, 'the canary acknowledged');
    // Written before it was acknowledged, so the journal holds it until compacted.
    expect(onDisk(dir, gone)).toBe(true);
    await bus.close();
    expect(onDisk(dir, gone)).toBe(false);
    expect(onDisk(dir, kept)).toBe(true);

    const reopened = await open(names, { dir });
    expect(reopened.streamInfo('EVALS_INBOUND').messages).toBe(0);
    expect(await reopened.pending(CONSUMERS.scoringWorker)).toBe(1);
    expect(onDisk(dir, gone)).toBe(false);
  }, 30_000);

  it('compacts while running once dead records dominate', async () => {
    const dir = newDir();
    const names = uniqueNames();
    const canary = `CANARY-running-${names.subjectPrefix}`;
    const bus = await open(names, { dir, compactAfterDeadBytes: 16 * 1024 });
    const compactionsAtOpen = bus.streamInfo('EVALS_INBOUND').compactions;
    await bus.publish(subjectOf(names, 'evals.output.submitted'), canary, 'canary');
    const seen = await collect(bus, CONSUMERS.ingestion);
    await waitFor(async () => (await bus.pending(CONSUMERS.ingestion)) === 0, 'the canary acknowledged');
    const filler = 'x'.repeat(1024);
    for (let i = 0; i < 100; i++) await bus.publish(subjectOf(names, 'evals.output.submitted'), filler, `f-${i}`);
    await waitFor(async () => seen.length === 101 && (await bus.pending(CONSUMERS.ingestion)) === 0, 'the filler acknowledged');
    await waitFor(() => bus.streamInfo('EVALS_INBOUND').compactions > compactionsAtOpen, 'a compaction while running');
    expect(onDisk(dir, canary)).toBe(false);
    expect(bus.streamInfo('EVALS_INBOUND').journalBytes).toBeLessThan(50 * 1024);
  }, 30_000);

  it('refuses a second bus on the same directory, and takes over the lock of a dead process', async () => {
    const dir = newDir();
    const names = uniqueNames();
    const bus = await open(names, { dir });
    await expect(InProcessBus.open(names, { dir })).rejects.toThrow(new RegExp(`already in use by process ${process.pid}`));
    await bus.close();
    expect(fs.existsSync(path.join(dir, 'LOCK'))).toBe(false);

    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    fs.writeFileSync(path.join(dir, 'LOCK'), `${dead}\n`);
    const next = await open(names, { dir });
    expect(fs.readFileSync(path.join(dir, 'LOCK'), 'utf8').trim()).toBe(String(process.pid));
    expect(next.healthy).toBe(true);
  });

  it('bounds a limits stream nobody consumes, and keeps what a durable still owes', async () => {
    const dir = newDir();
    const names = uniqueNames();
    const bus = await open(names, { dir, maxAckedPerStream: 5 });
    for (let i = 0; i < 12; i++) await bus.publish(subjectOf(names, 'evals.result.recorded'), `r${i}`, `r-${i}`);
    expect(bus.streamInfo('EVALS_OUTBOUND')).toMatchObject({ messages: 5, firstSeq: 8, lastSeq: 12 });

    for (let i = 0; i < 8; i++) await bus.publish(subjectOf(names, 'evals.event.run.scored'), `e${i}`, `e-${i}`);
    const readModel = await collect(bus, CONSUMERS.readModel);
    await waitFor(async () => readModel.length === 8 && (await bus.pending(CONSUMERS.readModel)) === 0, 'read-model acknowledged');
    // The regression durable has acknowledged none of them yet.
    expect(bus.streamInfo('EVALS_EVENTS').messages).toBe(8);
    const regression = await collect(bus, CONSUMERS.regression);
    await waitFor(async () => regression.length === 8 && (await bus.pending(CONSUMERS.regression)) === 0, 'regression acknowledged');
    expect(bus.streamInfo('EVALS_EVENTS')).toMatchObject({ messages: 5, firstSeq: 4 });
    await bus.close();

    const reopened = await open(names, { dir, maxAckedPerStream: 5 });
    expect(reopened.streamInfo('EVALS_OUTBOUND')).toMatchObject({ messages: 5, lastSeq: 12 });
    expect(await reopened.pending(CONSUMERS.readModel)).toBe(0);
    expect(await reopened.pending(CONSUMERS.regression)).toBe(0);
  }, 30_000);

  it('expires ids after the duplicate window and acknowledged messages after max age (injected clock)', async () => {
    let now = Date.parse('2030-01-01T00:00:00Z');
    const names = uniqueNames();
    const bus = await open(names, { clock: () => now });
    const first = await bus.publish(subjectOf(names, 'evals.result.recorded'), 'r', 'same-id');
    now += 119_000;
    expect(await bus.publish(subjectOf(names, 'evals.result.recorded'), 'r', 'same-id')).toEqual({ seq: first.seq, duplicate: true });
    now += 2_000;
    expect(await bus.publish(subjectOf(names, 'evals.result.recorded'), 'r', 'same-id')).toEqual({ seq: first.seq + 1, duplicate: false });

    await bus.publish(subjectOf(names, 'evals.event.run.started'), 'owed', 'owed');
    now += 15 * 24 * 3600 * 1000;
    await bus.publish(subjectOf(names, 'evals.result.recorded'), 'fresh', 'fresh');
    await bus.publish(subjectOf(names, 'evals.event.run.started'), 'fresh', 'fresh-event');
    expect(bus.streamInfo('EVALS_OUTBOUND').messages).toBe(1);
    // Past max age but not acknowledged by read-model: kept (JetStream would drop it).
    expect(bus.streamInfo('EVALS_EVENTS').messages).toBe(2);
    expect(await bus.pending(CONSUMERS.readModel)).toBe(2);
  });

  it('redelivers after the ack wait, unless the handler says it is still working', async () => {
    const names = uniqueNames();
    const bus = await open(names, { ackWaitMs: 300 });
    await bus.publish(subjectOf(names, 'evals.work.score'), 'slow', 'slow');
    const deliveries: Array<[string, number, number]> = [];
    const handler = async ([m]: BusMessage[]) => {
        deliveries.push([m.messageId!, m.deliveryCount, Date.now()]);
        if (m.messageId === 'slow') {
          if (m.deliveryCount === 2) m.ack();
          return; // neither ack nor nak: the ack wait brings it back
        }
        for (let i = 0; i < 7; i++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          m.working();
        }
        m.ack();
    };
    // Two subscriptions, so a redelivery has somewhere idle to go (and would be seen).
    await consume(bus, CONSUMERS.scoringWorker, { maxBatch: 1, handler });
    await consume(bus, CONSUMERS.scoringWorker, { maxBatch: 1, handler });
    await waitFor(() => deliveries.length === 2, 'the redelivery after the ack wait');
    expect(deliveries.map(([, count]) => count)).toEqual([1, 2]);
    expect(deliveries[1][2] - deliveries[0][2]).toBeGreaterThanOrEqual(250);

    await bus.publish(subjectOf(names, 'evals.work.score'), 'busy', 'busy');
    await waitFor(async () => (await bus.pending(CONSUMERS.scoringWorker)) === 0, 'the busy one acknowledged');
    expect(deliveries.filter(([id]) => id === 'busy').map(([, count]) => count)).toEqual([1]);
  }, 30_000);

  it('group-commits: many publishes in one tick take one write', async () => {
    const dir = newDir();
    const names = uniqueNames();
    const bus = await open(names, { dir });
    const before = bus.streamInfo('EVALS_WORK').journalWrites;
    const acks = await Promise.all(Array.from({ length: 100 }, (_, i) => bus.publish(subjectOf(names, 'evals.work.score'), `g${i}`, `g-${i}`)));
    expect(bus.streamInfo('EVALS_WORK').journalWrites - before).toBe(1);
    expect(acks.map((a) => a.seq)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(await bus.pending(CONSUMERS.scoringWorker)).toBe(100);
  });

  it('replays a journal whose last record was torn by a crash, and refuses one damaged in the middle', async () => {
    const dir = newDir();
    const names = uniqueNames();
    const bus = await open(names, { dir });
    await bus.publish(subjectOf(names, 'evals.work.score'), 'whole', 'whole');
    await bus.close();
    const file = path.join(dir, `${names.streamPrefix}EVALS_WORK.journal`);
    fs.appendFileSync(file, '{"k":"pub","seq":2,"s":"half');
    const reopened = await open(names, { dir });
    expect(await reopened.pending(CONSUMERS.scoringWorker)).toBe(1);
    expect(reopened.streamInfo('EVALS_WORK').lastSeq).toBe(1);
    await reopened.close();

    fs.appendFileSync(file, 'not json\n{"k":"head","v":1,"lastSeq":1}\n');
    await expect(InProcessBus.open(names, { dir })).rejects.toThrow(/damaged at line/);
    expect(fs.existsSync(path.join(dir, 'LOCK'))).toBe(false);
  });

  it('refuses to publish or consume before ensureTopology and after close', async () => {
    const names = uniqueNames();
    const bus = await InProcessBus.open(names);
    buses.push(bus);
    await expect(bus.publish(subjectOf(names, 'evals.work.score'), 'x', 'x')).rejects.toThrow(/no stream takes/);
    await expect(bus.consume(CONSUMERS.scoringWorker, { maxBatch: 1, handler: async () => undefined })).rejects.toThrow(/not found/);
    await bus.ensureTopology();
    expect((await bus.publish(subjectOf(names, 'evals.work.score'), 'x', 'x')).seq).toBe(1);
    await bus.close();
    expect(bus.healthy).toBe(false);
    await expect(bus.publish(subjectOf(names, 'evals.work.score'), 'y', 'y')).rejects.toThrow(/closed/);
  });
});
