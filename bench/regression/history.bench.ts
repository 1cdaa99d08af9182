/**
 * Benchmark of a regression decision's baseline candidates (G4, G5; issue 15): `RegressionRepository.history`
 * for a suite and subject with BENCH_HISTORY (default 500, the history's limit) completed runs, each stored with
 * a comparison as the regression app writes it, on the local PostgreSQL (a fresh schema, dropped at the end).
 * Against, in the same run, the same rows read with their comparisons - what `history` read before it left
 * them out. Prints milliseconds and client CPU per call; asserts nothing. Run: `npm run bench:history`.
 */
import { performance } from 'node:perf_hooks';
import { DEFAULT_PROJECT } from '@evals/contracts';
import { compareRuns, whatChanged } from '@evals/domain';
import { createDataSource, migrate, RegressionRepository, type Sql } from '@evals/persistence';
import { createTestSchema } from '../../test/support/isolation';

const RUNS = Number(process.env.BENCH_HISTORY ?? 500);
const CALLS = Number(process.env.BENCH_CALLS ?? 200);

/** A comparison as the regression app records it: the paired decision, its cases and what changed. */
function comparison(i: number) {
  const c = compareRuns({ run_id: `r${i}`, n: 2000, passed: 1500 + (i % 7), score: 0.75 }, { run_id: `r${i - 1}`, n: 2000, passed: 1502, score: 0.751 }, 0.05, {
    both: 1490,
    baseline_only: 12,
    run_only: 10 + (i % 7),
    neither: 488 - (i % 7),
  });
  return {
    ...c,
    chosen_by: 'automatic',
    baseline_eligible: true,
    compared_cases: { run: { n: 2000, of: 2000 }, baseline: { n: 2000, of: 2000 }, left_out: { unscored_in_run: 0, unscored_in_baseline: 0, scored_in_one_run_only: 0 }, paired: { a: 1490, b: 12, c: 10, d: 488 } },
    changes: whatChanged({ suite_version: 1, scorer_versions: { exact: '1.0.0', contains: '1.0.0' } }, { suite_version: 1, scorer_versions: { exact: '1.0.0', contains: '1.0.0' } }),
  };
}

async function perCall(fn: () => Promise<unknown>): Promise<{ ms: number; cpuMs: number }> {
  for (let k = 0; k < 20; k++) await fn();
  const cpu = process.cpuUsage();
  const t = performance.now();
  for (let k = 0; k < CALLS; k++) await fn();
  const used = process.cpuUsage(cpu);
  return { ms: (performance.now() - t) / CALLS, cpuMs: (used.user + used.system) / 1000 / CALLS };
}

async function main(): Promise<void> {
  const schema = await createTestSchema('benchhist');
  const ds = createDataSource({ url: schema.url, poolSize: 1 });
  try {
    await ds.initialize();
    await migrate(ds);
    const repo = new RegressionRepository();
    const sql = ds as unknown as Sql;
    const start = Date.parse('2026-01-01T00:00:00Z');
    for (let i = 1; i <= RUNS; i++) {
      await repo.record(sql, {
        project: DEFAULT_PROJECT,
        run_id: `r${i}`,
        suite_key: 'bench',
        suite_version: 1,
        subject_kind: 'agent',
        subject_id: 'bot',
        variant: null,
        completed_at: new Date(start + i * 60_000).toISOString(),
        n: 2000,
        passed: 1500,
        score: 0.75,
        pass_threshold: 0.7,
        scorer_versions: { exact: '1.0.0', contains: '1.0.0' },
        verdict: 'pass',
        completeness: 'complete',
        baseline_run_id: i > 1 ? `r${i - 1}` : null,
        baseline_choice: i > 1 ? 'automatic' : null,
        comparison: i > 1 ? comparison(i) : null,
      });
    }
    const bytes = Number((await ds.query(`SELECT avg(octet_length(comparison::text))::int AS b FROM run_verdicts WHERE comparison IS NOT NULL`))[0].b);
    const candidates = await perCall(() => repo.history(sql, DEFAULT_PROJECT, 'bench', 'agent', 'bot'));
    const withComparisons = await perCall(() =>
      ds.query(
        `SELECT run_id, suite_key, suite_version, subject_kind, subject_id, variant, completed_at, n, passed, score, pass_threshold,
           scorer_versions, verdict, completeness, baseline_run_id, baseline_choice, comparison
         FROM run_verdicts WHERE suite_key = $1 AND subject_kind = $2 AND subject_id = $3 ORDER BY completed_at DESC, run_id DESC LIMIT 500`,
        ['bench', 'agent', 'bot'],
      ),
    );
    const line = (label: string, r: { ms: number; cpuMs: number }) => `${label.padEnd(52)} ${r.ms.toFixed(2).padStart(7)} ms  ${r.cpuMs.toFixed(2).padStart(7)} ms CPU`;
    process.stdout.write(`baseline candidates of ${RUNS} completed runs (comparisons of ${bytes} bytes each), ${CALLS} calls each\n`);
    process.stdout.write(`${line('history (candidates, no comparisons)', candidates)}\n`);
    process.stdout.write(`${line('the same rows with their comparisons (before)', withComparisons)}\n`);
    process.stdout.write(`client CPU per call, candidates / with comparisons: ${(candidates.cpuMs / withComparisons.cpuMs).toFixed(2)}\n`);
    process.stdout.write(`BENCH_HISTORY_JSON ${JSON.stringify({ runs: RUNS, comparison_bytes: bytes, candidates, with_comparisons: withComparisons })}\n`);
  } finally {
    if (ds.isInitialized) await ds.destroy();
    await schema.drop();
  }
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
