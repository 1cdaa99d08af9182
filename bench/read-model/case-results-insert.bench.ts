/**
 * Micro-benchmark of the read model's `read_case_results` insert (issue 28): one micro-batch's cases of many
 * runs, a transaction each, as `CaseResultRepository.insertAll` writes them, in the statement forms it could
 * take - on the local PostgreSQL (a fresh schema, dropped at the end), through TypeORM as the projector is.
 * Prints numbers, asserts nothing.
 *   node -r @swc-node/register bench/read-model/case-results-insert.bench.ts
 *   BENCH_ROWS=46000 BENCH_CASES_PER_RUN=100 BENCH_RUNS_PER_BATCH=23 BENCH_ROUNDS=3 node -r @swc-node/register bench/read-model/case-results-insert.bench.ts
 * Per variant: the server backend's CPU per row (/proc/<pid>/stat of the session's backend: what the
 * machine pays whatever else runs on it), the client's CPU per row (process.cpuUsage) and the wall time.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { CaseOutcome } from '@evals/domain';
import { CaseResultRepository, createDataSource } from '@evals/persistence';
import { COPY_MIN_ROWS, copyRows } from '../../libs/persistence/src/copy-rows';
import type { DataSource, EntityManager } from 'typeorm';
import { createTestSchema } from '../../test/support/isolation';
import { processCpuUs } from '../support/process-cpu';

const ROWS = Number(process.env.BENCH_ROWS ?? 46_000);
const CASES_PER_RUN = Number(process.env.BENCH_CASES_PER_RUN ?? 100);
const RUNS_PER_BATCH = Number(process.env.BENCH_RUNS_PER_BATCH ?? 23);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const log = (s: string) => process.stdout.write(`${s}\n`);

const table = (name: string) => `CREATE TABLE ${name} (
  run_id text NOT NULL, case_id text NOT NULL, scorer text NOT NULL, scorer_version text NOT NULL,
  score double precision NOT NULL CHECK (score >= 0 AND score <= 1), passed boolean NOT NULL, label varchar(120) NOT NULL,
  judge_model text, prompt_version text, scored_at timestamptz NOT NULL, PRIMARY KEY (run_id, case_id))`;

type Batch = Array<{ runId: string; outcomes: CaseOutcome[] }>;

/** Batches as the projector hands them over: runs in run id order, each run's cases in case order. */
function batches(): Batch[] {
  const at = new Date().toISOString();
  const out: Batch[] = [];
  const runs = Math.ceil(ROWS / CASES_PER_RUN);
  for (let r = 0; r < runs; r += RUNS_PER_BATCH) {
    const batch: Batch = [];
    for (let k = r; k < Math.min(runs, r + RUNS_PER_BATCH); k++) {
      batch.push({
        runId: `bench-${randomUUID()}`,
        outcomes: Array.from({ length: CASES_PER_RUN }, (_, i) => ({
          case_id: `c${i}`,
          scorer: 'exact',
          scorer_version: '1.0.0',
          score: i % 4 === 3 ? 0 : 1,
          passed: i % 4 !== 3,
          label: i % 4 === 3 ? 'mismatch' : 'match',
          judge_model: null,
          prompt_version: null,
          scored_at: at,
        })),
      });
    }
    out.push(batch.sort((a, b) => (a.runId < b.runId ? -1 : 1)));
  }
  return out;
}

type Variant = (tx: EntityManager, table: string, batch: Batch) => Promise<unknown>;

/** The repository's own insert: its statements name read_case_results, so this variant's table is that one. */
const REPOSITORY = 'CaseResultRepository.insertAll (now)';

const records = (b: Batch) => b.flatMap(({ runId, outcomes }) => outcomes.map((o) => ({ ...o, run_id: runId })));
const COLS = ['run_id', 'case_id', 'scorer', 'scorer_version', 'score', 'passed', 'label', 'judge_model', 'prompt_version', 'scored_at'] as const;
const TYPES = ['text', 'text', 'text', 'text', 'float8', 'bool', 'text', 'text', 'text', 'timestamptz'];

