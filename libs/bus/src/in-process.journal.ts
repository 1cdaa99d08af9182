import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import * as path from 'node:path';

import {
  encodeRecord,
  STATE_TEMP_SUFFIX,
  syncDirectory,
  writeState,
  type JournalRecord,
} from './journal-file';

export { encodeRecord, journalFileOf, pubRecordBytes, JournalDamagedError, readJournal, type JournalContents, type JournalRecord } from './journal-file';

/**
 * The in-process bus's durability: one append-only file per stream, in the bus's directory, one JSON record
 * a line, each sealed with a CRC-32C and numbered (the format and the checks on open: journal-file.ts).
 *
 *   {"n":0,"k":"head","v":2,"stream":S,"gen":G,"lastSeq":N,"ck":..}   first line: stream, generation, sequence
 *   {"n":i,"k":"pub","seq":N,"s":subject,"id":msgId|null,"t":ms,"d":base64,"ck":..}   a stored message
 *   {"n":i,"k":"ack","c":durable,"q":[seq,...],"ck":..}                acknowledgements of one durable
 *   {"n":i,"k":"dup","id":msgId,"seq":N,"t":ms,"ck":..}                the id of a deleted message, still in the duplicate window
 *
 * Replaying the records in order rebuilds the stream. Writes are group-committed: everything appended in
 * one tick (or while the previous write was in progress) goes out in one write. A file is rewritten with
 * only its live records (compaction) on open, on close, and while running: on a work-queue stream as soon as
 * the publish records of deleted messages exceed `compactAfterDeadBytes` (they carry acknowledged candidate
 * outputs, D1), on any stream once the dead records (those publish records and every acknowledgement written
 * since the last rewrite) exceed it and outweigh the rest of the file. The records a rewrite itself writes
 * (head, in-window `dup`s, acknowledgements of kept messages) are never counted as dead, so a large duplicate
 * window does not make every commit a rewrite. The rewrite goes to a temporary file that is synced and
 * renamed over the old one, so a crash at any point leaves either the old file or the new one; the temporary
 * file is removed when the rewrite fails, and at the next open if the process died in the middle. Each
 * rewrite raises the file's generation and then records it, with the file's size, in `<STREAM>.state`; a
 * clean close records the final size there too.
 */

/** The stream a journal belongs to, as the journal needs it for compaction. */
export interface JournalOwner {
  /**
   * Records that rebuild the stream's current state, header first. Taken synchronously; from then on the
   * owner counts `deadPayloadBytes` for the new file (back to 0).
   */
  snapshot(): JournalRecord[];
  /** Bytes of the publish records in the current file whose message the stream no longer holds. */
  readonly deadPayloadBytes: number;
}

export interface JournalOptions {
  /** The stream's name, recorded in the file's head (a journal copied over another stream's is refused). */
  readonly stream: string;
  /** The generation of the file as read (0: none, or format 1); the open's rewrite writes the next one. */
  readonly gen: number;
  /** fsync after every group commit (survives power loss, not only a crash of the process). */
  readonly fsync: boolean;
  /** Compact while running once more than this many bytes are dead (and, but on a work queue, outweigh the rest). */
  readonly compactAfterDeadBytes: number;
  /**
   * A work-queue stream: the publish records of its deleted messages (acknowledged candidate outputs, D1) are
   * compacted away once they exceed compactAfterDeadBytes, however much is still live.
   */
  readonly workQueue: boolean;
}

export class StreamJournal {
  private buffer: JournalRecord[] = [];
  private onWritten: Array<() => void> = [];
  private waiters: Array<{ resolve(): void; reject(error: unknown): void }> = [];
  private pendingAcks = new Map<string, number[]>();
  private scheduled: NodeJS.Immediate | undefined;
  private running: Promise<void> | undefined;
  private compactWanted = false;
  private closed = false;
  private bytes = 0;
  /** The number the next record of the file gets (records are numbered from 0, the head, in each file). */
  private nextRecord = 0;
  private gen: number;
  private lastSeq = 0;
  /** The size the state file records for the current generation. */
  private stateBytes = 0;
  /** Bytes of acknowledgement records written since the last rewrite (which folds them into one per durable). */
  private ackBytes = 0;
  /** Set once a write failed: what follows could land after a torn record, so nothing more is written. */
  failure: unknown;
  writes = 0;
  compactions = 0;

