import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * PostgreSQL without a server, for the embedded all-in-one default (issue 7): PGlite (WASM Postgres, so the
 * same migrations and append-only triggers run) behind its socket server, reached with the ordinary `pg`
 * driver. PGlite has one session; the socket server admits one connection at a time and the data source
 * must use a pool of one, so transactions are serialised instead of sharing a session - a rollback can
 * never take another caller's committed row with it (proved by embedded-postgres.int-spec.ts). PGlite is
 * loaded on the first call only: a service process of a deployment never pays for its WASM.
 */
export interface EmbeddedPostgres {
  /** A connection string for `createDataSource` (use poolSize 1). */
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * `dataDir` undefined: in memory; a directory: persisted there and reopened on the next start.
 * `socketDir`: listen on a Unix socket in that directory (which should be private, 0700) instead of a
 * loopback TCP port - PGlite trusts whoever connects, and a TCP port is open to every local user. Socket
 * paths are limited to about 100 bytes, so a directory too deep for one falls back to loopback TCP.
 */
export async function startEmbeddedPostgres(dataDir?: string, options: { socketDir?: string } = {}): Promise<EmbeddedPostgres> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const db = await PGlite.create(dataDir);
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

/** sun_path is 108 bytes on Linux, 104 on macOS, including the terminating NUL. */
const MAX_SOCKET_PATH = 100;
