import { Duplex } from 'node:stream';

/** What the stream uses of a PGlite instance. */
export interface PGliteSession {
  readonly closed: boolean;
  runExclusive<T>(fn: () => Promise<T>): Promise<T>;
  execProtocolRawStream(message: Uint8Array, options: { onRawData: (chunk: Uint8Array) => void }): Promise<void>;
  isInTransaction(): boolean;
  exec(query: string): Promise<unknown>;
}

/**
 * The `pg` driver's connection to a PGlite in the same process, without a socket: what `pg` writes (the
 * PostgreSQL wire protocol) is handed to PGlite's `execProtocolRawStream`, and PGlite's answer is what `pg`
 * reads.
 * It replaces `@electric-sql/pglite-socket` on the embedded all-in-one's hot path, which cost a Unix-socket
 * round trip, a buffer concatenation and an exclusive PGlite call per protocol message (five per
 * parameterised query); here every message `pg` wrote in one tick goes to PGlite in one call.
 *
 * PGlite has a single session, so `InProcessPgSlot` admits one connection at a time (as the socket server
 * did with maxConnections 1) and the data source uses a pool of one: transactions are serialised, never
 * interleaved in one session. A connection that ends or breaks inside a transaction rolls it back, so the
 * next one starts clean.
 *
 * `COPY ... FROM STDIN` is held until its end: PGlite reads a COPY's data from the same call as the statement
 * (a statement whose data is not there ends the whole process), while a client sends the data only after the
 * server's CopyInResponse. So the stream answers that CopyInResponse itself, keeps the statement and the
 * CopyData messages, and hands PGlite all of them at once with the CopyDone (or CopyFail) - dropping PGlite's
 * own CopyInResponse from the answer. A connection that ends before its CopyDone sends PGlite nothing of it.
 */
export class PGliteWireStream extends Duplex {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private draining = false;
  private started = false;
  private connected = false;
  private finished = false;
  /** A `COPY ... FROM STDIN` and the CopyData after it, until its CopyDone or CopyFail. */
  private copyIn: Buffer[] | undefined;
  /** Terminate written, or ending: a connection opened meanwhile waits for this one's slot, not refused. */
  closing = false;

  constructor(
    private readonly db: PGliteSession,
    private readonly slot: InProcessPgSlot,
  ) {
    super({ allowHalfOpen: false });
  }

  // The parts of net.Socket that pg's Connection calls.
  connect(): this {
    this.slot.acquire(this).then(
      () => {
        if (this.destroyed) return this.slot.release(this);
        this.connected = true;
        this.emit('connect');
      },
      (error: Error) => this.destroy(error),
    );
    return this;
  }

  setNoDelay(): this {
    return this;
  }

  setKeepAlive(): this {
    return this;
  }

  ref(): this {
    return this;
  }

  unref(): this {
    return this;
  }

  override _read(): void {
    // Answers are pushed as PGlite produces them.
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.enqueue(chunk);
    callback();
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, callback: (error?: Error | null) => void): void {
    for (const { chunk } of chunks) this.enqueue(chunk);
    callback();
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.closing = true;
    this.finish().then(() => {
      this.push(null);
      callback();
    }, callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.closing = true;
    this.finish().then(
      () => callback(error),
      (rollbackError: unknown) => callback(error ?? (rollbackError as Error)),
    );
  }

  private enqueue(chunk: Buffer): void {
    if (!this.connected || this.finished) return;
    // pg writes Terminate on its own as it ends a connection (a pool retiring an idle client).
    if (chunk.length === 5 && chunk[0] === TERMINATE) this.closing = true;
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    // pg writes a query's Parse, Bind, Describe, Execute and Sync one after the other in one tick.
    if (!this.draining) {
      this.draining = true;
      queueMicrotask(() => void this.drain());
    }
  }

  private async drain(): Promise<void> {
    try {
      while (this.pendingBytes > 0 && !this.finished) {
        const data = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes);
        const { messages, rest, terminate } = this.split(data);
        this.pending = rest.length > 0 ? [rest] : [];
        this.pendingBytes = rest.length;
        for (const part of this.copyParts(messages)) {
          if (part.kind === 'copy-start') {
            this.copyIn = [part.bytes];
            if (!this.destroyed) this.push(COPY_IN_RESPONSE);
          } else if (part.kind === 'copy-data') {
            this.copyIn!.push(part.bytes);
          } else if (part.kind === 'copy-end') {
            const held = [...this.copyIn!, part.bytes];
            this.copyIn = undefined;
            await this.exchange(Buffer.concat(held), true);
          } else {
            await this.exchange(part.bytes, false);
          }
        }
        if (terminate) {
          await this.finish();
          this.push(null);
          return;
        }
        if (messages.length === 0) break; // an incomplete message: wait for the rest
      }
    } catch (error) {
      this.destroy(error as Error);
    } finally {
      this.draining = false;
    }
  }