  private constructor(
    private readonly file: string,
    private handle: FileHandle | undefined,
    private readonly owner: JournalOwner,
    private readonly options: JournalOptions,
  ) {
    this.gen = options.gen;
  }

  /** Opens the journal for appending, compacting it first (the owner has replayed it already). */
  static async open(file: string, owner: JournalOwner, options: JournalOptions): Promise<StreamJournal> {
    // Left by a process that died in the middle of a compaction.
    await fsp.rm(tempOf(file), { force: true });
    const journal = new StreamJournal(file, undefined, owner, options);
    await journal.rewrite();
    return journal;
  }

  get fileBytes(): number {
    return this.bytes;
  }

  get generation(): number {
    return this.gen;
  }

  /**
   * Appends a record to the next group commit. `written` runs synchronously right after the write succeeds
   * (before any compaction can snapshot the owner); the promise resolves at the same point.
   */
  append(record: JournalRecord, written?: () => void): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(new Error('InProcessBus: the bus is closed'));
    this.buffer.push(record);
    if (written) this.onWritten.push(written);
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    this.schedule();
    return done;
  }

  /** Records an acknowledgement; those of one commit are written as one record per durable. */
  appendAck(durable: string, seq: number): void {
    if (this.failure || this.closed) return;
    const seqs = this.pendingAcks.get(durable);
    if (seqs) seqs.push(seq);
    else this.pendingAcks.set(durable, [seq]);
    this.schedule();
  }

  /** Resolves once everything appended so far is written. */
  async flushed(): Promise<void> {
    if (this.closed) throw new Error('InProcessBus: the bus is closed');
    if (this.buffer.length > 0 || this.pendingAcks.size > 0) {
      await new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    } else {
      await this.running;
    }
    if (this.failure) throw this.failure;
  }

  /**
   * Writes what is buffered, compacts, and stops taking records; then records the file's final size in the
   * state file, so a journal cut short after a clean stop is refused at the next open whatever it lost.
   */
  async close(): Promise<void> {
    this.compactWanted = !this.failure;
    this.schedule();
    await this.idle();
    this.closed = true;
    await this.handle?.close().catch(() => undefined);
    this.handle = undefined;
    if (!this.failure && this.bytes !== this.stateBytes) {
      await writeState(this.file, { stream: this.options.stream, gen: this.gen, bytes: this.bytes, lastSeq: this.lastSeq }).catch(() => undefined);
    }
  }

  private async idle(): Promise<void> {
    while (this.scheduled || this.running) {
      if (this.scheduled) {
        clearImmediate(this.scheduled);
        this.scheduled = undefined;
        this.startDrain();
      }
      await this.running;
    }
  }

  private schedule(): void {
    if (this.scheduled || this.running) return;
    this.scheduled = setImmediate(() => {
      this.scheduled = undefined;
      this.startDrain();
    });
  }

  /**
   * `running` is cleared once the drain has settled, never before it is set: a drain with nothing to do
   * finishes synchronously, and clearing it from inside would leave a settled promise in `running` for good
   * (idle() would spin on it without end).
   */
  private startDrain(): void {
    const run: Promise<void> = this.drain().finally(() => {
      if (this.running === run) this.running = undefined;
    });
    this.running = run;
  }

  /** Whether enough of the file is dead to rewrite it now (see the header of this file). */
  private compactionDue(): boolean {
    const threshold = this.options.compactAfterDeadBytes;
    const deadPayload = this.owner.deadPayloadBytes;
    if (this.options.workQueue && deadPayload > threshold) return true;
    const dead = deadPayload + this.ackBytes;
    return dead > threshold && dead > this.bytes - dead;
  }

  /** The one writer: group commits and compactions never overlap. */
  private async drain(): Promise<void> {
    try {
      while (!this.failure && (this.buffer.length > 0 || this.pendingAcks.size > 0 || this.compactWanted)) {
        if (this.buffer.length > 0 || this.pendingAcks.size > 0) await this.commit();
        if (!this.failure && (this.compactWanted || this.compactionDue())) {
          this.compactWanted = false;
          await this.rewrite().catch((error) => (this.failure = error));
        }
      }
    } finally {
      if (this.failure) {
        for (const waiter of this.waiters.splice(0)) waiter.reject(this.failure);
        this.buffer = [];
        this.onWritten = [];
      }
    }
  }

  private async commit(): Promise<void> {
    const records = this.buffer;
    for (const [durable, seqs] of this.pendingAcks) records.push({ k: 'ack', c: durable, q: seqs });
    // Numbered in write order: a failed write stops the journal for good, so numbers are never reused.
    let n = this.nextRecord;
    let ackBytes = 0;
    let lastSeq = this.lastSeq;
    const lines = records.map((record) => {
      const line = encodeRecord(record, n++);
      if (record.k === 'ack') ackBytes += Buffer.byteLength(line);
      else if (record.k === 'pub') lastSeq = Math.max(lastSeq, record.seq);
      return line;
    });
    const data = lines.join('');
    const written = this.onWritten;
    const waiters = this.waiters;
    this.buffer = [];
    this.onWritten = [];
    this.waiters = [];
    this.pendingAcks = new Map();
    try {
      const { bytesWritten } = await this.handle!.write(data);
      // A short write (a full disk) leaves a torn record: the journal stops, as after any failed write.
      if (bytesWritten !== Buffer.byteLength(data)) throw new Error(`InProcessBus: short write to ${this.file} (${bytesWritten} of ${Buffer.byteLength(data)} bytes)`);
      if (this.options.fsync) await this.handle!.sync();
    } catch (error) {
      this.failure = error;
      for (const waiter of waiters) waiter.reject(error);
      return;
    }
    this.nextRecord = n;
    this.lastSeq = lastSeq;
    this.bytes += Buffer.byteLength(data);
    this.ackBytes += ackBytes;
    this.writes++;
    for (const callback of written) callback();
    for (const waiter of waiters) waiter.resolve();
  }

  /**
   * Replaces the file with the owner's live records (synced, then renamed over the old file) as the next
   * generation, then records that generation and size in the state file - in this order, so the only
   * mismatch a crash can leave is a journal one generation ahead of its state, which the next open accepts.
   * On failure the temporary file goes too: it holds payloads, candidate outputs among them (D1).
   */
  private async rewrite(): Promise<void> {
    const records = this.owner.snapshot();
    const gen = this.gen + 1;
    const first = records[0];
    const lastSeq = first?.k === 'head' ? first.lastSeq : 0;
    const head: JournalRecord = { k: 'head', v: 2, stream: this.options.stream, gen, lastSeq };
    const body = first?.k === 'head' ? records.slice(1) : records;
    const data = [head, ...body].map((record, n) => encodeRecord(record, n)).join('');
    this.ackBytes = 0;
    const temp = tempOf(this.file);
    try {
      // Owner-only: the records carry raw payloads, candidate outputs among them.
      const out = await fsp.open(temp, 'w', 0o600);
      try {
        await out.writeFile(data);
        await out.sync();
      } finally {
        await out.close();
      }
      await this.handle?.close();
      this.handle = undefined;
      await fsp.rename(temp, this.file);
    } catch (error) {
      await fsp.rm(temp, { force: true }).catch(() => undefined);
      throw error;
    }
    await syncDirectory(path.dirname(this.file));
    this.gen = gen;
    this.nextRecord = body.length + 1;
    this.lastSeq = lastSeq;
    for (const record of body) if (record.k === 'pub' && record.seq > this.lastSeq) this.lastSeq = record.seq;
    this.bytes = Buffer.byteLength(data);
    await writeState(this.file, { stream: this.options.stream, gen, bytes: this.bytes, lastSeq: this.lastSeq });
    this.stateBytes = this.bytes;
    this.handle = await fsp.open(this.file, 'a');
    this.compactions++;
  }
}

