import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { testBusNames } from '../../../test/support/isolation';
import { InProcessBus, type InProcessBusOptions } from './in-process.bus';
import { messageBusContract, waitFor } from './message-bus.contract';
import type { BusMessage, ConsumeOptions, PublishAck, Subscription } from './message-bus.port';
import { MAX_MESSAGE_BYTES } from '@evals/contracts';
import { CONSUMERS, streamOf, subjectOf, type BusNames, type ConsumerSpec, type StreamName } from './topology';

// Touches the filesystem (journal directories under the OS temp dir), hence an integration spec.

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'evals-inproc-bus-'));
}

function uniqueNames(): BusNames {
  const t = testBusNames('ipb');
  return { streamPrefix: `IPB_${t.suffix}_`, subjectPrefix: `ipb_${t.suffix}` };
}

/**
 * Whether `needle` is anywhere on disk in `dir` (every file, journals, temporary files and the lock alike):
 * in a file's raw bytes, or inside any line's base64 `d` field decoded (the journal stores payloads in
 * base64, where a canary that is only part of a payload never appears as such).
 */
function onDisk(dir: string, needle: string): boolean {
  for (const name of fs.readdirSync(dir)) {
    const file = path.join(dir, name);
    if (!fs.statSync(file).isFile()) continue;
    const raw = fs.readFileSync(file);
    if (raw.includes(needle)) return true;
    for (const line of raw.toString('utf8').split('\n')) {
      let record: unknown;
      try {
        record = JSON.parse(line);
      } catch {
        continue; // a torn or foreign line: the raw search above covers it
      }
      const d = (record as { d?: unknown } | null)?.d;
      if (typeof d === 'string' && Buffer.from(d, 'base64').includes(needle)) return true;
    }
  }
  return false;
}

/** A payload as the apps send one: the canary is a field of a JSON envelope, never the whole message. */
const envelope = (output: string) => JSON.stringify({ schema: 'evals.output.submitted.v1', output: `The answer is: ${output}.` });

const journalFile = (dir: string, names: BusNames, stream: StreamName) => path.join(dir, `${streamOf(names, stream)}.journal`);
const compactingFiles = (dir: string) => fs.readdirSync(dir).filter((f) => f.endsWith('.compacting'));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Fault injection at the file-system boundary: every append handle the bus opens on `file` calls
 * `beforeWrite` with each group commit (after a turn of the event loop, as a real write would let other work
 * run) before writing it; `beforeWrite` may throw to fail the write.
 */
function interceptWrites(file: string, beforeWrite: (data: string) => void): jest.SpyInstance {
  const realOpen = fs.promises.open.bind(fs.promises);
  return jest.spyOn(fs.promises, 'open').mockImplementation((async (target: fs.PathLike, flags?: string | number, mode?: fs.Mode) => {
    const handle = await realOpen(target, flags, mode);
    if (target !== file || flags !== 'a') return handle;
    return new Proxy(handle, {
      get(inner, property) {
        if (property === 'write') {
          return async (data: string) => {
            await null;
            beforeWrite(data);
            return inner.write(data);
          };
        }
        const value = Reflect.get(inner, property) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(inner) : value;
      },
    });
  }) as typeof fs.promises.open);
}

/** The pid on the first line of the bus's lock file. */
const lockHolder = (dir: string) => Number.parseInt(fs.readFileSync(path.join(dir, 'LOCK'), 'utf8').split('\n')[0], 10);

