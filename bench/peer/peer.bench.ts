/**
 * The peer benchmark (issue 15.3): the same N deterministic cases scored by promptfoo 0.120.0 (the last
 * release that runs on Node 20; echo provider, -j 32) and by evals - embedded cold (`evals run`, no serve),
 * embedded warm (`evals run` against a running `evals serve`) and, when BENCH_SERVER names a running
 * ingestion app, on the servers - in interleaved rounds. Prints the table (medians), the ratios to
 * promptfoo and one JSON line; asserts nothing (docs/benchmarks.md).
 *
 *   npm run bench:peer                          # 10 000 cases, 3 rounds
 *   BENCH_N=2000 BENCH_ROUNDS=1 npm run bench:peer
 *   BENCH_SERVER=http://127.0.0.1:3001 npm run bench:peer   # also the four apps (read model on port + 2)
 *
 * The workload: a quarter each `contains`, `regex`, `json_valid` and `exact`, every output passing; written
 * for promptfoo (promptfooconfig.yaml + tests.json, the output is the echoed prompt) and for evals
 * (suite.json, key `peer-bench-N`, + outputs.jsonl). promptfoo is installed with npm into
 * BENCH_PROMPTFOO_DIR (default: a folder under the system temp directory, kept for the next run); its
 * package looks for `drizzle/` one level too high, which one symlink mends. BENCH_SKIP_PROMPTFOO=1 leaves it out.
 * Wall time and peak RSS of every measured process come from /usr/bin/time when it is there.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startEmbeddedServe, type EmbeddedServe } from '../../test/support/embedded-process';
import { PROMPTFOO_VERSION, installPromptfoo, promptfooEnv } from '../../test/support/promptfoo';

const N = Number(process.env.BENCH_N ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SKIP_PROMPTFOO = process.env.BENCH_SKIP_PROMPTFOO === '1';
const SERVER = process.env.BENCH_SERVER ?? '';
const root = path.resolve(__dirname, '../..');
const evalsBin = path.join(root, 'bin', 'evals.js');
const TIME = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : null;
const log = (s = '') => process.stdout.write(`${s}\n`);
const fmt = (x: number, digits = 0) => x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** The reference workload, case for case. */
function writeWorkload(dir: string, n: number): void {
  const tests: unknown[] = [];
  const cases: unknown[] = [];
  const outputs: string[] = [];
  for (let i = 0; i < n; i++) {
    const k = i % 4;
    const c: Record<string, unknown> = { id: `c${i}`, input: `case c${i}` };
    let o: string;
    let a: unknown[];
    if (k === 0) {
      o = `The answer is ${i}.`;
      a = [{ type: 'contains', value: String(i) }];
      c.scorer = { type: 'contains', value: String(i) };
    } else if (k === 1) {
      o = `ticket-${String(i).padStart(6, '0')} opened`;
      a = [{ type: 'regex', value: 'ticket-\\d{6}' }];
      c.scorer = { type: 'regex', pattern: 'ticket-\\d{6}' };
    } else if (k === 2) {
      o = JSON.stringify({ id: i, ok: true }).replace(/,/g, ', ').replace(/:/g, ': ');
      a = [{ type: 'is-json' }];
      c.scorer = { type: 'json_valid' };
    } else {
      o = `exact-${i}`;
      a = [{ type: 'equals', value: `exact-${i}` }];
      c.expected = `exact-${i}`;
      c.scorer = { type: 'exact' };
    }
    tests.push({ vars: { output: o }, assert: a });
    cases.push(c);
    outputs.push(JSON.stringify({ case_id: `c${i}`, output: o }));
  }
  fs.writeFileSync(path.join(dir, 'tests.json'), JSON.stringify(tests));
  fs.writeFileSync(path.join(dir, 'promptfooconfig.yaml'), "description: peer-bench\nprompts:\n  - '{{output}}'\nproviders:\n  - echo\ntests: file://tests.json\n");
  fs.writeFileSync(
    path.join(dir, 'suite.json'),
    JSON.stringify({ key: `peer-bench-${n}`, description: 'peer workload: the promptfoo comparison cases', default_scorer: { type: 'json_valid' }, pass_threshold: 0.8, regression_threshold: 0.1, cases }),
  );
  fs.writeFileSync(path.join(dir, 'outputs.jsonl'), `${outputs.join('\n')}\n`);
}

