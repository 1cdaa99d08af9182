import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { Client } from 'pg';
import { templateFile, unpackTemplate } from './data-dir-template';
import { inProcessPgStream, startEmbeddedPostgres } from './embedded-postgres';
import { WorkerPGlite } from './pglite-worker';

/** The first message on a port (the unpack worker's answer to a waiting PGlite worker). */
const firstMessage = (port: MessagePort): Promise<unknown> =>
  new Promise((resolve) => {
    port.once('message', (m: unknown) => {
      port.close();
      resolve(m);
    });
  });

/** A new data directory unpacked from the template is a database PGlite opens, keeps and reopens (issue 31). */
describe('a data directory from the template', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-template-int-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('opens without initdb, takes writes and has them after a restart', async () => {
    const data = path.join(dir, 'postgres');
    // The installed PGlite has its template, so a new directory is unpacked, not initdb'ed (what that saves is
    // measured by bench:embedded, never by a timed test): a PGlite upgrade without `npm run pglite:template` fails here.
    expect(fs.existsSync(templateFile())).toBe(true);
    const first = await startEmbeddedPostgres(data);
    expect(fs.existsSync(path.join(data, 'PG_VERSION'))).toBe(true);
    const query = async (pg: { url: string }, sql: string) => {
      const client = new Client({ connectionString: pg.url, stream: inProcessPgStream(pg.url) } as never);
      await client.connect();
      try {
        return (await client.query(sql)).rows;
      } finally {
        await client.end();
      }
    };
    await query(first, 'CREATE TABLE t (x int); INSERT INTO t VALUES (31)');
    await first.stop();
    const again = await startEmbeddedPostgres(data);
    try {
      expect(await query(again, 'SELECT x FROM t')).toEqual([{ x: 31 }]);
    } finally {
      await again.stop();
    }
  }, 60_000);

  it('in worker mode, opens a new directory with PGlite compiled beside the unpack, and keeps it', async () => {
    const data = path.join(dir, 'worker-mode');
    const first = await startEmbeddedPostgres(data, { connection: 'worker' });
    const client = new Client({ connectionString: first.url, stream: inProcessPgStream(first.url) } as never);
    await client.connect();
    await client.query('CREATE TABLE w (x int); INSERT INTO w VALUES (4)');
    await client.end();
    await first.stop();
    const again = await startEmbeddedPostgres(data, { connection: 'worker' });
    const reader = new Client({ connectionString: again.url, stream: inProcessPgStream(again.url) } as never);
    try {
      await reader.connect();
      expect((await reader.query('SELECT x FROM w')).rows).toEqual([{ x: 4 }]);
    } finally {
      await reader.end();
      await again.stop();
    }
  }, 60_000);

  it('tells a waiting PGlite worker its answer from the unpack worker: true once written, false for an archive it refuses', async () => {
    const written = new MessageChannel();
    const heard = firstMessage(written.port2);
    await expect(unpackTemplate(path.join(dir, 'told'), templateFile(), written.port1)).resolves.toBe(true);
    expect(await heard).toBe(true);

    const bogus = path.join(dir, 'not-a-template.tar.gz');
    fs.writeFileSync(bogus, 'not gzip');
    const refused = new MessageChannel();
    const heardRefused = firstMessage(refused.port2);
    await expect(unpackTemplate(path.join(dir, 'refused'), bogus, refused.port1)).resolves.toBe(false);
    expect(await heardRefused).toBe(false);
    expect(fs.existsSync(path.join(dir, 'refused', 'PG_VERSION'))).toBe(false);
  }, 60_000);

  it('a write that fails rejects the unpack and tells the waiting worker false, whose start then fails instead of waiting', async () => {
    const blocked = path.join(dir, 'blocked');
    fs.writeFileSync(blocked, 'a file where the directory should go');
    const { port1, port2 } = new MessageChannel();
    const db = new WorkerPGlite(path.join(blocked, 'postgres'), [], port2);
    const start = expect(db.ready).rejects.toThrow(/PGlite did not open: the data directory was not written/);
    await expect(unpackTemplate(path.join(blocked, 'postgres'), templateFile(), port1)).rejects.toThrow();
    await start;
    await db.close();
  }, 60_000);
});