const probe = path.join(__dirname, 'in-process.bus.probe.ts');
const repoRoot = path.resolve(__dirname, '../../..');

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
    const child = spawn(process.execPath, ['-r', '@swc-node/register', probe, dir, names.streamPrefix, names.subjectPrefix], {
      cwd: repoRoot,
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
    expect(lockHolder(dir)).toBe(pid);

    const bus = await open(names, { dir });
    expect(lockHolder(dir)).toBe(process.pid);
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

  it('leaves no acknowledged work-queue payload on disk after compaction (D1); the scan finds it while it is there', async () => {
    const dir = newDir();
    const names = uniqueNames();
    const gone = `CANARY-acked-${names.subjectPrefix}`;
    const kept = `CANARY-kept-${names.subjectPrefix}`;
    const bus = await open(names, { dir });
    // Inside an envelope, as a candidate output travels: the journal holds the whole payload in base64, where
    // neither the canary nor its own base64 appears; only decoding the record finds it.
    await bus.publish(subjectOf(names, 'evals.output.submitted'), envelope(gone), 'c-1');
    await bus.publish(subjectOf(names, 'evals.work.score'), envelope(kept), 'c-2');
    expect(onDisk(dir, gone)).toBe(true);
    expect(onDisk(dir, kept)).toBe(true);
    const seen = await collect(bus, CONSUMERS.ingestion);
    await waitFor(async () => seen.length === 1 && (await bus.pending(CONSUMERS.ingestion)) === 0, 'the canary acknowledged');
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
    await bus.publish(subjectOf(names, 'evals.output.submitted'), envelope(canary), 'canary');
    expect(onDisk(dir, canary)).toBe(true);
    const seen = await collect(bus, CONSUMERS.ingestion);
    await waitFor(async () => (await bus.pending(CONSUMERS.ingestion)) === 0, 'the canary acknowledged');
    const filler = 'x'.repeat(1024);
    for (let i = 0; i < 100; i++) await bus.publish(subjectOf(names, 'evals.output.submitted'), filler, `f-${i}`);
    await waitFor(async () => seen.length === 101 && (await bus.pending(CONSUMERS.ingestion)) === 0, 'the filler acknowledged');
    await waitFor(() => bus.streamInfo('EVALS_INBOUND').compactions > compactionsAtOpen, 'a compaction while running');
    expect(onDisk(dir, canary)).toBe(false);
    expect(bus.streamInfo('EVALS_INBOUND').journalBytes).toBeLessThan(50 * 1024);
  }, 30_000);

  it('refuses a second bus on the same directory in this process, and takes over the lock of a dead process', async () => {
    const dir = newDir();
    const names = uniqueNames();
    const bus = await open(names, { dir });
    // Refused because this process holds the lock (in memory), not because the file names a live pid.
    await expect(InProcessBus.open(names, { dir })).rejects.toThrow(new RegExp(`already in use by process ${process.pid} \\(this process\\)`));
    // The same directory by another path is the same lock.
    const alias = path.join(newDir(), 'alias');
    fs.symlinkSync(dir, alias);
    await expect(InProcessBus.open(names, { dir: alias })).rejects.toThrow(/this process/);
    await bus.close();
    expect(fs.existsSync(path.join(dir, 'LOCK'))).toBe(false);

    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    fs.writeFileSync(path.join(dir, 'LOCK'), `${dead}\n`);
    const next = await open(names, { dir });
    expect(lockHolder(dir)).toBe(process.pid);
    expect(next.healthy).toBe(true);
  });

  it('takes over a lock naming this pid that this process does not hold: a restart that got the same pid (B2)', async () => {
    const dir = newDir();
    const names = uniqueNames();
    // Left by an earlier process with our pid (pid 1 of a container, restarted after a crash).
    fs.writeFileSync(path.join(dir, 'LOCK'), `${process.pid}\n`);
    const bus = await open(names, { dir });
    expect(lockHolder(dir)).toBe(process.pid);
    expect(bus.healthy).toBe(true);
    await expect(InProcessBus.open(names, { dir })).rejects.toThrow(/this process/);
    await bus.close();
    expect(fs.existsSync(path.join(dir, 'LOCK'))).toBe(false);
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('LOCK'))).toEqual([]);
  });

  it('two processes taking over the same stale lock at once: exactly one gets it (B2)', async () => {
    const dir = newDir();
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    fs.writeFileSync(path.join(dir, 'LOCK'), `${dead}\n`);
    const children = [0, 1].map(() => {
      const child = spawn(process.execPath, ['-r', '@swc-node/register', probe, '--lock-race', dir], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
      const facts: Array<{ booted?: number; locked?: number; refused?: string }> = [];
      let stderr = '';
      let rest = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.stdout.on('data', (chunk: Buffer) => {
        const lines = (rest + chunk.toString()).split('\n');
        rest = lines.pop()!;
        for (const line of lines) facts.push(JSON.parse(line));
      });
      const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
      return { child, facts, exited, stderr: () => stderr };
    });
    try {
      await waitFor(() => children.every((c) => c.facts.some((f) => f.booted)), 'both probes started', 60_000);
      // Both read the stale lock, then pause 300 ms before acting on it (see the probe): the race is certain.
      for (const { child } of children) child.stdin.write('go\n');
      await waitFor(
        () => children.every((c) => c.facts.some((f) => f.locked || f.refused)),
        `both probes decided (stderr: ${children.map((c) => c.stderr()).join(' | ')})`,
        30_000,
      );
      const locked = children.flatMap((c) => c.facts.filter((f) => f.locked).map((f) => f.locked!));
      const refused = children.flatMap((c) => c.facts.filter((f) => f.refused).map((f) => f.refused!));
      expect(locked).toHaveLength(1);
      expect(refused).toEqual([expect.stringContaining(`already in use by process ${locked[0]}`)]);
      expect(lockHolder(dir)).toBe(locked[0]);
    } finally {
      for (const { child } of children) child.kill('SIGKILL');
      await Promise.all(children.map((c) => c.exited));
    }
  }, 90_000);

  it('a retry after a crash between a compaction and the next commit is stored, not taken for a duplicate (B1)', async () => {
    const dir = newDir();
    const crashDir = newDir();
    const names = uniqueNames();
    const file = journalFile(dir, names, 'EVALS_WORK');
    const subject = subjectOf(names, 'evals.work.score');
    let retried: Promise<PublishAck> | undefined;
    const spy = interceptWrites(file, (data) => {
      // The publish arrives while the acknowledgement's commit is being written: it waits in the buffer while
      // the compaction that follows this commit snapshots the stream.
      if (data.includes('"k":"ack"') && !retried) retried = bus.publish(subject, envelope('retry'), 'retry-me');
      // What a crash right after the compaction's rename, before this commit, leaves on disk (the journal and its state).
      if (data.includes('"id":"retry-me"')) {
        fs.copyFileSync(file, journalFile(crashDir, names, 'EVALS_WORK'));
        fs.copyFileSync(file.replace(/\.journal$/, '.state'), journalFile(crashDir, names, 'EVALS_WORK').replace(/\.journal$/, '.state'));
      }
    });
    let bus: InProcessBus;
    try {
      bus = await open(names, { dir, compactAfterDeadBytes: 1 });
      await bus.publish(subject, 'first', 'first');
      const compactions = bus.streamInfo('EVALS_WORK').compactions;
      await consume(bus, CONSUMERS.scoringWorker, {
        maxBatch: 10,
        handler: async (batch) => {
          for (const m of batch) if (m.messageId === 'first') m.ack();
        },
      });
      await waitFor(() => retried !== undefined, 'the publish during the commit');
      expect(await retried).toEqual({ seq: 2, duplicate: false });
      expect(bus.streamInfo('EVALS_WORK').compactions).toBeGreaterThan(compactions);
    } finally {
      spy.mockRestore();
    }
    expect(fs.existsSync(journalFile(crashDir, names, 'EVALS_WORK'))).toBe(true);

    // The restart after that crash: the publisher never got its ack, so it retries with the same id.
    const restarted = await open(names, { dir: crashDir });
    expect(await restarted.pending(CONSUMERS.scoringWorker)).toBe(0);
    expect(await restarted.publish(subject, envelope('retry'), 'retry-me')).toEqual({ seq: 2, duplicate: false });
    expect(await restarted.pending(CONSUMERS.scoringWorker)).toBe(1);
    // The acknowledged message was stored: its id is still a duplicate.
    expect(await restarted.publish(subject, 'first', 'first')).toEqual({ seq: 1, duplicate: true });
  }, 30_000);

  it('a publish whose write fails leaves its id nowhere: the retry after a restart is stored (B1)', async () => {
    const dir = newDir();
    const names = uniqueNames();
    const file = journalFile(dir, names, 'EVALS_WORK');
    const subject = subjectOf(names, 'evals.work.score');
    let retried: Promise<PublishAck> | undefined;
    let diskFull = false;
    const spy = interceptWrites(file, (data) => {
      if (data.includes('"k":"ack"') && !retried) retried = bus.publish(subject, envelope('retry'), 'retry-me');
      if (data.includes('"id":"retry-me"')) {
        diskFull = true;
        throw new Error('injected: write failed (disk full)');
      }
    });
    // A full disk fails any compaction after that write too: the file the earlier compaction wrote stays.
    const realRename = fs.promises.rename.bind(fs.promises);
    const renameSpy = jest.spyOn(fs.promises, 'rename').mockImplementation(async (from, to) => {
      if (diskFull) throw new Error('injected: no space left on device');
      return realRename(from, to);
    });
    let bus: InProcessBus;
    try {
      bus = await open(names, { dir, compactAfterDeadBytes: 1 });
      await bus.publish(subject, 'first', 'first');
      await consume(bus, CONSUMERS.scoringWorker, {
        maxBatch: 10,
        handler: async (batch) => {
          for (const m of batch) if (m.messageId === 'first') m.ack();
        },
      });
      await waitFor(() => retried !== undefined, 'the publish during the commit');
      await expect(retried).rejects.toThrow(/injected/);
      expect(bus.healthy).toBe(false);
      await expect(bus.publish(subject, envelope('retry'), 'retry-me')).rejects.toThrow(/injected/);
      await subscriptions.pop()!.stop();
      await bus.close();
    } finally {
      spy.mockRestore();
      renameSpy.mockRestore();
    }

    const restarted = await open(names, { dir });
    expect(await restarted.publish(subject, envelope('retry'), 'retry-me')).toEqual({ seq: 2, duplicate: false });
    expect(await restarted.pending(CONSUMERS.scoringWorker)).toBe(1);
  }, 30_000);

  it('does not rewrite the journal at every commit once the duplicate window holds many ids (B6)', async () => {
    const dir = newDir();
    const names = uniqueNames();
    const bus = await open(names, { dir, compactAfterDeadBytes: 4096 });
    const subject = subjectOf(names, 'evals.work.score');
    const seen = await collect(bus, CONSUMERS.scoringWorker);
    // 200 acknowledged messages whose ids (~40 KiB of `dup` records) stay in the 120 s window.
    const longId = (i: number) => `id-${i}-${'x'.repeat(150)}`;
    for (let i = 0; i < 200; i++) await bus.publish(subject, `m${i}`, longId(i));
    await waitFor(async () => seen.length === 200 && (await bus.pending(CONSUMERS.scoringWorker)) === 0, 'all acknowledged');
    await sleep(100);
    const before = bus.streamInfo('EVALS_WORK');
    expect(before.journalBytes).toBeGreaterThan(30 * 1024);

    // Twenty more, one commit each, acknowledged as they come: ~3 KiB of dead records, under the threshold.
    for (let i = 0; i < 20; i++) await bus.publish(subject, `n${i}`, `n-${i}`);
    await waitFor(async () => seen.length === 220 && (await bus.pending(CONSUMERS.scoringWorker)) === 0, 'the twenty acknowledged');
    await sleep(100);
    const after = bus.streamInfo('EVALS_WORK');
    expect(after.journalWrites - before.journalWrites).toBeGreaterThanOrEqual(20);
    expect(after.compactions - before.compactions).toBeLessThanOrEqual(1);
  }, 30_000);

  it('compacts acknowledged work-queue payloads away even behind a larger unacknowledged backlog (D1)', async () => {
    const dir = newDir();
    const names = uniqueNames();
    const canary = `CANARY-backlog-${names.subjectPrefix}`;
    const bus = await open(names, { dir, compactAfterDeadBytes: 16 * 1024 });
    const subject = subjectOf(names, 'evals.work.score');
    // ~110 KiB on disk that nobody acknowledges yet.
    for (let i = 0; i < 40; i++) await bus.publish(subject, `backlog ${'b'.repeat(2048)}`, `b-${i}`);
    await bus.publish(subject, envelope(canary), 'canary');
    for (let i = 0; i < 10; i++) await bus.publish(subject, `done ${'d'.repeat(2048)}`, `d-${i}`);
    expect(onDisk(dir, canary)).toBe(true);
    const compactions = bus.streamInfo('EVALS_WORK').compactions;

    // ~30 KiB of acknowledged payloads: more than compactAfterDeadBytes, far less than the live backlog.
    const seen = await collect(bus, CONSUMERS.scoringWorker, (m) => m.messageId !== null && !m.messageId.startsWith('b-'));
    await waitFor(async () => seen.length === 51 && (await bus.pending(CONSUMERS.scoringWorker)) === 40, 'the eleven acknowledged');
    await waitFor(() => bus.streamInfo('EVALS_WORK').compactions > compactions, 'a compaction while running');
    expect(onDisk(dir, canary)).toBe(false);
    expect(await bus.pending(CONSUMERS.scoringWorker)).toBe(40);
  }, 30_000);

  it('removes the temporary file of a failed compaction, and leftover ones at open (D1)', async () => {
    const dir = newDir();
    const names = uniqueNames();
    const canary = `CANARY-temp-${names.subjectPrefix}`;
    const bus = await open(names, { dir, compactAfterDeadBytes: 1 });
    const subject = subjectOf(names, 'evals.output.submitted');
    await bus.publish(subject, envelope(canary), 'kept');
    const realRename = fs.promises.rename.bind(fs.promises);
    const spy = jest.spyOn(fs.promises, 'rename').mockImplementation(async (from, to) => {
      if (String(from).endsWith('.compacting')) throw new Error('injected: rename failed');
      return realRename(from, to);
    });
    try {
      // Acknowledged, it is dead and outweighs the live one: a compaction follows, and fails.
      await bus.publish(subject, 'x'.repeat(4096), 'acked');
      await collect(bus, CONSUMERS.ingestion, (m) => m.messageId === 'acked');
      await waitFor(() => !bus.healthy, 'the failed compaction');
      expect(compactingFiles(dir)).toEqual([]);
      await subscriptions.pop()!.stop();
      await bus.close();
    } finally {
      spy.mockRestore();
    }
    expect(compactingFiles(dir)).toEqual([]);

    // Left by a crash in mid-compaction, for this stream and for one of another name.
    fs.writeFileSync(`${journalFile(dir, names, 'EVALS_INBOUND')}.compacting`, `{"k":"pub","d":"${Buffer.from(envelope(canary)).toString('base64')}"}\n`);
    fs.writeFileSync(path.join(dir, 'OLD_EVALS_INBOUND.journal.compacting'), envelope(canary));
    const reopened = await open(names, { dir });
    expect(compactingFiles(dir)).toEqual([]);
    expect(await reopened.pending(CONSUMERS.ingestion)).toBe(1);
  }, 30_000);

  it('takes payloads up to MAX_MESSAGE_BYTES (8 MiB) by default, as the deployment\'s NATS does, and refuses larger (B10)', async () => {
    const names = uniqueNames();
    const bus = await open(names);
    const subject = subjectOf(names, 'evals.work.score');
    expect(await bus.publish(subject, new Uint8Array(MAX_MESSAGE_BYTES).fill(0x61), 'max')).toEqual({ seq: 1, duplicate: false });
    await expect(bus.publish(subject, new Uint8Array(MAX_MESSAGE_BYTES + 1), 'over')).rejects.toThrow(`exceeds the maximum of ${MAX_MESSAGE_BYTES}`);
    const small = await open(uniqueNames(), { maxPayloadBytes: 1024 });
    await expect(small.publish(subjectOf(small.names, 'evals.work.score'), new Uint8Array(1025), 'over')).rejects.toThrow(/maximum of 1024/);
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
