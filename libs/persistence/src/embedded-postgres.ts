
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

/** `dataDir` undefined: in memory; a directory: persisted there and reopened on the next start. */
export async function startEmbeddedPostgres(dataDir?: string): Promise<EmbeddedPostgres> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const db = await PGlite.create(dataDir);
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 1 });
  await server.start();
  const address = server.getServerConn();
  const port = Number(address.split(':').pop());
  if (!Number.isInteger(port) || port <= 0) {
    await server.stop();
    await db.close();
    throw new Error('embedded PostgreSQL: the socket server reported no port');
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
