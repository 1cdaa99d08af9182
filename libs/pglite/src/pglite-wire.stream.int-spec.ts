import { Client, Pool } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
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
    await c.query('CREATE TABLE k (id int PRIMARY KEY, v text)');
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

  /** Breaks a client's connection under it (its stream destroyed), and waits for the client to see it end. */
  async function breakConnection(c: Client): Promise<void> {
    const ended = new Promise((resolve) => c.once('end', resolve));
    (c as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    await ended;
  }

  /** A COPY FROM STDIN of `data`, written in chunks of `chunk` bytes (each its own CopyData message). */
  function copy(c: Client, statement: string, data: string, chunk = 1000): Promise<number> {
    const stream = c.query(copyFrom(statement));
    return new Promise((resolve, reject) => {
      stream.on('error', reject);
      stream.on('finish', () => resolve(stream.rowCount));
      for (let at = 0; at < data.length; at += chunk) stream.write(data.slice(at, at + chunk));
      stream.end();
    });
  }

  // PGlite takes a COPY's data only in the same call as its statement (without it, the process exits): the
  // stream holds the COPY until its CopyDone (issue 15, the evidence insert by COPY).
  it('takes COPY FROM STDIN in CopyData messages of any size, inside a transaction, and answers its row count', async () => {
    const c = client();
    await c.connect();
    try {
      const rows = Array.from({ length: 5_000 }, (_, i) => `${i},"v ""${i}"", with comma\nand a line"`);
      await c.query('BEGIN');
      expect(await copy(c, 'COPY k (id, v) FROM STDIN WITH (FORMAT csv)', `${rows.join('\n')}\n`, 777)).toBe(5_000);
      expect((await c.query<{ n: number }>('SELECT count(*)::int AS n FROM k')).rows).toEqual([{ n: 5_000 }]);
      await c.query('COMMIT');
      expect((await c.query<{ v: string }>('SELECT v FROM k WHERE id = 7')).rows).toEqual([{ v: 'v "7", with comma\nand a line' }]);
      expect((await c.query<{ n: number }>('SELECT count(*)::int AS n FROM k')).rows).toEqual([{ n: 5_000 }]);
    } finally {
      await c.query('TRUNCATE k');
      await c.end();
    }
  });

  it('answers a COPY that fails - on a row, or as a statement - with its error, and the session goes on', async () => {
    const c = client();
    await c.connect();
    try {
      await c.query(`INSERT INTO k VALUES (2, 'there')`);
      await c.query('BEGIN');
      await c.query('SAVEPOINT before_copy');
      await expect(copy(c, 'COPY k (id, v) FROM STDIN WITH (FORMAT csv)', '1,a\n2,b\n3,c\n')).rejects.toMatchObject({ code: '23505' });
      await c.query('ROLLBACK TO SAVEPOINT before_copy');
      await expect(copy(c, 'COPY k (id, no_such_column) FROM STDIN WITH (FORMAT csv)', '4,d\n')).rejects.toThrow(/no_such_column/);
      await c.query('ROLLBACK');
      await expect(copy(c, 'COPY k (id, v) FROM STDIN WITH (FORMAT csv)', 'not a number,x\n')).rejects.toMatchObject({ code: '22P02' });
      expect((await c.query<{ id: number }>('SELECT id FROM k ORDER BY id')).rows).toEqual([{ id: 2 }]);
      expect(await copy(c, 'COPY k (id, v) FROM STDIN WITH (FORMAT csv)', '5,e\n')).toBe(1);
    } finally {
      await c.query('TRUNCATE k');
      await c.end();
    }
  });

  it('sends PGlite nothing of a COPY whose connection breaks before its CopyDone: PGlite and the next connection go on', async () => {
    const first = client();
    await first.connect();
    first.on('error', () => undefined);
    await first.query('BEGIN');
    const stream = first.query(copyFrom('COPY k (id, v) FROM STDIN WITH (FORMAT csv)'));
    stream.on('error', () => undefined);
    stream.write('10,half\n');
    await new Promise((resolve) => setImmediate(resolve));
    await breakConnection(first);
    const next = client();
    await next.connect();
    try {
      expect((await next.query<{ n: number }>('SELECT count(*)::int AS n FROM k')).rows).toEqual([{ n: 0 }]);
      expect(await copy(next, 'COPY k (id, v) FROM STDIN WITH (FORMAT csv)', '11,whole\n')).toBe(1);
    } finally {
      await next.query('TRUNCATE k');
      await next.end();
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
    await breakConnection(first);
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
