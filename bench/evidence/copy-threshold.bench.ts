/**
 * Issue 28: does the COPY path of the evidence insert (copy-rows.ts: SAVEPOINT, COPY, RELEASE - three round
 * trips and a data message) pay for itself against the one INSERT ... ON CONFLICT statement, at the batch sizes
 * of the worker's transactions? Per batch size, transactions of each path interleaved (BEGIN, the insert,
 * COMMIT), on the real, migrated evidence table of a fresh schema of the local PostgreSQL (dropped at the end).
 * Prints, per path: the insert's wall time and the whole transaction's (median, p90; the commit's WAL flush is
 * most of the latter), the client's CPU and the server backend's CPU (from /proc, when the server runs on this
 * machine) per transaction. Asserts nothing.
 *   node -r @swc-node/register bench/evidence/copy-threshold.bench.ts
 *   BENCH_BATCH=64,100,200 BENCH_TX=200 node -r @swc-node/register bench/evidence/copy-threshold.bench.ts
 */
import { performance } from 'node:perf_hooks';
import type { DataSource, EntityManager } from 'typeorm';
import { EVIDENCE_COLUMNS, insertEvidence, type EvidenceRow } from '@evals/persistence';
import { migratedTestSchema } from '../../test/support/isolation';
import { processCpuUs } from '../support/process-cpu';
import { evidenceRows } from './evidence-rows';

const BATCHES = (process.env.BENCH_BATCH ?? '64,100,128,200,500,2000').split(',').map(Number);
const TX = Number(process.env.BENCH_TX ?? 150);
const log = (s: string) => process.stdout.write(`${s}\n`);

let runs = 0;
const batch = (size: number): EvidenceRow[] => evidenceRows(`r${runs++}`, size, (i) => `case-${String(i).padStart(4, '0')}`);

type Path = (tx: EntityManager, rows: EvidenceRow[]) => Promise<unknown>;
const PATHS: Array<[string, Path]> = [
  ['COPY behind a savepoint', (tx, rows) => insertEvidence(tx, rows, EVIDENCE_COLUMNS)],
  // Not a transaction's EntityManager: insertEvidence takes its statement path, in the same transaction.
  ['INSERT ... ON CONFLICT (json)', (tx, rows) => insertEvidence({ query: (text, params) => tx.query(text, params) }, rows, EVIDENCE_COLUMNS)],
];

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

async function main(): Promise<void> {
  const { ds, close } = await migratedTestSchema('copythr', 1);
  try {
    const [{ pid }] = await ds.query('SELECT pg_backend_pid() AS pid');
    // Warm-up: plans, the table's first pages, the COPY stream module.
    for (const [, path] of PATHS) for (let i = 0; i < 20; i++) await ds.transaction((tx) => path(tx, batch(100)));
    for (const size of BATCHES) {
      const wall = PATHS.map(() => [] as number[]);
      const insert = PATHS.map(() => [] as number[]);
      const client = PATHS.map(() => 0);
      const server = PATHS.map(() => 0);
      for (let i = 0; i < TX; i++) {
        // Interleaved, so a change in the machine's load shows in both paths alike.
        for (let p = 0; p < PATHS.length; p++) {
          const rows = batch(size);
          const cpu = process.cpuUsage();
          const s0 = processCpuUs(pid);
          const t = performance.now();
          await (ds as DataSource).transaction(async (tx) => {
            const i0 = performance.now();
            await PATHS[p][1](tx, rows);
            insert[p].push(performance.now() - i0);
          });
          wall[p].push(performance.now() - t);
          const c = process.cpuUsage(cpu);
          client[p] += c.user + c.system;
          const s1 = processCpuUs(pid);
          if (s0 !== null && s1 !== null) server[p] += s1 - s0;
        }
      }
      log(`batch of ${size} rows, ${TX} transactions per path:`);
      PATHS.forEach(([name], p) =>
        log(
          `  ${name.padEnd(30)} insert median ${pct(insert[p], 0.5).toFixed(2).padStart(6)} ms p90 ${pct(insert[p], 0.9).toFixed(2).padStart(6)} ms` +
            `   transaction median ${pct(wall[p], 0.5).toFixed(2).padStart(6)} ms p90 ${pct(wall[p], 0.9).toFixed(2).padStart(6)} ms` +
            `   client CPU ${(client[p] / TX / 1000).toFixed(2)} ms/tx   server CPU ${(server[p] / TX / 1000).toFixed(2)} ms/tx`,
        ),
      );
    }
  } finally {
    await close();
  }
}

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.stack : e}\n`);
  process.exit(1);
});
