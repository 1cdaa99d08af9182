import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Duplex } from 'node:stream';
import * as v8 from 'node:v8';
import { MessageChannel, Worker } from 'node:worker_threads';
import { templateFile, unpackTemplate } from './data-dir-template';
import { WorkerPGlite } from './pglite-worker';
import { InProcessPgSlot, PGliteWireStream, type PGliteSession } from './pglite-wire.stream';

/**
 * PostgreSQL without a server, for the embedded all-in-one default (issue 7): PGlite (WASM Postgres, so the
 * same migrations and append-only triggers run), reached with the ordinary `pg` driver - by default over an
 * in-process stream that hands the wire protocol straight to PGlite (pglite-wire.stream.ts), or through
 * PGlite's socket server. PGlite has one session; either path admits one connection at a time and the data
 * source must use a pool of one, so transactions are serialised instead of sharing a session - a rollback
 * can never take another caller's committed row with it (proved by embedded-postgres.int-spec.ts). PGlite
 * is loaded on the first call only: a service process of a deployment never pays for its WASM.
 */
export interface EmbeddedPostgres {
  /** A connection string for `createDataSource` (use poolSize 1). */
  readonly url: string;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /**
   * `in-process` (the default): the URL is usable by `createDataSource` in this process only, whose `pg`
   * connection talks to PGlite directly - no socket, no second parse of every message. `socket`: PGlite's
   * socket server, for a client that is not `createDataSource` in this process. `worker`: as `in-process`,
   * with PGlite in a worker thread (pglite-worker.ts) - PostgreSQL's work on another core than this
   * process's JavaScript, and its start under way before this call returns, while the caller goes on.
   */
  readonly connection?: 'in-process' | 'worker' | 'socket';
  /**
   * With `socket`: listen on a Unix socket in that directory (which should be private, 0700) instead of a
   * loopback TCP port - PGlite trusts whoever connects, and a TCP port is open to every local user. Socket
   * paths are limited to about 100 bytes, so a directory too deep for one falls back to loopback TCP.
   */
  readonly socketDir?: string;
  /**
   * `baseline`: PostgreSQL's WASM runs as V8's baseline compiler (Liftoff) leaves it, never recompiled by the
   * optimising one (TurboFan). For a short-lived process: a first 10 000-case `evals run` peaked 50-70 MiB
   * lower (its background recompiles' zones and the second copy of the hot code, in malloc arenas that
   * glibc keeps), at no measured cost to its wall, which its whole optimising tier-up rarely repays
   * (issue 31, docs/benchmarks.md). V8's flag is the process's: every module it compiles afterwards is
   * baseline too. `optimising` (the default): V8's own tiering, for `evals serve`.
   */
  readonly wasmTier?: 'optimising' | 'baseline';
}

/** The V8 flags a start raises before PGlite's WASM is compiled. */
export function wasmTierFlags(tier: EmbeddedPostgresOptions['wasmTier']): string[] {
  return tier === 'baseline' ? ['--liftoff-only'] : [];
}

/** `dataDir` undefined: in memory; a directory: persisted there and reopened on the next start. */
export async function startEmbeddedPostgres(dataDir?: string, options: EmbeddedPostgresOptions = {}): Promise<EmbeddedPostgres> {
  const fresh = dataDir !== undefined && !fs.existsSync(path.join(dataDir, 'PG_VERSION'));
  for (const flag of wasmTierFlags(options.wasmTier)) v8.setFlagsFromString(flag);
  if (options.connection === 'worker') {
    // The first workers are created before this function first awaits: the start runs while the caller goes on
    // loading modules.
    const settings = PGLITE_SETTINGS.flatMap((setting) => ['-c', setting]);
    const db = fresh ? await openNewDirectory(dataDir!, settings) : new WorkerPGlite(dataDir, settings);
    try {
      await db.ready;
    } catch (error) {
      await db.close();
      throw error;
    }
    return inProcess(db);
  }
  if (fresh) await initialise(dataDir!);
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create(dataDir, { startParams: [...PGlite.defaultStartParams, ...PGLITE_SETTINGS.flatMap((setting) => ['-c', setting])] });
  if ((options.connection ?? 'in-process') === 'in-process') return inProcess(db);
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const socketPath = options.socketDir ? path.join(path.resolve(options.socketDir), '.s.PGSQL.5432') : undefined;
  const useSocket = socketPath !== undefined && Buffer.byteLength(socketPath) <= MAX_SOCKET_PATH;
  if (useSocket) fs.rmSync(socketPath, { force: true }); // left by a process that died
  const server = new PGLiteSocketServer(useSocket ? { db, path: socketPath, maxConnections: 1 } : { db, host: '127.0.0.1', port: 0, maxConnections: 1 });
  const stop = async () => {
    await server.stop();
    await db.close();
  };
  await server.start();
  if (useSocket) {
    // The pg driver finds `.s.PGSQL.<port>` in the directory given as host.
    return { url: `postgres://postgres@${encodeURIComponent(path.dirname(socketPath))}:5432/postgres`, stop };
  }
  const port = Number(server.getServerConn().split(':').pop());
  if (!Number.isInteger(port) || port <= 0) {
    await stop();
    throw new Error('embedded PostgreSQL: the socket server reported no port');
  }
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, stop };
}

