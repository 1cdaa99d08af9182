import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { inProcessPgStream, startEmbeddedPostgres } from './embedded-postgres';

/** A new data directory unpacked from the template is a database PGlite opens, keeps and reopens (issue 31). */
describe('a data directory from the template', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-template-int-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('opens without initdb, takes writes and has them after a restart', async () => {
    const data = path.join(dir, 'postgres');
    const started = Date.now();
    const first = await startEmbeddedPostgres(data);
    // initdb alone took about 5 s on the development machine; the unpacked directory opens in well under it.
    expect(Date.now() - started).toBeLessThan(4000);
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
