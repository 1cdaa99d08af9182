import { type MessagePort, Worker } from 'node:worker_threads';
import type { PGliteSession } from './pglite-wire.stream';

/**
 * The worker's program, plain JavaScript evaluated by `new Worker(..., { eval: true })` so that it runs the
 * same from the TypeScript sources and from the build. It opens PGlite and answers the requests of one
 * WorkerPGlite, one at a time and in order - PGlite has a single session, so nothing may interleave.
 */
const HOST_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { PGlite } = require(workerData.pglite);
let queue = Promise.resolve();

function reply(message, transfer) {
  parentPort.postMessage(message, transfer);
}

async function handle(db, request) {
  try {
    if (request.op === 'protocol') {
      const chunks = [];
      let size = 0;
      // A chunk is a view of WASM memory: copied before PGlite reuses it.
      await db.runExclusive(() => db.execProtocolRawStream(request.bytes, { onRawData: (chunk) => { chunks.push(chunk.slice()); size += chunk.length; } }));
      let answer = chunks.length === 1 ? chunks[0] : new Uint8Array(size);
      if (chunks.length > 1) { let at = 0; for (const chunk of chunks) { answer.set(chunk, at); at += chunk.length; } }
      reply({ id: request.id, answer, inTransaction: db.isInTransaction() }, [answer.buffer]);
    } else if (request.op === 'exec') {
      await db.exec(request.sql);
      reply({ id: request.id, inTransaction: db.isInTransaction() });
    } else if (request.op === 'close') {
      await db.close();
      reply({ id: request.id, inTransaction: false });
    }
  } catch (error) {
    reply({ id: request.id, error: String((error && error.message) || error), inTransaction: db.closed ? false : db.isInTransaction() });
  }
}

