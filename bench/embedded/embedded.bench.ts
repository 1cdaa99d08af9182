/**
 * Benchmark of the embedded all-in-one (`evals serve`, docs/embedded.md): one process on PGlite and the
 * in-process bus, no servers. Run: `npm run bench:embedded`. Prints numbers only and asserts nothing
 * (docs/testing.md); docs/benchmarks.md explains them.
 *
 *   0. raw baseline, in this process: PGlite reached by `pg` in-process (the same adapter the service uses),
 *      evidence-shaped rows inserted in statements of 1 000 rows, one transaction each, into a table with
 *      evidence's columns and primary key; then the same through PGlite's socket server (the path before);
 *   1. start-up: `evals serve` on a fresh data directory (PGlite initdb + every migration) until it listens,
 *      then stopped and started again on the same directory (a reopen);
 *   2. throughput: BENCH_RUNS (default 10) synchronous `POST /v1/runs` of BENCH_RUN_CASES (default 2 000)
 *      inline outputs each, one after the other, over a mix of deterministic scorers (a quarter failing):
 *      cases scored per second from the first request to the last answer (each answer is the completed,
 *      compared run), and as a ratio of the raw insert rate measured in phase 0;
 *      plus the serve process's CPU (utime + stime) per case over the phase;
 *   3. latency: BENCH_LAT_RUNS (default 30) runs of 100 cases, one at a time: p50 and p95 of the request;
 *   4. memory: BENCH_MEM_RUNS (default 10) consecutive runs of BENCH_MEM_CASES (default 10 000) inline outputs,
 *      then the serve process's resident memory (VmRSS) at once, and again once it has sat idle for
 *      BENCH_SETTLE_S (default 3) seconds - what a serve waiting for the next command holds, after its idle
 *      collection (apps/cli/src/embedded/idle-gc.ts) - and its peak (VmHWM);
 *   5. a newcomer's first command (first-run.ts, issue 31): `evals run --suite FILE.yaml` of BENCH_FIRST_CASES
 *      on a fresh data directory, again on it (the suite stored: the ratio's baseline) and warm against this
 *      serve, wall and peak RSS of each; then the client `evals suite push` of BENCH_PUSH_CASES (0: skipped);
 *   peak RSS (VmHWM) of the serve process. BENCH_CPU_PROFILE_DIR: a V8 CPU profile of the serve process
 *   during phase 2 (bench/pipeline/cpu-profile-hook.js), summarised at the end.
 * The last line is one JSON object.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { inProcessPgStream, startEmbeddedPostgres } from '@evals/pglite';
import { startEmbeddedServe, type EmbeddedServe } from '../../test/support/embedded-process';
import { summarize as summarizeProfile } from '../pipeline/profile-summary';
import { clientPush, firstRuns, type FirstRunResult, type Timed } from './first-run';

function intEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  const n = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be a positive integer`);
  return n;
}

const RUNS = intEnv('BENCH_RUNS', 10);
const RUN_CASES = intEnv('BENCH_RUN_CASES', 2_000);
const LAT_RUNS = intEnv('BENCH_LAT_RUNS', 30);
const RAW_ROWS = intEnv('BENCH_RAW_ROWS', 20_000);
const MEM_RUNS = intEnv('BENCH_MEM_RUNS', 10);
const MEM_CASES = intEnv('BENCH_MEM_CASES', 10_000);
const SETTLE_S = intEnv('BENCH_SETTLE_S', 3);
const FIRST_CASES = intEnv('BENCH_FIRST_CASES', 10_000);
const FIRST_ROUNDS = intEnv('BENCH_FIRST_ROUNDS', 3);
const PUSH_CASES = process.env.BENCH_PUSH_CASES === '0' ? 0 : intEnv('BENCH_PUSH_CASES', 100_000);
const PROFILE_DIR = process.env.BENCH_CPU_PROFILE_DIR ? path.resolve(process.env.BENCH_CPU_PROFILE_DIR) : '';

const log = (line: string) => process.stdout.write(`${line}\n`);
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const failing = (i: number) => i % 4 === 3;

/** The scorer mix of bench/pipeline, so the numbers compare. */
function caseOf(i: number): { id: string; input: string; expected?: unknown; scorer?: unknown } {
  switch (i % 5) {
    case 0:
      return { id: `c${i}`, input: `q${i}`, expected: `answer ${i}` };
    case 1:
      return { id: `c${i}`, input: `q${i}`, scorer: { type: 'contains', value: `token-${i}` } };
    case 2:
      return { id: `c${i}`, input: `q${i}`, scorer: { type: 'regex', pattern: '^order-[0-9]+$' } };
    case 3:
      return { id: `c${i}`, input: `q${i}`, scorer: { type: 'json_valid' } };
    default:
      return { id: `c${i}`, input: `q${i}`, scorer: { type: 'numeric_range', min: 0, max: 100 } };
  }
}

