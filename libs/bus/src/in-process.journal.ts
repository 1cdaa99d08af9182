import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import * as path from 'node:path';

/**
 * The in-process bus's durability: one append-only file per stream, JSON lines, in the bus's directory.
 *
 *   {"k":"head","v":1,"lastSeq":N}                                first line of a compacted file
 *   {"k":"pub","seq":N,"s":subject,"id":msgId|null,"t":ms,"d":base64}   a stored message
 *   {"k":"ack","c":durable,"q":[seq,...]}                         acknowledgements of one durable
 *   {"k":"dup","id":msgId,"seq":N,"t":ms}                         the id of a deleted message, still in the duplicate window
 *
 * Replaying the records in order rebuilds the stream. Writes are group-committed: everything appended in
 * one tick (or while the previous write was in progress) goes out in one write. A file is rewritten with
 * only its live records (compaction) on open, on close, and while running once dead records dominate; the
 * rewrite goes to a temporary file that is synced and renamed over the old one, so a crash at any point
 * leaves either the old file or the new one.
 */
export type JournalRecord =
  | { readonly k: 'head'; readonly v: 1; readonly lastSeq: number }
  | { readonly k: 'pub'; readonly seq: number; readonly s: string; readonly id: string | null; readonly t: number; readonly d: string }
  | { readonly k: 'ack'; readonly c: string; readonly q: readonly number[] }
  | { readonly k: 'dup'; readonly id: string; readonly seq: number; readonly t: number };

/** The stream a journal belongs to, as the journal needs it for compaction. */
export interface JournalOwner {
  /** Records that rebuild the stream's current state, header first. Taken synchronously. */
  snapshot(): JournalRecord[];
  /** Bytes of the publish records of the messages the stream still holds. */
  readonly liveBytes: number;
}

export interface JournalOptions {
  /** fsync after every group commit (survives power loss, not only a crash of the process). */
  readonly fsync: boolean;
  /** Compact while running once more than this many bytes are dead and they outweigh the live ones. */
  readonly compactAfterDeadBytes: number;
}

export function encodeRecord(record: JournalRecord): string {
  return `${JSON.stringify(record)}\n`;
}