interface Measured {
  readonly wallS: number;
  readonly peakMiB: number | null;
  readonly code: number | null;
}

/** Runs a command to its end: wall time (ours), peak RSS (/usr/bin/time -f %M), exit code, its output kept for errors. */
function measure(cmd: string, args: string[], options: { cwd: string; env?: Record<string, string> }): Promise<Measured & { output: string }> {
  const timeFile = path.join(os.tmpdir(), `evals-peer-time-${process.pid}-${Math.random().toString(36).slice(2)}`);
  const [file, argv] = TIME ? [TIME, ['-f', '%M', '-o', timeFile, cmd, ...args]] : [cmd, args];
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn(file, argv, { cwd: options.cwd, env: { ...process.env, ...(options.env ?? {}) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
    child.stderr.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
    child.on('error', reject);
    child.on('exit', (code) => {
      const wallS = (performance.now() - t) / 1000;
      let peakMiB: number | null = null;
      try {
        const kb = Number(fs.readFileSync(timeFile, 'utf8').trim().split('\n').pop());
        peakMiB = Number.isFinite(kb) ? kb / 1024 : null;
        fs.rmSync(timeFile, { force: true });
      } catch {
        peakMiB = null;
      }
      resolve({ wallS, peakMiB, code, output });
    });
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** CPU time (user + system, clock ticks) a process has used so far, from /proc; null where there is none. */
function cpuTicks(pid: number): number | null {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

/**
 * Waits until `pid` (the warm row's `evals serve`) has gone quiet: at most one clock tick of CPU in 300 ms,
 * for at most 15 s. After a run the serve goes on collecting garbage for a second or more, on the same two
 * cores as the next measured process; measured then, a cold run paid for the warm one (docs/benchmarks.md).
 */
async function quiet(pid: number | undefined): Promise<void> {
  if (pid === undefined || cpuTicks(pid) === null) return;
  const until = performance.now() + 15_000;
  let last = cpuTicks(pid) ?? 0;
  while (performance.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    const now = cpuTicks(pid) ?? 0;
    if (now - last <= 1) return;
    last = now;
  }
}

async function reachable(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url.replace(/\/$/, '')}/health`, { signal: AbortSignal.timeout(2_000) });
    return res.status < 500;
  } catch {
    return false;
  }
}

async function main(): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-bench-peer-'));
  let serve: EmbeddedServe | undefined;
  try {
    log(`peer benchmark: ${fmt(N)} cases (a quarter each contains, regex, json_valid, exact), ${ROUNDS} interleaved round(s); ${os.cpus().length} cores, Node ${process.version}`);
    writeWorkload(work, N);
    const promptfoo = SKIP_PROMPTFOO ? null : installPromptfoo(log);
    const coldDir = path.join(work, 'cold-data');
    const warmDir = path.join(work, 'warm-data');
    const runArgs = (runId: string, extra: string[] = []) => [evalsBin, 'run', '--suite', path.join(work, 'suite.json'), '--outputs', path.join(work, 'outputs.jsonl'), '--subject-id', 'peer', '--run-id', runId, '--json', ...extra];
    const servers = SERVER && (await reachable(SERVER)) ? SERVER : '';
    if (SERVER && !servers) log(`BENCH_SERVER ${SERVER} is not reachable: the servers row is left out`);

    // Not measured: the cold data directory is created (initdb, migrations) and the suite pushed once, so
    // "cold" is a process start on an existing directory, as a CI job with a cached .evals/ would see.
    const prime = await measure(process.execPath, runArgs('prime-cold'), { cwd: work, env: { EVALS_DATA_DIR: coldDir } });
    if (prime.code !== 0 && prime.code !== 1) throw new Error(`evals run (cold, priming) exited ${prime.code}: ${prime.output}`);
    serve = await startEmbeddedServe({ dataDir: warmDir, env: { LOG_LEVEL: 'warn' } });
    const warmUp = await measure(process.execPath, runArgs('prime-warm', ['--server', serve.url]), { cwd: work });
    if (warmUp.code !== 0 && warmUp.code !== 1) throw new Error(`evals run (warm, priming) exited ${warmUp.code}: ${warmUp.output}`);

    const results: Record<string, Measured[]> = { promptfoo: [], cold: [], warm: [], servers: [] };
    for (let r = 0; r < ROUNDS; r++) {
      if (promptfoo) {
        await quiet(serve.child.pid);
        const m = await measure(promptfoo, ['eval', '-c', 'promptfooconfig.yaml', '--no-cache', '--no-table', '--no-progress-bar', '-o', 'out.json', '-j', '32'], {
          cwd: work,
          env: promptfooEnv(path.join(work, '.pf')),
        });
        results.promptfoo.push(m);
        log(`  round ${r + 1}: promptfoo ${fmt(m.wallS, 2)} s (exit ${m.code})`);
      }
      await quiet(serve.child.pid);
      const cold = await measure(process.execPath, runArgs(`cold-${r}`), { cwd: work, env: { EVALS_DATA_DIR: coldDir } });
      if (cold.code !== 0) throw new Error(`evals run (cold) exited ${cold.code}: ${cold.output}`);
      results.cold.push(cold);
      await quiet(serve.child.pid);
      const warm = await measure(process.execPath, runArgs(`warm-${r}`, ['--server', serve.url]), { cwd: work });
      if (warm.code !== 0) throw new Error(`evals run (warm) exited ${warm.code}: ${warm.output}`);
      results.warm.push(warm);
      let line = `  round ${r + 1}: evals cold ${fmt(cold.wallS, 2)} s, warm ${fmt(warm.wallS, 2)} s`;
      if (servers) {
        const m = await measure(process.execPath, runArgs(`servers-${process.pid}-${r}`, ['--server', servers]), { cwd: work });
        if (m.code !== 0) throw new Error(`evals run (servers) exited ${m.code}: ${m.output}`);
        results.servers.push(m);
        line += `, servers ${fmt(m.wallS, 2)} s`;
      }
      log(line);
    }
    const serveRss = Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${serve.child.pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;

    const rows: Array<[string, string, Measured[]]> = [
      ['promptfoo', `promptfoo ${PROMPTFOO_VERSION}, echo provider, -j 32`, results.promptfoo],
      ['cold', 'evals embedded cold (`evals run`, no serve)', results.cold],
      ['warm', 'evals embedded warm (against `evals serve`)', results.warm],
      ['servers', 'evals on the four apps (PostgreSQL + JetStream)', results.servers],
    ];
    const base = median(results.promptfoo.map((m) => m.wallS));
    log('');
    log('| mode | wall s (median) | cases/s | vs promptfoo | peak RSS of the measured process, MiB |');
    log('|---|---|---|---|---|');
    const json: Record<string, unknown> = { bench: 'peer', cases: N, rounds: ROUNDS, promptfoo_version: PROMPTFOO_VERSION };
    for (const [key, label, ms] of rows) {
      if (ms.length === 0) continue;
      const wall = median(ms.map((m) => m.wallS));
      const rss = median(ms.map((m) => m.peakMiB ?? NaN));
      const ratio = Number.isFinite(base) ? base / wall : NaN;
      log(`| ${label} | ${fmt(wall, 2)} | ${fmt(N / wall)} | ${Number.isFinite(ratio) ? `${fmt(ratio, 1)}x` : 'n/a'} | ${Number.isFinite(rss) ? fmt(rss) : 'n/a'} |`);
      json[key] = { wall_s: Number(wall.toFixed(2)), cases_per_s: Math.round(N / wall), vs_promptfoo: Number.isFinite(ratio) ? Number(ratio.toFixed(1)) : null, peak_rss_mib: Number.isFinite(rss) ? Math.round(rss) : null };
    }
    log(`(warm: the client's peak RSS; the serve process peaked at ${fmt(serveRss)} MiB)`);
    json.serve_peak_rss_mib = Math.round(serveRss);
    log(`BENCH_PEER_JSON ${JSON.stringify(json)}`);
  } finally {
    await serve?.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:peer failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