// PGlite's WASM is compiled while the data directory may still be being written (the gate: the unpack worker's
// answer, straight from that thread); PGlite opens the directory once both are done.
// The file's bytes are not kept: only the compiled module is needed.
const compiled = WebAssembly.compile(require('node:fs').readFileSync(require('node:path').join(require('node:path').dirname(workerData.pglite), 'pglite.wasm')));
const written = workerData.gate ? new Promise((resolve) => workerData.gate.once('message', (ok) => { workerData.gate.close(); resolve(ok); })) : Promise.resolve(true);
Promise.all([compiled, written]).then(([pgliteWasmModule, ok]) => {
  if (!ok) throw new Error('the data directory was not written');
  return PGlite.create(workerData.dataDir, { pgliteWasmModule, startParams: [...PGlite.defaultStartParams, ...workerData.settings] });
}).then(
  (db) => {
    parentPort.on('message', (request) => { queue = queue.then(() => handle(db, request)); });
    reply({ ready: true });
  },
  (error) => reply({ failed: String((error && error.message) || error) }),
);
`;

/**
 * The worker's JavaScript is thin - PGlite's glue and one request's bytes at a time, whose buffers live outside
 * V8's heap - but V8 grew its young generation as for any isolate, and a collection seldom came before the
 * command ended: 4 MiB of young generation put a first 10 000-case `evals run` 5-10 MiB lower at its peak
 * (issue 31, round 3). Its old generation keeps V8's default limit: nothing is capped that a large run needs.
 */
const WORKER_HEAP = { maxYoungGenerationSizeMb: 4 };

interface Reply {
  readonly id?: number;
  readonly ready?: true;
  readonly failed?: string;
  readonly answer?: Uint8Array;
  readonly inTransaction?: boolean;
  readonly error?: string;
}

/**
 * PGlite in a worker thread of its own, behind the same session interface as an in-process instance, so
 * that PGliteWireStream hands it `pg`'s protocol bytes unchanged. Why: PGlite's WASM is CPU on the thread
 * that calls it. On the worker, the all-in-one's JavaScript (HTTP, scoring, the `pg` driver, projections)
 * and PostgreSQL's work run on two cores; and PGlite's start (about a second of WASM) runs while the main
 * thread is still loading the framework's modules (issue 15, docs/benchmarks.md).
 * A request costs one message each way (the bytes are transferred, not copied again); `evals run` of
 * 10 000 cases makes about 600.
 */
export class WorkerPGlite implements PGliteSession {
  /** Resolves once PGlite is open in the worker; rejects with its reason if it cannot open. */
  readonly ready: Promise<void>;
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve(reply: Reply): void; reject(error: Error): void }>();
  private nextId = 1;
  private inTransaction = false;
  private stopped: Error | undefined;
  private closing: Promise<void> | undefined;

  /**
   * Starts the worker now - synchronously, so that it runs while the caller goes on loading modules. With a
   * `gate`, PGlite is loaded and its WASM compiled at once, but the directory is opened only when `true`
   * arrives on it (unpackTemplate's `notify`); `false` fails the start.
   */
  constructor(dataDir: string | undefined, settings: readonly string[], gate?: MessagePort) {
    this.worker = new Worker(HOST_SOURCE, {
      eval: true,
      resourceLimits: WORKER_HEAP,
      workerData: { pglite: require.resolve('@electric-sql/pglite'), dataDir, settings, gate },
      transferList: gate ? [gate] : [],
    });
    this.ready = new Promise<void>((resolve, reject) => {
      this.worker.once('message', (first: Reply) => {
        if (first.ready) {
          this.worker.on('message', (reply: Reply) => this.settle(reply));
          this.idle();
          resolve();
        } else {
          reject(new Error(`embedded PostgreSQL: PGlite did not open: ${first.failed ?? 'no reason given'}`));
          void this.worker.terminate();
        }
      });
      this.worker.once('error', reject);
      this.worker.once('exit', (code: number) => reject(new Error(`embedded PostgreSQL: the PGlite worker stopped before PGlite opened (exit ${code})`)));
    });
    this.worker.on('error', (error: Error) => this.fail(error));
    this.worker.on('exit', (code: number) => this.fail(new Error(`embedded PostgreSQL: the PGlite worker stopped (exit ${code})`)));
  }

  get closed(): boolean {
    return this.stopped !== undefined;
  }

  /** The worker runs one request at a time, in the order sent. */
  runExclusive<T>(fn: () => Promise<T>): Promise<T> {
    return fn();
  }

  async execProtocolRawStream(message: Uint8Array, options: { onRawData: (chunk: Uint8Array) => void }): Promise<void> {
    // A copy of exactly these bytes, owned by nothing else, so it can be transferred instead of cloned.
    const bytes = new Uint8Array(message);
    const reply = await this.call({ op: 'protocol', bytes }, [bytes.buffer]);
    if (reply.answer && reply.answer.length > 0) options.onRawData(reply.answer);
  }

  isInTransaction(): boolean {
    return this.inTransaction;
  }

  async exec(sql: string): Promise<unknown> {
    return this.call({ op: 'exec', sql });
  }

  /** Closes PGlite (a clean shutdown of its data directory), then ends the worker. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (!this.stopped) await this.call({ op: 'close' }).catch(() => undefined);
      await this.worker.terminate();
    })();
    return this.closing;
  }

  private call(request: Record<string, unknown>, transfer: ArrayBuffer[] = []): Promise<Reply> {
    if (this.stopped) return Promise.reject(this.stopped);
    const id = this.nextId++;
    // Referenced while a request is out, so the process waits for its answer; unreferenced when idle, so a
    // process that forgot to close its database still exits.
    if (this.pending.size === 0) this.worker.ref();
    return new Promise<Reply>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...request, id }, transfer);
    });
  }

  private settle(reply: Reply): void {
    const waiting = reply.id === undefined ? undefined : this.pending.get(reply.id);
    if (!waiting) return;
    this.pending.delete(reply.id!);
    if (this.pending.size === 0) this.idle();
    if (reply.inTransaction !== undefined) this.inTransaction = reply.inTransaction;
    if (reply.error !== undefined) waiting.reject(new Error(reply.error));
    else waiting.resolve(reply);
  }

  private idle(): void {
    this.worker.unref();
  }

  private fail(error: Error): void {
    this.stopped ??= error;
    this.inTransaction = false;
    for (const waiting of this.pending.values()) waiting.reject(error);
    this.pending.clear();
  }
}
