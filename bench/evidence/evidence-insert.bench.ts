/**
 * Micro-benchmark of the evidence insert (issue 15): the statement the scoring worker runs per micro-batch,
 * in its variants, against a raw COPY in the same run - on the local PostgreSQL (a fresh schema, dropped at
 * the end) and on PGlite behind its socket server (the embedded default). Prints numbers, asserts nothing.
 *   npm run bench:evidence                      # 100 000 rows in batches of 500, both databases
 *   BENCH_ROWS=50000 BENCH_BATCH=2000 BENCH_DB=pglite npm run bench:evidence
 * Per variant: rows/s and the client's CPU per row (process.cpuUsage) - the server's share is the rest.
 */
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { startEmbeddedPostgres } from '@evals/pglite';
import { EVIDENCE_COLUMNS, insertEvidence, type EvidenceRow } from '@evals/persistence';
import { createTestSchema } from '../../test/support/isolation';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 500);
const DBS = (process.env.BENCH_DB ?? 'postgres,pglite').split(',');
const log = (s: string) => process.stdout.write(`${s}\n`);

const TABLE = `CREATE TABLE evidence (
  run_id text NOT NULL, case_id text NOT NULL, scorer text NOT NULL, scorer_version text NOT NULL,
  score double precision NOT NULL, passed boolean NOT NULL, label varchar(120) NOT NULL,
  detail_hash text, output_chars integer, scored_at timestamptz NOT NULL, PRIMARY KEY (run_id, case_id))`;

function rows(run: string): EvidenceRow[] {
  const at = new Date().toISOString();
  return Array.from({ length: ROWS }, (_, i) => ({
    run_id: run,
    case_id: `c${i}`,
    scorer: 'exact',
    scorer_version: '1.0.0',
    score: i % 4 === 3 ? 0 : 1,
    passed: i % 4 !== 3,
    label: i % 4 === 3 ? 'mismatch' : 'match',
    detail_hash: i.toString(16).padStart(64, '0'),
    output_chars: 200,
    scored_at: at,
  }));
}

async function timed(name: string, db: Client, run: (batch: EvidenceRow[]) => Promise<unknown>, data: EvidenceRow[]): Promise<void> {
  const cpu = process.cpuUsage();
  const t = performance.now();
  for (let i = 0; i < data.length; i += BATCH) {
    await db.query('BEGIN');
    await run(data.slice(i, i + BATCH));
    await db.query('COMMIT');
  }
  const s = (performance.now() - t) / 1000;
  const c = process.cpuUsage(cpu);
  log(`  ${name.padEnd(44)} ${Math.round(data.length / s).toLocaleString('en-US').padStart(9)} rows/s   client CPU ${((c.user + c.system) / data.length).toFixed(1)} us/row`);
}

async function bench(label: string, url: string): Promise<void> {
  const db = new Client({ connectionString: url });
  await db.connect();
  await db.query(TABLE);
  log(`${label}: ${ROWS.toLocaleString('en-US')} rows in batches of ${BATCH}`);
  let k = 0;
  const sql = { query: (text: string, params?: unknown[]) => db.query(text, params).then((r) => r.rows) };
  // Interleaved twice, so a change in the machine's load shows as a spread rather than a winner.
  const copy = label === 'PostgreSQL' ? copyFromStdin() : null;
  if (copy) await db.query(`CREATE TEMP TABLE evidence_in (LIKE evidence) ON COMMIT DELETE ROWS`);
  for (let round = 0; round < 2; round++) {
    await timed('unnest of 10 typed arrays (before)', db, (b) => insertUnnest(sql, b), rows(`r${k++}`));
    await timed('json_to_recordset, one parameter (insertEvidence)', db, (b) => insertEvidence(sql, b, EVIDENCE_COLUMNS), rows(`r${k++}`));
    if (copy) {
      await timed('COPY into a temp table + INSERT ... SELECT', db, (b) => insertViaCopy(db, copy, b), rows(`r${k++}`));
      await timed('raw COPY into evidence (no conflict check)', db, (b) => copyRows(db, copy, 'evidence', b), rows(`r${k++}`));
    }
  }
  await db.end();
}

type CopyFrom = (sql: string) => NodeJS.WritableStream;

/** pg-copy-streams (a devDependency): measured here only, to show the headroom a COPY path would have. */
function copyFromStdin(): CopyFrom | null {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('pg-copy-streams').from;
  } catch {
    return null;
  }
}

async function copyRows(db: Client, copyFrom: CopyFrom, table: string, rows: readonly EvidenceRow[]): Promise<void> {
  let text = '';
  for (const r of rows) text += `${r.run_id}\t${r.case_id}\t${r.scorer}\t${r.scorer_version}\t${r.score}\t${r.passed ? 't' : 'f'}\t${r.label}\t${r.detail_hash ?? '\\N'}\t${r.output_chars ?? '\\N'}\t${r.scored_at}\n`;
  await new Promise<void>((resolve, reject) => {
    const stream = db.query(copyFrom(`COPY ${table} (${EVIDENCE_COLUMNS.map((c) => c.name).join(', ')}) FROM STDIN`) as any) as unknown as NodeJS.WritableStream;
    stream.on('error', reject);
    stream.on('finish', () => resolve());
    stream.end(text);
  });
}

async function insertViaCopy(db: Client, copyFrom: CopyFrom, rows: readonly EvidenceRow[]): Promise<unknown> {
  await copyRows(db, copyFrom, 'evidence_in', rows);
  return db.query(`INSERT INTO evidence SELECT * FROM evidence_in ON CONFLICT (run_id, case_id) DO NOTHING RETURNING run_id, case_id`);
}

/** The statement before issue 15, for comparison. */
async function insertUnnest(sql: { query(text: string, params?: unknown[]): Promise<any> }, rows: readonly EvidenceRow[]): Promise<unknown> {
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
    try {
      await bench('PostgreSQL', schema.url);
    } finally {
      await schema.drop();
    }
  }
  if (DBS.includes('pglite')) {
    const pg = await startEmbeddedPostgres();
    try {
      await bench('PGlite (socket server)', pg.url);
    } finally {
      await pg.stop();
    }
  }
}

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.stack : e}\n`);
  process.exit(1);
});