const VARIANTS: Array<[string, Variant]> = [
  [
    'json_to_recordset, ON CONFLICT (before)',
    (tx, name, b) =>
      tx.query(
        `INSERT INTO ${name} (${COLS.join(', ')}) SELECT ${COLS.join(', ')}
         FROM json_to_recordset($1::json) AS t(run_id text, case_id text, scorer text, scorer_version text, score float8, passed bool, label text,
                                                judge_model text, prompt_version text, scored_at timestamptz)
         ON CONFLICT (run_id, case_id) DO NOTHING`,
        [JSON.stringify(records(b))],
      ),
  ],
  [
    'unnest of typed arrays, ON CONFLICT',
    (tx, name, b) => {
      const rs = records(b);
      return tx.query(
        `INSERT INTO ${name} (${COLS.join(', ')}) SELECT * FROM unnest(${TYPES.map((t, i) => `$${i + 1}::${t}[]`).join(', ')}) ON CONFLICT (run_id, case_id) DO NOTHING`,
        COLS.map((c) => rs.map((r) => r[c])),
      );
    },
  ],
  [
    'jsonb_to_recordset, ON CONFLICT',
    (tx, name, b) =>
      tx.query(
        `INSERT INTO ${name} (${COLS.join(', ')}) SELECT ${COLS.join(', ')}
         FROM jsonb_to_recordset($1::jsonb) AS t(run_id text, case_id text, scorer text, scorer_version text, score float8, passed bool, label text,
                                                judge_model text, prompt_version text, scored_at timestamptz)
         ON CONFLICT (run_id, case_id) DO NOTHING`,
        [JSON.stringify(records(b))],
      ),
  ],
  [
    'COPY behind a savepoint (copyRows)',
    async (tx, name, b) => {
      const rs = records(b);
      if (!(await copyRows(tx, name, rs, COLS.map((c, i) => ({ name: c, type: c === 'label' ? 'varchar(120)' : TYPES[i]!, value: (r: (typeof rs)[number]) => r[c] }))))) throw new Error('COPY refused');
    },
  ],
  [REPOSITORY, (tx, _name, b) => new CaseResultRepository().insertAll(tx, b)],
  [
    'json_to_recordset, no ON CONFLICT (reference)',
    (tx, name, b) =>
      tx.query(
        `INSERT INTO ${name} (${COLS.join(', ')}) SELECT ${COLS.join(', ')}
         FROM json_to_recordset($1::json) AS t(run_id text, case_id text, scorer text, scorer_version text, score float8, passed bool, label text,
                                                judge_model text, prompt_version text, scored_at timestamptz)`,
        [JSON.stringify(records(b))],
      ),
  ],
];

async function main(): Promise<void> {
  const schema = await createTestSchema('benchrcr');
  const ds: DataSource = createDataSource({ url: schema.url, poolSize: 1 });
  await ds.initialize();
  try {
    const [{ pid }] = await ds.query(`SELECT pg_backend_pid() AS pid`);
    log(`read_case_results insert: ${ROWS.toLocaleString('en-US')} rows per variant and round, ${RUNS_PER_BATCH} runs of ${CASES_PER_RUN} cases a batch, a transaction each`);
    const totals = new Map<string, { server: number; client: number; wall: number; rows: number }>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const [v, [name, run]] of VARIANTS.entries()) {
        // A batch below COPY's threshold is the statement's: copyRows refuses it.
        if (name.startsWith('COPY') && CASES_PER_RUN * RUNS_PER_BATCH < COPY_MIN_ROWS) continue;
        const t = name === REPOSITORY ? 'read_case_results' : `rcr_${round}_${v}`;
        await ds.query(table(t));
        const data = batches();
        const rows = data.reduce((n, b) => n + b.reduce((m, r) => m + r.outcomes.length, 0), 0);
        const server = processCpuUs(pid) ?? NaN;
        const client = process.cpuUsage();
        const start = performance.now();
        for (const b of data) await ds.transaction((tx) => run(tx, t, b));
        const wall = performance.now() - start;
        const c = process.cpuUsage(client);
        const s = (processCpuUs(pid) ?? NaN) - server;
        const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM ${t}`);
        if (n !== rows) throw new Error(`${name}: ${n} rows stored, ${rows} expected`);
        log(`  round ${round + 1} ${name.padEnd(46)} server ${(s / rows).toFixed(1).padStart(5)} us/row   client ${((c.user + c.system) / rows).toFixed(1).padStart(5)} us/row   wall ${((wall * 1000) / rows).toFixed(1).padStart(5)} us/row`);
        const sum = totals.get(name) ?? { server: 0, client: 0, wall: 0, rows: 0 };
        totals.set(name, { server: sum.server + s, client: sum.client + c.user + c.system, wall: sum.wall + wall * 1000, rows: sum.rows + rows });
        await ds.query(`DROP TABLE ${t}`);
      }
    }
    log('all rounds:');
    for (const [name, t] of totals) {
      log(`  ${name.padEnd(54)} server ${(t.server / t.rows).toFixed(1).padStart(5)} us/row   client ${(t.client / t.rows).toFixed(1).padStart(5)} us/row   wall ${(t.wall / t.rows).toFixed(1).padStart(5)} us/row`);
    }
  } finally {
    await ds.destroy();
    await schema.drop();
  }
}

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.stack : e}\n`);
  process.exit(1);
});
