/**
 * The embedded PostgreSQL's connection path alone (docs/benchmarks.md, issue 15): `pg` to PGlite through
 * PGlite's socket server against the in-process stream (pglite-wire.stream.ts), on the same statements,
 * interleaved rounds, CPU time of this process per statement. Run:
 * `node -r @swc-node/register bench/embedded/connection.bench.ts`. BENCH_ROUNDS (4), BENCH_SMALL (3000).
 * Prints numbers only.
 */
import { Client } from 'pg';
import { inProcessPgStream, startEmbeddedPostgres } from '@evals/pglite';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const SMALL = Number(process.env.BENCH_SMALL ?? 3000);

type Mode = 'socket' | 'in-process';

async function open(mode: Mode) {
  const pg = await startEmbeddedPostgres(undefined, { connection: mode });
  const stream = inProcessPgStream(pg.url);
  const db = new Client({ connectionString: pg.url, ...(stream ? { stream } : {}) });
  await db.connect();
  await db.query('CREATE TABLE ev (run_id text, case_id text, score double precision, passed boolean, label text, detail_hash text, PRIMARY KEY (run_id, case_id))');
  return { pg, db };
}

async function round(db: Client, tag: string): Promise<{ small: number; insert: number }> {
  let cpu = process.cpuUsage();
  for (let i = 0; i < SMALL; i++) await db.query('SELECT $1::text AS a, $2::int AS b', [`x${i}`, i]);
  let used = process.cpuUsage(cpu);
  const small = (used.user + used.system) / SMALL;
  cpu = process.cpuUsage();
  const batches = 20;
  for (let b = 0; b < batches; b++) {
    const values: string[] = [];
    const params: unknown[] = [];
    for (let i = 0; i < 500; i++) {
      const p = params.length;
      values.push(`($${p + 1}, $${p + 2}, $${p + 3}, $${p + 4}, $${p + 5}, $${p + 6})`);
      params.push(tag, `c${b}-${i}`, 1, true, 'match', 'f'.repeat(64));
    }
    await db.query('BEGIN');
    await db.query(`INSERT INTO ev VALUES ${values.join(', ')}`, params);
    await db.query('COMMIT');
  }
  used = process.cpuUsage(cpu);
  return { small, insert: (used.user + used.system) / (batches * 500) };
}

async function main(): Promise<void> {
  const dbs = { socket: await open('socket'), 'in-process': await open('in-process') };
  const results: Record<Mode, Array<{ small: number; insert: number }>> = { socket: [], 'in-process': [] };
  for (let r = 0; r < ROUNDS; r++) {
    const order: Mode[] = r % 2 === 0 ? ['socket', 'in-process'] : ['in-process', 'socket'];
    for (const mode of order) results[mode].push(await round(dbs[mode].db, `${mode}-${r}`));
  }
  for (const mode of ['socket', 'in-process'] as Mode[]) {
    const rs = results[mode].slice(1); // the first round warms the JIT
    const med = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    process.stdout.write(`${mode}: small statement ${med(rs.map((x) => x.small)).toFixed(0)} us CPU; 500-row insert ${med(rs.map((x) => x.insert)).toFixed(2)} us CPU per row\n`);
  }
  for (const { db, pg } of Object.values(dbs)) {
    await db.end();
    await pg.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
