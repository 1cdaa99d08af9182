import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { templateFile } from './data-dir-template';
import { inProcessPgStream, startEmbeddedPostgres } from './embedded-postgres';

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
});