const TEMP_SUFFIX = '.compacting';

function tempOf(file: string): string {
  return `${file}${TEMP_SUFFIX}`;
}

/**
 * Removes every compaction temporary file in `dir`, whichever stream it was for: a process that died in the
 * middle of a compaction leaves one, with payloads in it. Only under the directory's lock.
 */
export async function removeLeftoverTemporaries(dir: string): Promise<void> {
  for (const name of await fsp.readdir(dir)) {
    if (name.endsWith(`.journal${TEMP_SUFFIX}`) || name.endsWith(`.state${STATE_TEMP_SUFFIX}`)) await fsp.rm(path.join(dir, name), { force: true });
  }
}

/** The lock files (by real path) that buses of this process hold: a second open here is refused by this. */
const heldLocks = new Set<string>();

/**
 * One bus per directory: a lock file holding the owner's pid and a random token, created atomically (link of
 * a complete temporary file, so nobody ever reads a half-written one). Within this process a second open is
 * refused by `heldLocks`; a lock naming another live process is refused; any other lock is stale and taken
 * over - its process died without closing the bus, or it names our own pid but this process does not hold it
 * (a restart that got the same pid, as pid 1 of a container does).
 */
export async function acquireLock(dir: string): Promise<() => Promise<void>> {
  const lock = path.join(await fsp.realpath(dir), 'LOCK');
  if (heldLocks.has(lock)) throw inUse(dir, lock, process.pid);
  heldLocks.add(lock);
  const token = randomBytes(12).toString('hex');
  const mine = `${process.pid}\n${token}\n`;
  const temp = `${lock}.${process.pid}.${token}`;
  try {
    await fsp.writeFile(temp, mine, { mode: 0o600 });
    for (let attempt = 0; attempt < 10; attempt++) {
      if (await linkExclusive(temp, lock)) {
        return async () => {
          try {
            if ((await readIfExists(lock)) === mine) await fsp.rm(lock, { force: true });
          } finally {
            heldLocks.delete(lock);
          }
        };
      }
      const seen = await readIfExists(lock);
      if (seen === undefined) continue; // removed meanwhile: try again
      const holder = Number.parseInt(seen, 10);
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) throw inUse(dir, lock, holder);
      await removeStale(lock, seen);
    }
    throw new Error(`InProcessBus: could not take the lock ${lock}`);
  } catch (error) {
    heldLocks.delete(lock);
    throw error;
  } finally {
    await fsp.rm(temp, { force: true });
  }
}

