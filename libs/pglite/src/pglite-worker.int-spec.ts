import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { WorkerPGlite } from './pglite-worker';

const root = path.resolve(__dirname, '../../..');

/** Runs `code` (CommonJS, TypeScript sources through swc) in a node process of its own. */
function node(code: string, timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string; killed: boolean }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, ['-r', '@swc-node/register', '-e', code], { cwd: root, timeout: timeoutMs }, (error, stdout, stderr) =>
      resolve({ code: child.exitCode, stdout, stderr, killed: error?.killed === true || child.signalCode !== null }),
    );
  });
}

// The all-in-one's PGlite runs in a worker thread (issue 15). What a thread adds that an in-process PGlite
// never had: a process that forgets it must not hang, and a worker that dies must not leave a query waiting.
describe('integration: PGlite in a worker thread', () => {
  it('a process that opened it and never closed it still exits once idle', async () => {
    const run = await node(
      `const { Client } = require('pg');
       const { startEmbeddedPostgres, inProcessPgStream } = require('./libs/pglite/src/embedded-postgres.ts');
       startEmbeddedPostgres(undefined, { connection: 'worker' }).then(async (pg) => {
         const c = new Client({ connectionString: pg.url, stream: inProcessPgStream(pg.url) });
         await c.connect();
         const { rows } = await c.query('SELECT 40 + 2 AS n');
         await c.end();
         process.stdout.write('answered ' + rows[0].n + '\\n');
       });`,
      90_000,
    );
    expect({ killed: run.killed, code: run.code, stdout: run.stdout.trim(), stderr: run.stderr }).toEqual({ killed: false, code: 0, stdout: 'answered 42', stderr: '' });
  }, 120_000);

  it('a worker that dies fails the request it was answering and every later one, instead of leaving them waiting', async () => {
    const db = new WorkerPGlite(undefined, []);
    await db.ready;
    await db.exec('CREATE TABLE t (v int)');
    const waiting = db.exec('SELECT pg_sleep(3)');
    await (db as unknown as { worker: Worker }).worker.terminate();
    await expect(waiting).rejects.toThrow(/PGlite worker stopped/);
    await expect(db.exec('SELECT 1')).rejects.toThrow(/PGlite worker stopped/);
    expect([db.closed, db.isInTransaction()]).toEqual([true, false]);
    await db.close();
  }, 120_000);

  it('a data directory PGlite cannot open: the start fails with a reason, and nothing is left running', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-pglite-broken-'));
    try {
      fs.writeFileSync(path.join(dir, 'PG_VERSION'), 'not a version\n');
      const run = await node(
        `const { startEmbeddedPostgres } = require('./libs/pglite/src/embedded-postgres.ts');
         startEmbeddedPostgres(${JSON.stringify(dir)}, { connection: 'worker' }).then(
           () => process.stdout.write('opened\\n'),
           (error) => process.stdout.write('refused: ' + error.message + '\\n'),
         );`,
        90_000,
      );
      expect(run.killed).toBe(false);
      expect(run.stdout).toMatch(/^refused: embedded PostgreSQL: /);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
