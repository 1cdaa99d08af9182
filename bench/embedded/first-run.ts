/**
 * bench:embedded's phase 5 (issue 31): a newcomer's first command. `evals run --suite FILE.yaml --outputs
 * FILE.jsonl` of the peer workload (BENCH_FIRST_CASES, default 10 000: a quarter each contains, regex,
 * json_valid, exact) as its own process, timed by /usr/bin/time (wall, peak RSS):
 *   first-ever: a fresh data directory (the database created, migrated, the suite pushed, then the run);
 *   reused cold: the same command again on that directory (the suite already stored) - the baseline of the ratio;
 *   warm: the same command against the bench's running `evals serve` (EVALS_SERVER).
 * BENCH_FIRST_ROUNDS (default 3) rounds, interleaved, medians. Then, unless BENCH_PUSH_CASES=0, the client
 * `evals suite push` of a BENCH_PUSH_CASES (default 100 000) case YAML to that serve: its peak RSS, and the serve's.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.resolve(__dirname, '../..');
const evalsBin = path.join(root, 'bin', 'evals.js');

export interface Timed {
  readonly seconds: number;
  readonly peakMib: number;
}

/** One evals command under /usr/bin/time -v; throws unless it exits 0. */
export function timedEvals(args: string[], env: Record<string, string>, cwd: string): Timed {
  const r = spawnSync('/usr/bin/time', ['-v', process.execPath, evalsBin, ...args], { cwd, env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`evals ${args.join(' ')} exited ${r.status}: ${r.stderr.slice(-2000)}`);
  const wall = /Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)/.exec(r.stderr);
  const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr);
  if (!wall || !rss) throw new Error('no /usr/bin/time report');
  return { seconds: Number(wall[1] ?? 0) * 3600 + Number(wall[2]) * 60 + Number(wall[3]), peakMib: Number(rss[1]) / 1024 };
}

/** The peer workload (bench/peer) as a YAML suite file in the sliced layout, and its passing outputs. */
export function writePeerWorkload(dir: string, n: number): { suite: string; outputs: string } {
  const suite = path.join(dir, `peer-${n}.suite.yaml`);
  const outputs = path.join(dir, `peer-${n}.outputs.jsonl`);
  const yaml: string[] = [`key: peer-first-${n}`, 'description: peer workload, first run', 'default_scorer: {type: json_valid}', 'pass_threshold: 0.8', 'regression_threshold: 0.1', 'cases:'];
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    yaml.push(`  - id: c${i}`, `    input: case c${i}`);
    let o: string;
    if (i % 4 === 0) {
      o = `The answer is ${i}.`;
      yaml.push(`    scorer: {type: contains, value: "${i}"}`);
    } else if (i % 4 === 1) {
      o = `ticket-${String(i).padStart(6, '0')} opened`;
      yaml.push('    scorer: {type: regex, pattern: "ticket-\\\\d{6}"}');
    } else if (i % 4 === 2) {
      o = JSON.stringify({ id: i, ok: true });
      yaml.push('    scorer: {type: json_valid}');
    } else {
      o = `exact-${i}`;
      yaml.push(`    expected: exact-${i}`, '    scorer: {type: exact}');
    }
    out.push(JSON.stringify({ case_id: `c${i}`, output: o }));
  }
  fs.writeFileSync(suite, `${yaml.join('\n')}\n`);
  fs.writeFileSync(outputs, `${out.join('\n')}\n`);
  return { suite, outputs };
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

export interface FirstRunResult {
  readonly cases: number;
  readonly rounds: number;
  readonly first: Timed;
  readonly reused: Timed;
  readonly warm: Timed;
}

export function firstRuns(work: string, serveUrl: string, cases: number, rounds: number): FirstRunResult {
  const { suite, outputs } = writePeerWorkload(work, cases);
  const run = (id: string) => ['run', '--suite', suite, '--outputs', outputs, '--subject-id', 'first', '--run-id', id, '--json'];
  const all = { first: [] as Timed[], reused: [] as Timed[], warm: [] as Timed[] };
  for (let r = 0; r < rounds; r++) {
    const dataDir = path.join(work, `first-${r}`);
    const env = { EVALS_DATA_DIR: dataDir, EVALS_SERVER: '' };
    all.first.push(timedEvals(run(`first-${r}`), env, work));
    all.reused.push(timedEvals(run(`reused-${r}`), env, work));
    all.warm.push(timedEvals(run(`warm-${r}`), { EVALS_SERVER: serveUrl }, work));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  const med = (xs: Timed[]): Timed => ({ seconds: median(xs.map((x) => x.seconds)), peakMib: median(xs.map((x) => x.peakMib)) });
  return { cases, rounds, first: med(all.first), reused: med(all.reused), warm: med(all.warm) };
}

/** `evals suite push` of an n-case YAML suite to a running serve: the client's wall and peak RSS. */
export function clientPush(work: string, serveUrl: string, n: number): Timed {
  const { suite } = writePeerWorkload(work, n);
  return timedEvals(['suite', 'push', suite], { EVALS_SERVER: serveUrl }, work);
}