/**
 * Removes the stale lock whose content was `seen`, and only that one, though several processes may judge it
 * stale at once: it is renamed aside under a unique name first (exactly one process moves it), and what was
 * moved is checked. Should it be a lock another process took in between (the stale one removed and a fresh
 * one created after our judgement), it is linked back at once; then the caller judges the lock again.
 */
async function removeStale(lock: string, seen: string): Promise<void> {
  // Judged again just before acting: the window in which a fresh lock can be moved is two system calls wide.
  if ((await readIfExists(lock)) !== seen) return;
  const aside = `${lock}.stale.${process.pid}.${randomBytes(12).toString('hex')}`;
  try {
    await fsp.rename(lock, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    if ((await readIfExists(aside)) !== seen) {
      // A live lock: back where it was (EEXIST would mean a third process took the empty place meanwhile).
      await fsp.link(aside, lock).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw error;
      });
    }
  } finally {
    await fsp.rm(aside, { force: true });
  }
}

async function linkExclusive(from: string, to: string): Promise<boolean> {
  try {
    await fsp.link(from, to);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await fsp.readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function inUse(dir: string, lock: string, holder: number): Error {
  return new Error(
    `InProcessBus: ${dir} is already in use by process ${holder}${holder === process.pid ? ' (this process)' : ''}; ` +
      `one bus per directory (lock file ${lock})`,
  );
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
