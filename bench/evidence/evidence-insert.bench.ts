/**
 * Micro-benchmark of the evidence insert (issue 15): what the scoring worker runs per micro-batch, in its
 * variants, against a raw COPY in the same run - on the local PostgreSQL (a fresh schema, dropped at the end)
 * and on PGlite through the in-process stream (the embedded default), both through TypeORM as the worker is.
 * Prints numbers, asserts nothing.
 *   npm run bench:evidence                      # 100 000 rows in batches of 500, both databases
 *   BENCH_ROWS=50000 BENCH_BATCH=10,100,2000 BENCH_DB=pglite npm run bench:evidence
 * Per variant: rows/s and the client's CPU per row (process.cpuUsage; for PGlite, PostgreSQL's work is in it).
 */
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import type { PoolClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { DataSource, EntityManager } from 'typeorm';
import { startEmbeddedPostgres } from '@evals/pglite';
import { createDataSource, EVIDENCE_COLUMNS, insertEvidence, type EvidenceRow, type Sql } from '@evals/persistence';
import { createTestSchema } from '../../test/support/isolation';
import { evidenceRows } from './evidence-rows';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const BATCHES = (process.env.BENCH_BATCH ?? '500').split(',').map(Number);
const DBS = (process.env.BENCH_DB ?? 'postgres,pglite').split(',');
const log = (s: string) => process.stdout.write(`${s}\n`);

const TABLE = `CREATE TABLE evidence (
  run_id text NOT NULL, case_id text NOT NULL, scorer text NOT NULL, scorer_version text NOT NULL,
  score double precision NOT NULL, passed boolean NOT NULL, label varchar(120) NOT NULL,
  detail_hash text, output_chars integer, scored_at timestamptz NOT NULL, PRIMARY KEY (run_id, case_id))`;

const rows = (run: string): EvidenceRow[] => evidenceRows(run, ROWS);

type Variant = (tx: EntityManager, batch: EvidenceRow[]) => Promise<unknown>;

const VARIANTS: Array<[string, Variant]> = [
  ['unnest of 10 typed arrays (before)', (tx, b) => insertUnnest(tx, b)],
  // A Sql that is not a transaction's EntityManager: insertEvidence takes its statement path.
  ['json_to_recordset statement', (tx, b) => insertEvidence({ query: (text, params) => tx.query(text, params) }, b, EVIDENCE_COLUMNS)],
  ['insertEvidence: COPY behind a savepoint', (tx, b) => insertEvidence(tx, b, EVIDENCE_COLUMNS)],
  ['raw COPY into evidence (no conflict check)', (tx, b) => rawCopy(tx, b)],
];

async function timed(name: string, ds: DataSource, batch: number, run: Variant, data: EvidenceRow[]): Promise<void> {
  const cpu = process.cpuUsage();
  const t = performance.now();
  for (let i = 0; i < data.length; i += batch) await ds.transaction((tx) => run(tx, data.slice(i, i + batch)));
  const s = (performance.now() - t) / 1000;
  const c = process.cpuUsage(cpu);
  log(`  ${name.padEnd(44)} ${Math.round(data.length / s).toLocaleString('en-US').padStart(9)} rows/s   client CPU ${((c.user + c.system) / data.length).toFixed(1)} us/row`);
}

async function bench(label: string, ds: DataSource): Promise<void> {
  await ds.query(TABLE);
  let k = 0;
  for (const batch of BATCHES) {
    log(`${label}: ${ROWS.toLocaleString('en-US')} rows in batches of ${batch}, a transaction each`);
    // Interleaved twice, so a change in the machine's load shows as a spread rather than a winner.
    for (let round = 0; round < 2; round++) {
      for (const [name, run] of VARIANTS) await timed(name, ds, batch, run, rows(`r${k++}`));
    }
  }
}

/** A COPY of the rows with no savepoint and no fallback: what skipping the conflict check would be worth. */
async function rawCopy(tx: EntityManager, rows: readonly EvidenceRow[]): Promise<void> {
  let text = '';
  for (const r of rows) text += `${r.run_id}\t${r.case_id}\t${r.scorer}\t${r.scorer_version}\t${r.score}\t${r.passed ? 't' : 'f'}\t${r.label}\t${r.detail_hash ?? '\\N'}\t${r.output_chars ?? '\\N'}\t${r.scored_at}\n`;
  const client = (tx.queryRunner as unknown as { databaseConnection: PoolClient }).databaseConnection;
  await pipeline(Readable.from([text]), client.query(copyFrom(`COPY evidence (${EVIDENCE_COLUMNS.map((c) => c.name).join(', ')}) FROM STDIN`)));
}

/** The statement before issue 15, for comparison. */
async function insertUnnest(sql: Sql, rows: readonly EvidenceRow[]): Promise<unknown> {
  const columns = EVIDENCE_COLUMNS;
  return sql.query(
    `INSERT INTO evidence (${columns.map((c) => c.name).join(', ')})
     SELECT * FROM unnest(${columns.map((c, i) => `$${i + 1}::${c.type}[]`).join(', ')})
     ON CONFLICT (run_id, case_id) DO NOTHING
     RETURNING run_id, case_id`,
    columns.map((c) => rows.map(c.value)),
  );
}

async function main(): Promise<void> {
  if (DBS.includes('postgres')) {
    const schema = await createTestSchema('benchev');
    const ds = createDataSource({ url: schema.url, poolSize: 1 });
    await ds.initialize();
    try {
      await bench('PostgreSQL', ds);
    } finally {
      await ds.destroy();
      await schema.drop();
    }
  }
  if (DBS.includes('pglite')) {
    const pg = await startEmbeddedPostgres();
    const ds = createDataSource({ url: pg.url, poolSize: 1 });
    await ds.initialize();
    try {
      await bench('PGlite (in-process stream)', ds);
    } finally {
      await ds.destroy();
      await pg.stop();
    }
  }
}

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.stack : e}\n`);
  process.exit(1);
});