/** Reads a journal file; a torn last line (a crash mid-write) is dropped, any other damage is an error. */
export async function readJournal(file: string): Promise<Array<{ record: JournalRecord; bytes: number }>> {
  let text: string;
  try {
    text = await fsp.readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const lines = text.split('\n');
  // After the last newline there is either nothing or the remains of an interrupted write.
  lines.pop();
  return lines.map((line, index) => {
    try {
      return { record: JSON.parse(line) as JournalRecord, bytes: Buffer.byteLength(line) + 1 };
    } catch {
      throw new Error(`InProcessBus: journal ${file} is damaged at line ${index + 1}; refusing to guess what it held`);
    }
  });
}

export class StreamJournal {
  private buffer: string[] = [];
  private onWritten: Array<() => void> = [];
  private waiters: Array<{ resolve(): void; reject(error: unknown): void }> = [];
  private pendingAcks = new Map<string, number[]>();
  private scheduled: NodeJS.Immediate | undefined;
  private running: Promise<void> | undefined;
  private compactWanted = false;
  private closed = false;
  private bytes = 0;
  /** Set once a write failed: what follows could land after a torn record, so nothing more is written. */
  failure: unknown;
  writes = 0;
  compactions = 0;

  private constructor(
    private readonly file: string,
    private handle: FileHandle | undefined,
    private readonly owner: JournalOwner,
    private readonly options: JournalOptions,
  ) {}

  /** Opens the journal for appending, compacting it first (the owner has replayed it already). */
  static async open(file: string, owner: JournalOwner, options: JournalOptions): Promise<StreamJournal> {
    await fsp.rm(tempOf(file), { force: true });
    const journal = new StreamJournal(file, undefined, owner, options);
    await journal.rewrite();
    return journal;
  }

  get fileBytes(): number {
    return this.bytes;
  }

  /**
   * Appends a record to the next group commit. `written` runs synchronously right after the write succeeds
   * (before any compaction can snapshot the owner); the promise resolves at the same point.
   */
  append(record: JournalRecord, written?: () => void): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(new Error('InProcessBus: the bus is closed'));
    this.buffer.push(encodeRecord(record));
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

  /** Writes what is buffered, compacts, and stops taking records. */
  async close(): Promise<void> {
    this.compactWanted = !this.failure;
    this.schedule();
    await this.idle();
    this.closed = true;
    await this.handle?.close().catch(() => undefined);
  }

  private async idle(): Promise<void> {
    while (this.scheduled || this.running) {
      if (this.scheduled) {
        clearImmediate(this.scheduled);
        this.scheduled = undefined;
        this.running = this.drain();
      }
      await this.running;
    }
  }

  private schedule(): void {
    if (this.scheduled || this.running) return;
    this.scheduled = setImmediate(() => {
      this.scheduled = undefined;
      this.running = this.drain();
    });
  }

  /** The one writer: group commits and compactions never overlap. */
  private async drain(): Promise<void> {
    try {
      while (!this.failure && (this.buffer.length > 0 || this.pendingAcks.size > 0 || this.compactWanted)) {
        if (this.buffer.length > 0 || this.pendingAcks.size > 0) await this.commit();
        const dead = this.bytes - this.owner.liveBytes;
        if (this.compactWanted || (dead > this.options.compactAfterDeadBytes && dead > this.owner.liveBytes)) {
          this.compactWanted = false;
          await this.rewrite().catch((error) => (this.failure = error));
        }
      }
    } finally {
      this.running = undefined;
      if (this.failure) {
        for (const waiter of this.waiters.splice(0)) waiter.reject(this.failure);
        this.buffer = [];
        this.onWritten = [];
      }
    }
  }

  private async commit(): Promise<void> {
    for (const [durable, seqs] of this.pendingAcks) this.buffer.push(encodeRecord({ k: 'ack', c: durable, q: seqs }));
    const data = this.buffer.join('');
    const written = this.onWritten;
    const waiters = this.waiters;
    this.buffer = [];
    this.onWritten = [];
    this.waiters = [];
    this.pendingAcks = new Map();
    try {
      await this.handle!.write(data);
      if (this.options.fsync) await this.handle!.sync();
    } catch (error) {
      this.failure = error;
      for (const waiter of waiters) waiter.reject(error);
      return;
    }
    this.bytes += Buffer.byteLength(data);
    this.writes++;
    for (const callback of written) callback();
    for (const waiter of waiters) waiter.resolve();
  }

  /** Replaces the file with the owner's live records (synced, then renamed over the old file). */
  private async rewrite(): Promise<void> {
    const data = this.owner.snapshot().map(encodeRecord).join('');
    const temp = tempOf(this.file);
    // Owner-only: the records carry raw payloads, candidate outputs among them.
    const out = await fsp.open(temp, 'w', 0o600);
    try {
      await out.write(data);
      await out.sync();
    } finally {
      await out.close();
    }
    await this.handle?.close();
    this.handle = undefined;
    await fsp.rename(temp, this.file);
    await syncDirectory(path.dirname(this.file));
    this.handle = await fsp.open(this.file, 'a');
    this.bytes = Buffer.byteLength(data);
    this.compactions++;
  }
}

function tempOf(file: string): string {
  return `${file}.compacting`;
}

/** Makes a rename durable; some platforms cannot open a directory, where this is best effort. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await fsp.open(dir, 'r').catch(() => undefined);
  if (!handle) return;
  await handle.sync().catch(() => undefined);
  await handle.close();
}

/**
 * One bus per directory: a lock file holding the owner's pid, created atomically (link of a complete
 * temporary file, so nobody ever reads a half-written pid). A lock whose process is gone is taken over.
 */
export async function acquireLock(dir: string): Promise<() => Promise<void>> {
  const lock = path.join(dir, 'LOCK');
  const temp = path.join(dir, `LOCK.${process.pid}.${Math.random().toString(36).slice(2)}`);
  await fsp.writeFile(temp, `${process.pid}\n`);
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await fsp.link(temp, lock);
        return async () => {
          const holder = await fsp.readFile(lock, 'utf8').catch(() => '');
          if (Number.parseInt(holder, 10) === process.pid) await fsp.rm(lock, { force: true });
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = Number.parseInt(await fsp.readFile(lock, 'utf8').catch(() => ''), 10);
      if (Number.isInteger(holder) && holder > 0 && isAlive(holder)) {
        throw new Error(
          `InProcessBus: ${dir} is already in use by process ${holder}${holder === process.pid ? ' (this process)' : ''}; ` +
            `one bus per directory (lock file ${lock})`,
        );
      }
      // Stale: its process died without closing the bus.
      await fsp.rm(lock, { force: true });
    }
    throw new Error(`InProcessBus: could not take the lock ${lock}`);
  } finally {
    await fsp.rm(temp, { force: true });
  }
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
