import { Client, Pool } from 'pg';
import { inProcessPgStream, startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres';

// The embedded default's connection path (issue 15): `pg` talks to PGlite in this process through a stream,
// no socket. PGlite has one session, so the stream must keep what the socket server with one connection
// kept: one connection at a time, nothing of a broken connection's transaction left for the next one.
// PGlite loads its WASM through a dynamic import: run with --experimental-vm-modules (npm run test:int).
// The same holds with PGlite in a worker thread (pglite-worker.ts, what the all-in-one runs on).
describe.each(['in-process', 'worker'] as const)('integration: pg to PGlite, connection %s', (connection) => {
  let pg: EmbeddedPostgres;
  const client = () => new Client({ connectionString: pg.url, stream: inProcessPgStream(pg.url)! });

  beforeAll(async () => {
    pg = await startEmbeddedPostgres(undefined, { connection });
    const c = client();
    await c.connect();
    await c.query('CREATE TABLE t (v text)');
    await c.end();
  }, 120_000);

  afterAll(async () => {
    await pg.stop();
  });

  it('is only for its own URL, and gone once stopped', async () => {
    expect(inProcessPgStream(pg.url)).toBeDefined();
    expect(inProcessPgStream('postgres://postgres@localhost:5432/postgres')).toBeUndefined();
    const other = await startEmbeddedPostgres(undefined, { connection });
    const url = other.url;
    expect(url).not.toBe(pg.url);
    await other.stop();
    expect(inProcessPgStream(url)).toBeUndefined();
  }, 120_000);

  it('answers the extended protocol, errors included, and keeps the connection usable after an error', async () => {
    const c = client();
    await c.connect();
    try {
      const big = 'x'.repeat(3 * 1024 * 1024); // larger than PGlite's 1 MiB receive buffer
      const { rows } = await c.query<{ n: number; h: string }>('SELECT length($1::text) AS n, md5($1::text) AS h', [big]);
      expect(rows[0]!.n).toBe(big.length);
      await expect(c.query('SELECT * FROM no_such_table')).rejects.toThrow(/no_such_table/);
      expect((await c.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      for (let i = 0; i < 20; i++) expect((await c.query<{ i: number }>('SELECT $1::int AS i', [i])).rows).toEqual([{ i }]);
    } finally {
      await c.end();
    }
  });

  it('refuses a second connection while one holds the session', async () => {
    const first = client();
    await first.connect();
    try {
      await expect(client().connect()).rejects.toThrow(/one session/);
      expect((await first.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await first.end();
    }
  });

  it('rolls back the transaction of a connection that breaks, so the next one starts clean', async () => {
    const first = client();
    await first.connect();
    first.on('error', () => undefined);
    await first.query('BEGIN');
    await first.query(`INSERT INTO t VALUES ('broken')`);
    const ended = new Promise((resolve) => first.once('end', resolve));
    (first as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    await ended;
    const next = client();
    await next.connect();
    try {
      expect((await next.query(`SELECT v FROM t WHERE v = 'broken'`)).rows).toEqual([]);
      // Not inside the broken connection's transaction: a commit here would have nothing to commit.
      await next.query('BEGIN');
      await next.query(`INSERT INTO t VALUES ('kept')`);
      await next.query('COMMIT');
      expect((await next.query(`SELECT v FROM t`)).rows).toEqual([{ v: 'kept' }]);
    } finally {
      await next.end();
    }
  });

  it('lets a pool of one retire an idle connection and open the next one at once', async () => {
    const pool = new Pool({ connectionString: pg.url, stream: inProcessPgStream(pg.url)!, max: 1, idleTimeoutMillis: 20 });
    try {
      for (let round = 0; round < 5; round++) {
        expect((await pool.query<{ r: number }>('SELECT $1::int AS r', [round])).rows).toEqual([{ r: round }]);
        await new Promise((resolve) => setTimeout(resolve, 40)); // the idle client is ended meanwhile
      }
      // A client ended and a new one connected in the same tick: the new one waits for the slot.
      const a = client();
      await a.connect();
      const closing = a.end();
      const b = client();
      await b.connect();
      await closing;
      expect((await b.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      await b.end();
    } finally {
      await pool.end();
    }
  });
});