/**
 * The embedded database's schemas (issue 27): the shared `public` and each app's beside it, as
 * libs/persistence's `deploymentSchemas('public')` names them (a spec there checks they agree). A server
 * connection sets its search_path in the startup packet; PGlite ignores startup options, so it is a setting.
 */
export const EMBEDDED_SEARCH_PATH = 'public,ingestion,scoring,regression,read_model';

/**
 * Postgres settings for every start (not written to postgresql.conf). PGlite's initdb leaves the server's
 * default shared_buffers of 128MB, which postgres zeroes at start - 128 MB of resident WASM memory before
 * the first query, never given back. A single-session embedded database works on the pages of its current
 * writes: 16MB keeps it (idle `evals serve` 444 -> 325 MiB) at no measured cost to a 10 000-case run, since
 * evicted pages stay in the operating system's file cache (issue 15).
 */
const PGLITE_SETTINGS = ['shared_buffers=16MB', `search_path=${EMBEDDED_SEARCH_PATH}`];

/** A new data directory: unpacked from the template of initdb's output (data-dir-template.ts), or initdb without one. */
async function initialise(dataDir: string): Promise<void> {
  if (!(await unpackTemplate(dataDir))) await initdbInAWorker(dataDir);
}

/**
 * A new data directory for PGlite in a worker: the template is unpacked in one worker while PGlite's own loads
 * and compiles its WASM in another, which opens the directory the moment the first says it is written
 * (issue 31, round 4: on a first `evals run` PGlite's start no longer waits for the unpack, nor the unpack's
 * end for the caller's thread). Without a template, or with one this reader refuses, initdb as before.
 */
async function openNewDirectory(dataDir: string, settings: readonly string[]): Promise<WorkerPGlite> {
  const template = templateFile();
  if (fs.existsSync(template)) {
    const { port1, port2 } = new MessageChannel();
    const db = new WorkerPGlite(dataDir, settings, port2);
    const unpacked = await unpackTemplate(dataDir, template, port1).catch(async (error: unknown) => {
      await abandon(db);
      throw error;
    });
    if (unpacked) return db;
    await abandon(db);
  }
  await initdbInAWorker(dataDir);
  return new WorkerPGlite(dataDir, settings);
}

/** A worker whose directory was not written: it has been told so and fails its start; it is then ended. */
async function abandon(db: WorkerPGlite): Promise<void> {
  await db.ready.catch(() => undefined);
  await db.close();
}

/**
 * Without a template, a new data directory is initialised (PGlite's initdb) in a worker thread that then exits, and opened again
 * here. initdb grows PGlite's WASM memory to 450-650 MiB, and WASM memory is never given back while its
 * instance lives: opened in this process, a fresh `evals serve` kept it for its whole life. Initialised in a
 * worker, the memory goes with the worker; this process opens the finished directory as on any restart
 * (measured: 320 MiB resident after the open instead of 445-652, for about one more second on the very first
 * start only; issue 15).
 */
function initdbInAWorker(dataDir: string): Promise<void> {
  const pglite = require.resolve('@electric-sql/pglite');
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    import(workerData.pglite).then(async ({ PGlite }) => {
      const db = await PGlite.create(workerData.dataDir, { startParams: [...PGlite.defaultStartParams, ...workerData.settings] });
      await db.close();
      parentPort.postMessage('done');
    });`;
  const settings = PGLITE_SETTINGS.flatMap((setting) => ['-c', setting]);
  return new Promise<void>((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData: { pglite: pathToFileURL(pglite).href, dataDir: path.resolve(dataDir), settings } });
    let done = false;
    worker.once('message', () => (done = true));
    worker.once('error', reject);
    worker.once('exit', (code) => (done ? resolve() : reject(new Error(`embedded PostgreSQL: initdb of ${dataDir} ended without finishing (exit ${code})`))));
  });
}

/** sun_path is 108 bytes on Linux, 104 on macOS, including the terminating NUL. */
const MAX_SOCKET_PATH = 100;

/** The in-process PGlites of this process by URL host: what `createDataSource` connects through. */
const inProcessHosts = new Map<string, () => Duplex>();
let nextInProcess = 1;

function inProcess(db: PGliteSession & { close(): Promise<void> }): EmbeddedPostgres {
  const slot = new InProcessPgSlot();
  // `.invalid` (RFC 2606): should the URL ever reach another process, it resolves nowhere.
  const host = `pglite-${process.pid}-${nextInProcess++}.in-process.invalid`;
  inProcessHosts.set(host, () => new PGliteWireStream(db, slot));
  return {
    url: `postgres://postgres@${host}:5432/postgres`,
    async stop() {
      inProcessHosts.delete(host);
      await slot.close();
      await db.close();
    },
  };
}

/**
 * For `createDataSource`: the `pg` stream factory of a URL from `startEmbeddedPostgres` in this process
 * (undefined for any other URL), passed as the driver's `stream` option.
 */
export function inProcessPgStream(url: string): (() => Duplex) | undefined {
  if (inProcessHosts.size === 0) return undefined;
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return undefined;
  }
  return inProcessHosts.get(host);
}