  /**
   * One call to PGlite with complete messages; its answer goes to `pg`. Streamed, not execProtocolRaw: without
   * a callback of its own, PGlite parses every answer itself (and keeps what it parsed) before `pg` parses it
   * again. A chunk is a view of WASM memory, so it is copied; all are handed to `pg` after the call, never from
   * inside PGlite. For a held COPY, the CopyInResponse `pg` already has from this stream is left out.
   */
  private async exchange(messages: Buffer, heldCopy: boolean): Promise<void> {
    if (messages.length === 0) return;
    const answer: Buffer[] = [];
    await this.db.runExclusive(() => this.db.execProtocolRawStream(messages, { onRawData: (chunk) => void answer.push(Buffer.from(chunk)) }));
    let data = answer.length === 1 ? answer[0]! : Buffer.concat(answer);
    if (heldCopy) data = withoutFirst(data, COPY_IN);
    if (data.length > 0 && !this.destroyed) this.push(data);
  }

  /**
   * `messages` (complete ones) cut where a `COPY ... FROM STDIN` starts and ends, so that its statement and
   * data reach PGlite in one call. Outside a COPY, every run of messages is one `plain` part.
   */
  private copyParts(messages: Buffer): Array<{ kind: 'plain' | 'copy-start' | 'copy-data' | 'copy-end'; bytes: Buffer }> {
    const parts: Array<{ kind: 'plain' | 'copy-start' | 'copy-data' | 'copy-end'; bytes: Buffer }> = [];
    let inCopy = this.copyIn !== undefined;
    let from = 0;
    let at = 0;
    while (at < messages.length) {
      const type = messages[at]!;
      const end = at + 1 + messages.readInt32BE(at + 1);
      if (inCopy && (type === COPY_DONE || type === COPY_FAIL)) {
        if (at > from) parts.push({ kind: 'copy-data', bytes: messages.subarray(from, at) });
        parts.push({ kind: 'copy-end', bytes: messages.subarray(at, end) });
        inCopy = false;
        from = end;
      } else if (!inCopy && type === QUERY && isCopyFromStdin(messages, at + 5, end)) {
        if (at > from) parts.push({ kind: 'plain', bytes: messages.subarray(from, at) });
        parts.push({ kind: 'copy-start', bytes: messages.subarray(at, end) });
        inCopy = true;
        from = end;
      }
      at = end;
    }
    if (from < messages.length) parts.push({ kind: inCopy ? 'copy-data' : 'plain', bytes: messages.subarray(from) });
    return parts;
  }