function outputOf(i: number): string {
  const bad = failing(i);
  switch (i % 5) {
    case 0:
      return bad ? `wrong ${i}` : `answer ${i}`;
    case 1:
      return bad ? 'nothing here' : `the reply mentions token-${i} once`;
    case 2:
      return bad ? `order ${i}` : `order-${i}`;
    case 3:
      return bad ? '{"a": ' : `{"id": ${i}, "items": [1, 2, 3]}`;
    default:
      return bad ? '250' : String(i % 100);
  }
}

async function post(url: string, body: unknown): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`POST ${url}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

function peakRss(pid: number, field: 'VmHWM' | 'VmRSS' = 'VmHWM'): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
}

/** utime + stime of a process, in seconds (fields 14 and 15 of proc(5); USER_HZ is 100 on Linux). */
function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function profileControl(phase: string): Promise<void> {
  if (!PROFILE_DIR) return;
  fs.writeFileSync(path.join(PROFILE_DIR, 'control'), phase);
  await new Promise((r) => setTimeout(r, 500)); // the hook polls every 100 ms
}

async function rawInsertBaseline(rows: number, connection: 'in-process' | 'socket'): Promise<number> {
  const pg = await startEmbeddedPostgres(undefined, { connection });
  const stream = inProcessPgStream(pg.url);
  const db = new Client({ connectionString: pg.url, ...(stream ? { stream } : {}) });
  await db.connect();
  try {
    await db.query(`CREATE TABLE bench_evidence (
      run_id text NOT NULL, case_id text NOT NULL, scorer text NOT NULL, scorer_version text NOT NULL,
      score double precision NOT NULL, passed boolean NOT NULL, label varchar(120) NOT NULL,
      detail_hash text, output_chars integer, scored_at timestamptz NOT NULL, PRIMARY KEY (run_id, case_id))`);
    const started = performance.now();
    for (let start = 0; start < rows; start += 1000) {
      const values: string[] = [];
      const params: unknown[] = [];
      for (let i = start; i < Math.min(rows, start + 1000); i++) {
        const passed = !failing(i);
        const p = params.length;
        values.push(`($${p + 1}, $${p + 2}, 'exact', '1.0.0', $${p + 3}, $${p + 4}, $${p + 5}, $${p + 6}, 200, now())`);
        params.push('raw-run', `c${i}`, passed ? 1 : 0, passed, passed ? 'match' : 'mismatch', `${i}`.padStart(64, '0'));
      }
      await db.query('BEGIN');
      await db.query(`INSERT INTO bench_evidence (run_id, case_id, scorer, scorer_version, score, passed, label, detail_hash, output_chars, scored_at) VALUES ${values.join(', ')}`, params);
      await db.query('COMMIT');
    }
    return rows / ((performance.now() - started) / 1000);
  } finally {
    await db.end();
    await pg.stop();
  }
}

async function timedStart(dataDir: string): Promise<{ serve: EmbeddedServe; seconds: number }> {
  const t = performance.now();
  const profiling: Record<string, string> = PROFILE_DIR
    ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${path.join(__dirname, '..', 'pipeline', 'cpu-profile-hook.js')}`.trim(), EVALS_BENCH_PROFILE_DIR: PROFILE_DIR }
    : {};
  // BENCH_SERVE_NODE_OPTIONS: Node/V8 options for the serve process (e.g. a heap cap, docs/benchmarks.md).
  const nodeOptions = [profiling.NODE_OPTIONS ?? process.env.NODE_OPTIONS ?? '', process.env.BENCH_SERVE_NODE_OPTIONS ?? ''].join(' ').trim();
  const serve = await startEmbeddedServe({ dataDir, env: { LOG_LEVEL: 'warn', ...profiling, ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}) } });
  return { serve, seconds: (performance.now() - t) / 1000 };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