  /**
   * The complete messages at the front of `data` (the first one of a connection is the untyped startup
   * message), stopping before a Terminate, which ends the connection here instead of reaching PGlite's
   * single session.
   */
  private split(data: Buffer): { messages: Buffer; rest: Buffer; terminate: boolean } {
    let at = 0;
    if (!this.started) {
      if (data.length < 4 || data.length < data.readInt32BE(0)) return { messages: data.subarray(0, 0), rest: data, terminate: false };
      this.started = true;
      // The startup message goes alone: PGlite answers it on a path of its own.
      const end = data.readInt32BE(0);
      return { messages: data.subarray(0, end), rest: data.subarray(end), terminate: false };
    }
    while (at + 5 <= data.length) {
      if (data[at] === TERMINATE) return { messages: data.subarray(0, at), rest: data.subarray(0, 0), terminate: true };
      const end = at + 1 + data.readInt32BE(at + 1);
      if (end > data.length) break;
      at = end;
    }
    return { messages: data.subarray(0, at), rest: data.subarray(at), terminate: false };
  }

  /** Ends the session's part in this connection: an open transaction is rolled back, the slot freed. */
  private async finish(): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    this.copyIn = undefined;
    this.pending = [];
    this.pendingBytes = 0;
    if (!this.connected) return;
    try {
      if (!this.db.closed && this.db.isInTransaction()) await this.db.exec('ROLLBACK');
    } finally {
      this.slot.release(this);
    }
  }
}

/** 'X': the client ends the connection. */
const TERMINATE = 0x58;
/** 'Q': a simple query. */
const QUERY = 0x51;
/** 'c' and 'f': the end of a COPY's data, done or failed. */
const COPY_DONE = 0x63;
const COPY_FAIL = 0x66;
/** 'G': CopyInResponse. */
const COPY_IN = 0x47;
/** The CopyInResponse this stream answers for a held COPY: text format, no per-column formats (`pg` reads neither). */
const COPY_IN_RESPONSE = Buffer.from([COPY_IN, 0, 0, 0, 7, 0, 0, 0]);

/** Whether the query text of a 'Q' message (bytes `from`..`end`) is a `COPY ... FROM STDIN`. */
function isCopyFromStdin(message: Buffer, from: number, end: number): boolean {
  const head = message.toString('latin1', from, Math.min(end, from + 64));
  if (!/^\s*copy\s/i.test(head)) return false;
  return /\bfrom\s+stdin\b/i.test(message.toString('utf8', from, end - 1));
}

/** `data` (whole messages) without the first message of this type. */
function withoutFirst(data: Buffer, type: number): Buffer {
  for (let at = 0; at + 5 <= data.length; at += 1 + data.readInt32BE(at + 1)) {
    if (data[at] === type) return Buffer.concat([data.subarray(0, at), data.subarray(at + 1 + data.readInt32BE(at + 1))]);
  }
  return data;
}

/**
 * The single session of one PGlite: at most one connection holds it. A connection opened while the holder is
 * closing (a pool replacing a client) waits for it; one opened beside a live holder is refused, as the
 * socket server refused a second connection.
 */
export class InProcessPgSlot {
  private holder: PGliteWireStream | undefined;
  private readonly waiting: Array<{ stream: PGliteWireStream; resolve(): void }> = [];

  acquire(stream: PGliteWireStream): Promise<void> {
    if (!this.holder) {
      this.holder = stream;
      return Promise.resolve();
    }
    if (!this.holder.closing) {
      return Promise.reject(new Error('embedded PostgreSQL: PGlite has one session and another connection holds it (use a pool of one)'));
    }
    return new Promise((resolve) => this.waiting.push({ stream, resolve }));
  }

  release(stream: PGliteWireStream): void {
    if (this.holder !== stream) return;
    const next = this.waiting.shift();
    this.holder = next?.stream;
    next?.resolve();
    if (!this.holder) for (const done of this.released.splice(0)) done();
  }

  private readonly released: Array<() => void> = [];

  /** Before PGlite closes: ends every connection (rolling back what they had open) and waits for it. */
  async close(): Promise<void> {
    for (const { stream } of this.waiting.splice(0)) stream.destroy(new Error('embedded PostgreSQL: stopped'));
    const holder = this.holder;
    if (!holder) return;
    const gone = new Promise<void>((resolve) => this.released.push(resolve));
    holder.destroy();
    await gone;
  }
}