async function main(): Promise<void> {
  log(`embedded all-in-one benchmark: ${os.cpus().length} cores, Node ${process.version}`);
  log('0. raw baseline: PGlite through `pg` in-process (as the serve reaches it), 1 000-row INSERT statements');
  const raw = await rawInsertBaseline(RAW_ROWS, 'in-process');
  log(`   ${fmt(RAW_ROWS)} evidence-shaped rows: ${fmt(raw)} rows/s`);
  const rawSocket = await rawInsertBaseline(RAW_ROWS, 'socket');
  log(`   the same through PGlite's socket server (the serve's path before issue 15): ${fmt(rawSocket)} rows/s`);

  if (PROFILE_DIR) {
    fs.mkdirSync(PROFILE_DIR, { recursive: true });
    fs.writeFileSync(path.join(PROFILE_DIR, 'control'), '');
  }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-bench-embedded-'));
  let serve: EmbeddedServe | undefined;
  try {
    log('1. start-up of `evals serve`');
    const fresh = await timedStart(dataDir);
    await fresh.serve.stop();
    const reopen = await timedStart(dataDir);
    serve = reopen.serve;
    log(`   fresh data directory: ${fmt(fresh.seconds, 2)} s; reopen: ${fmt(reopen.seconds, 2)} s (process start to listening)`);

    const cases = Array.from({ length: RUN_CASES }, (_, i) => caseOf(i));
    await post(`${serve.url}/v1/suites`, { key: 'bench-big', default_scorer: { type: 'exact' }, pass_threshold: 0.5, regression_threshold: 0.1, cases });
    await post(`${serve.url}/v1/suites`, { key: 'bench-small', default_scorer: { type: 'exact' }, pass_threshold: 0.5, regression_threshold: 0.1, cases: cases.slice(0, 100) });
    const outputs = Array.from({ length: RUN_CASES }, (_, i) => ({ case_id: `c${i}`, output: outputOf(i) }));

    log(`2. throughput: ${RUNS} synchronous runs of ${fmt(RUN_CASES)} inline outputs`);
    // One warm-up run, not counted: the first request compiles the suite and warms the JIT.
    await post(`${serve.url}/v1/runs`, { run_id: 'warm-up', suite_key: 'bench-big', subject_kind: 'agent', subject_id: 'bench', source: 'ci', outputs });
    const pid = serve.child.pid!;
    await profileControl('throughput');
    const cpu0 = cpuSeconds(pid);
    const t = performance.now();
    for (let r = 0; r < RUNS; r++) {
      const view = await post(`${serve.url}/v1/runs`, { run_id: `run-${r}`, suite_key: 'bench-big', subject_kind: 'agent', subject_id: 'bench', source: 'ci', outputs });
      if (view.run?.status !== 'completed') throw new Error(`run-${r} not completed`);
    }
    const seconds = (performance.now() - t) / 1000;
    const cpuUsPerCase = ((cpuSeconds(pid) - cpu0) * 1e6) / (RUNS * RUN_CASES);
    await profileControl('');
    const rate = (RUNS * RUN_CASES) / seconds;
    log(`   ${fmt(RUNS * RUN_CASES)} cases in ${fmt(seconds, 2)} s = ${fmt(rate)} cases/s = ${fmt((100 * rate) / raw, 1)}% of the raw insert rate`);
    log(`   serve CPU per case (utime + stime over the phase): ${fmt(cpuUsPerCase)} us`);

    log(`3. latency: ${LAT_RUNS} runs of 100 cases, one at a time`);
    const small = outputs.slice(0, 100);
    const latencies: number[] = [];
    for (let r = 0; r < LAT_RUNS; r++) {
      const s = performance.now();
      await post(`${serve.url}/v1/runs`, { run_id: `lat-${r}`, suite_key: 'bench-small', subject_kind: 'agent', subject_id: 'lat', source: 'ci', outputs: small });
      latencies.push(performance.now() - s);
    }
    latencies.sort((a, b) => a - b);
    const p50 = percentile(latencies, 0.5);
    const p95 = percentile(latencies, 0.95);
    log(`   request to completed, compared run: p50 ${fmt(p50)} ms, p95 ${fmt(p95)} ms`);
    log(`4. memory: ${MEM_RUNS} consecutive runs of ${fmt(MEM_CASES)} inline outputs`);
    const memCases = Array.from({ length: MEM_CASES }, (_, i) => caseOf(i));
    await post(`${serve.url}/v1/suites`, { key: 'bench-mem', default_scorer: { type: 'exact' }, pass_threshold: 0.5, regression_threshold: 0.1, cases: memCases });
    const memOutputs = Array.from({ length: MEM_CASES }, (_, i) => ({ case_id: `c${i}`, output: outputOf(i) }));
    const tMem = performance.now();
    for (let r = 0; r < MEM_RUNS; r++) {
      const view = await post(`${serve.url}/v1/runs`, { run_id: `mem-${r}`, suite_key: 'bench-mem', subject_kind: 'agent', subject_id: 'mem', source: 'ci', outputs: memOutputs });
      if (view.run?.status !== 'completed') throw new Error(`mem-${r} not completed`);
    }
    const memSeconds = (performance.now() - tMem) / 1000;
    const rssAfter = peakRss(pid, 'VmRSS');
    // Idle on purpose: the serve's own collector acts after half a second without work.
    await new Promise((r) => setTimeout(r, SETTLE_S * 1000));
    const rssSettled = peakRss(pid, 'VmRSS');
    const rss = peakRss(pid);
    log(`   ${fmt(MEM_RUNS * MEM_CASES)} cases in ${fmt(memSeconds, 2)} s; resident after them ${fmt(rssAfter)} MiB, ${fmt(rssSettled)} MiB after ${SETTLE_S} s idle`);
    log(`   peak RSS of the serve process: ${fmt(rss)} MiB`);
    log(`5. first command: evals run --suite FILE.yaml of ${fmt(FIRST_CASES)} peer cases, ${FIRST_ROUNDS} rounds (medians; /usr/bin/time)`);
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-bench-first-'));
    let first: FirstRunResult | undefined;
    let push: Timed | undefined;
    try {
      first = firstRuns(work, serve.url, FIRST_CASES, FIRST_ROUNDS);
      const line = (name: string, t: Timed) => log(`   ${name.padEnd(42)} ${fmt(t.seconds, 2)} s  ${fmt(t.peakMib)} MiB  (${fmt(t.seconds / first!.reused.seconds, 2)}x wall, ${fmt(t.peakMib / first!.reused.peakMib, 2)}x RSS of reused)`);
      line('first-ever (fresh data directory)', first.first);
      line('reused directory, cold (suite stored)', first.reused);
      line('warm (against this evals serve)', first.warm);
      // Issue 31's targets for the first-ever run: 300 MB (286.1 MiB, what /usr/bin/time's KiB make) and 1.5x the reused run's wall.
      const peakOk = first.first.peakMib <= 300e6 / 2 ** 20;
      const wallOk = first.first.seconds <= 1.5 * first.reused.seconds;
      log(`   first-ever peak <= 300 MB (286.1 MiB): ${peakOk ? 'MET' : 'NOT MET'}; wall <= 1.5x the reused run: ${wallOk ? 'MET' : 'NOT MET'}`);
      if (PUSH_CASES > 0) {
        push = clientPush(work, serve.url, PUSH_CASES);
        log(`   evals suite push of ${fmt(PUSH_CASES)} cases (client): ${fmt(push.seconds, 2)} s, peak RSS ${fmt(push.peakMib)} MiB; serve peak RSS since start ${fmt(peakRss(pid))} MiB`);
      }
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
    log(
      JSON.stringify({
        raw_insert_rows_per_s: Math.round(raw),
        raw_insert_socket_rows_per_s: Math.round(rawSocket),
        startup_fresh_s: Number(fresh.seconds.toFixed(2)),
        startup_reopen_s: Number(reopen.seconds.toFixed(2)),
        runs: RUNS,
        cases_per_run: RUN_CASES,
        cases_per_s: Math.round(rate),
        ratio_to_raw_insert: Number((rate / raw).toFixed(3)),
        latency_100_cases_ms: { p50: Math.round(p50), p95: Math.round(p95) },
        serve_cpu_us_per_case: Math.round(cpuUsPerCase),
        memory_runs: MEM_RUNS,
        memory_cases_per_run: MEM_CASES,
        rss_after_memory_runs_mib: Math.round(rssAfter),
        rss_settled_mib: Math.round(rssSettled),
        peak_rss_mib: Math.round(rss),
        first_command: first && {
          cases: first.cases,
          rounds: first.rounds,
          first_ever: { s: Number(first.first.seconds.toFixed(2)), peak_rss_mib: Math.round(first.first.peakMib) },
          reused_cold: { s: Number(first.reused.seconds.toFixed(2)), peak_rss_mib: Math.round(first.reused.peakMib) },
          warm: { s: Number(first.warm.seconds.toFixed(2)), peak_rss_mib: Math.round(first.warm.peakMib) },
          first_to_reused_wall: Number((first.first.seconds / first.reused.seconds).toFixed(2)),
        },
        client_push: push && { cases: PUSH_CASES, s: Number(push.seconds.toFixed(2)), peak_rss_mib: Math.round(push.peakMib) },
        serve_peak_rss_after_push_mib: Math.round(peakRss(pid)),
      }),
    );
  } finally {
    await serve?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  const profile = PROFILE_DIR ? path.join(PROFILE_DIR, 'throughput-serve.cpuprofile') : '';
  if (profile && fs.existsSync(profile)) log(summarizeProfile(profile, 25));
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:embedded failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
