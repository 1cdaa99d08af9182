/**
 * End-to-end benchmark of the durable pipeline (docs/pipeline.md): ingestion, scoring-worker, read-model and
 * regression started as separate processes (test/support/app-processes.ts) on the real PostgreSQL and NATS
 * JetStream, in a fresh schema with prefixed streams and subjects. Run: `npm run bench:pipeline`. The apps
 * run as deployed: compiled (dist/, rebuilt when stale; BENCH_APPS=source: through @swc-node/register), each
 * with the NODE_OPTIONS (V8 heap cap) of its Deployment in deploy/k8s/base (BENCH_APP_HEAP=none: without) -
 * bench/pipeline/app-runtime.ts.
 * Prints numbers only and asserts nothing (docs/testing.md); docs/benchmarks.md explains every number.
 *
 * Phases, in this order:
 *   0. raw baselines, before the apps start: a PostgreSQL COPY of evidence-shaped rows into a table shaped
 *      like `evidence` (same columns, same primary key), and a pipelined JetStream publish loop of ~200-byte
 *      messages to a bench stream;
 *   1. suites pushed with POST /v1/suites (JSON): BENCH_CASES cases (default 100 000), BENCH_BATCH_RUN
 *      cases (default 2 000) and BENCH_LAT_RUN cases (default 100), all with the same mix of deterministic
 *      scorers (exact, contains, regex, json_valid, numeric_range, not_contains), a quarter failing;
 *   2. streamed: one run of the big suite: run.requested, BENCH_CASES output.submitted with BENCH_INFLIGHT
 *      (default 1 000) publishes in flight, run.sealed; timed from the run.requested publish to the run's
 *      EvalResult received on `evals.result.recorded` (prefixed EVALS_OUTBOUND, ordered consumer);
 *   2b. streamed in batches (issue 28): the same run size, published with @evals/publisher - outputs in
 *      `evals.outputs.submitted` batches of up to 1 000 (768 KiB), BENCH_BATCH_INFLIGHT (default 8) in flight
 *      per connection, one run per publishing connection sharing the cases - timed as the streamed phase;
 *   3. batched: the same number of case scorings as ceil(BENCH_CASES / BENCH_BATCH_RUN) runs of the second
 *      suite, each one `evals.run.requested` with its outputs inline; timed from the first publish to the
 *      last EvalResult received;
 *   4. latency: BENCH_LAT_RATE (default 500) cases/s for BENCH_LAT_SECONDS (default 20) s as streamed runs
 *      of BENCH_LAT_RUN cases (their outputs in one `evals.outputs.submitted` batch with @evals/publisher;
 *      BENCH_LAT_MESSAGES=single: one `evals.output.submitted` each), each sealed right after its outputs were
 *      acknowledged; per run, from the moment the seal is handed to the client (just before `js.publish`) to
 *      (a) its EvalResult received on the outbound stream - and, of that, when the server stored it there (its
 *      JetStream timestamp: what (a) adds is the bench's own delay in reading it) -, and (b) its row seen in
 *      `eval_results` by a 10 ms poll; the first also per BENCH_LAT_WINDOW_S (default 5) s window of seals.
 * Before the phases: the catalogs' dead rows of dropped schemas are vacuumed (bench-env.ts, `vacuumCatalogs`).
 * Throughout: CPU seconds (utime+stime from /proc/<pid>/stat) of every app, the bench itself, nats-server
 * and each app's PostgreSQL backends (pg_stat_activity.application_name), and the peak RSS (VmHWM) of each
 * app. Everything is cleaned up at the end (processes, streams, schema). The last line is one JSON object.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { jetstream, RetentionPolicy, StorageType, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Client } from 'pg';
import { runStreamId } from '@evals/domain';
import { EvalsPublisher, jetStreamPort } from '@evals/publisher';
import { deploymentSchemas } from '@evals/persistence';
import { stopProcess, type AppCluster } from '../../test/support/app-processes';
import type { TestSchema } from '../../test/support/isolation';
import { testServers } from '../../test/support/servers';
import { appEnvs, appRuntime, ensureBuilt } from './app-runtime';
import { APPS, BenchEnv, envelope, intEnv, log, now, percentile, sleep } from './bench-env';
import { summarize as summarizeProfile } from './profile-summary';

// --- configuration --------------------------------------------------------------------------------------

const CASES = intEnv('BENCH_CASES', 100_000);
const BATCH_RUN = intEnv('BENCH_BATCH_RUN', 2_000);
const INFLIGHT = intEnv('BENCH_INFLIGHT', 1_000);
/**
 * Publishing connections of the streamed phase, each with its share of BENCH_INFLIGHT acks outstanding. One
 * connection was the bound of that phase (the bench, not the pipeline); several spread the acks over more
 * of nats-server's per-connection read loops.
 */
const PUBLISHERS = intEnv('BENCH_PUBLISHERS', 4);
const LAT_RATE = intEnv('BENCH_LAT_RATE', 500);
const LAT_SECONDS = intEnv('BENCH_LAT_SECONDS', 20);
/**
 * Seconds of the same offered load before the measured ones (default 5). Their runs are reported apart
 * ("warm-up"), not in the phase's percentiles: the first seconds after idle apps meet a burst are V8 compiling
 * the hot paths and every PostgreSQL backend loading its caches - a start, not the steady state a service
 * lives in. 0: measured from the first run, as before issue 28's last round.
 */
const LAT_WARMUP_S = intEnv('BENCH_LAT_WARMUP_S', 5);
const LAT_RUN = intEnv('BENCH_LAT_RUN', 100);
/**
 * How the latency phase publishes each run's outputs: `batches` (default; @evals/publisher, one
 * `evals.outputs.submitted` per run of up to 1 000 cases, as the CLI and a sandbox team do) or `single`
 * (one `evals.output.submitted` per output, the path before issue 28).
 */
const LAT_MESSAGES = (() => {
  const raw = process.env.BENCH_LAT_MESSAGES ?? 'batches';
  if (raw !== 'batches' && raw !== 'single') throw new Error(`BENCH_LAT_MESSAGES must be batches or single, got ${raw}`);
  return raw;
})();
/** Seconds per window of the latency phase's per-window percentiles (runs grouped by when their seal was handed over). */
const LAT_WINDOW_S = intEnv('BENCH_LAT_WINDOW_S', 5);
const RAW_ROWS = intEnv('BENCH_RAW_ROWS', 100_000);
const RAW_MSGS = intEnv('BENCH_RAW_MSGS', 100_000);
/** Seconds the started apps are watched doing nothing (their idle CPU: what a phase pays regardless of its cases). */
const IDLE_S = intEnv('BENCH_IDLE_S', 3);
/** Longest wait for the EvalResults of one phase, counted from its last publish. */
const PHASE_TIMEOUT_S = intEnv('BENCH_PHASE_TIMEOUT_S', 600);
/** Which end-to-end phases run, in this order (the raw baselines always run). */
/** Batches in flight in the streamed-in-batches phase (@evals/publisher's maxInFlight). */
const BATCH_INFLIGHT = intEnv('BENCH_BATCH_INFLIGHT', 8);
const PHASES = new Set((process.env.BENCH_PHASES ?? 'streamed,streamed-batches,batched,latency').split(',').map((x) => x.trim()));
/** Extra environment for the apps, as JSON (e.g. '{"WORKER_MAX_BATCH":"50"}'); empty: the defaults. */
const APP_ENV: Record<string, string> = process.env.BENCH_APP_ENV ? JSON.parse(process.env.BENCH_APP_ENV) : {};
/** BENCH_APPS: `dist` (default; the compiled apps, as deployed) or `source` (through @swc-node/register): app-runtime.ts. */
const APP_RUNTIME = appRuntime();
/**
 * Diagnostic: when set, every app loads cpu-profile-hook.js (NODE_OPTIONS=--require; no app code changes)
 * and writes one V8 CPU profile per phase into this directory, summarised after the phase.
 */
const PROFILE_DIR = process.env.BENCH_CPU_PROFILE_DIR ? path.resolve(process.env.BENCH_CPU_PROFILE_DIR) : '';
if (PROFILE_DIR) {
  fs.mkdirSync(PROFILE_DIR, { recursive: true });
  fs.writeFileSync(path.join(PROFILE_DIR, 'control'), '');
  APP_ENV.NODE_OPTIONS = `${APP_ENV.NODE_OPTIONS ?? ''} --require ${path.join(__dirname, 'cpu-profile-hook.js')}`.trim();
  APP_ENV.EVALS_BENCH_PROFILE_DIR = PROFILE_DIR;
}
/** Each app's NODE_OPTIONS: its Deployment's in deploy/k8s/base (the V8 heap cap; BENCH_APP_HEAP=none: V8's own), then BENCH_APP_ENV's. */
const APP_ENVS = appEnvs(['ingestion', 'scoring-worker', 'read-model', 'regression'], APP_ENV);

async function profilePhase(phase: string | null): Promise<void> {
  if (!PROFILE_DIR) return;
  fs.writeFileSync(path.join(PROFILE_DIR, 'control'), phase ?? '');
  await sleep(500); // the hook polls every 100 ms
}

async function profileReport(phase: string): Promise<void> {
  if (!PROFILE_DIR) return;
  await sleep(500);
  for (const app of APPS) {
    const file = path.join(PROFILE_DIR, `${phase}-${app}.cpuprofile`);
    if (fs.existsSync(file)) log(summarizeProfile(file, 12).replace(/^/gm, '  '));
  }
}
/** NATS's default max_payload; every message the bench publishes must fit. */
const MAX_PAYLOAD = 1024 * 1024;

const round = (x: number, digits = 0) => (Number.isFinite(x) ? Number(x.toFixed(digits)) : null);
const fmt = (x: number | null | undefined, digits = 0) =>
  x === null || x === undefined || !Number.isFinite(x) ? 'n/a' : x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

// --- the suites and the candidate outputs ---------------------------------------------------------------

const WORDS = 'the agent answered customer shipping invoice status ticket priority queue resolved pending update thanks please note team'.split(' ');

/** Deterministic prose of exactly `length` characters, no digits and none of the scorers' needles. */
function filler(seed: number, length: number): string {
  let x = (seed * 2654435761 + 1) >>> 0;
  let s = '';
  while (s.length < length) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    s += `${WORDS[(x >>> 8) % WORDS.length]} `;
  }
  return s.slice(0, length);
}

const SCORER_KINDS = ['exact', 'contains', 'regex', 'json_valid', 'numeric_range', 'not_contains'] as const;
const kindOf = (i: number) => SCORER_KINDS[i % SCORER_KINDS.length];
/** A quarter of the cases of every scorer kind get a failing output. */
const failing = (i: number) => Math.floor(i / SCORER_KINDS.length) % 4 === 3;
const expectedPassed = (n: number) => Array.from({ length: n }, (_, i) => i).filter((i) => !failing(i)).length;

function exactExpected(i: number): string {
  return `answer-${i} ${filler(i, 180)}`;
}

function suiteCase(i: number): Record<string, unknown> {
  const base = { id: `c${i}`, input: `question ${i}` };
  switch (kindOf(i)) {
    case 'exact':
      return { ...base, expected: exactExpected(i) }; // the default scorer
    case 'contains':
      return { ...base, scorer: { type: 'contains', value: ['refund', `order-${i}`] } };
    case 'regex':
      return { ...base, scorer: { type: 'regex', pattern: '^ticket-[0-9]+ (open|closed)\\b', flags: 'i' } };
    case 'json_valid':
      return { ...base, scorer: { type: 'json_valid', require: 'object' } };
    case 'numeric_range':
      return { ...base, scorer: { type: 'numeric_range', min: 0, max: 100, extract: 'first' } };
    case 'not_contains':
      return { ...base, scorer: { type: 'not_contains', value: ['password', 'secret token'] } };
  }
}

/** A candidate output of about 200 characters for case i, passing unless `failing(i)`. */
function outputFor(i: number): string {
  const pass = !failing(i);
  switch (kindOf(i)) {
    case 'exact':
      return pass ? exactExpected(i) : exactExpected(i).toUpperCase();
    case 'contains':
      return `${pass ? 'refund issued' : 'credit issued'} for order-${i}. ${filler(i, 170)}`;
    case 'regex':
      return `${pass ? `ticket-${i} open` : 'ticket pending'} ${filler(i, 180)}`;
    case 'json_valid': {
      const text = JSON.stringify({ id: i, status: 'ok', note: filler(i, 160) });
      return pass ? text : text.slice(0, -1);
    }
    case 'numeric_range':
      return `${pass ? i % 100 : 150 + (i % 50)} points ${filler(i, 185)}`;
    case 'not_contains':
      return pass ? filler(i, 200) : `${filler(i, 150)} password ${filler(i + 1, 40)}`;
  }
}

function suiteBody(key: string, n: number): string {
  return JSON.stringify({
    key,
    description: `pipeline benchmark suite of ${n} cases`,
    default_scorer: { type: 'exact' },
    pass_threshold: 0.5,
    regression_threshold: 0.1,
    cases: Array.from({ length: n }, (_, i) => suiteCase(i)),
  });
}

// --- /proc sampling: CPU and memory ----------------------------------------------------------------------

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime + stime of a process, in seconds; null when it is gone. */
function cpuSeconds(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK; // fields 14 and 15 of proc(5)
  } catch {
    return null;
  }
}

function statusKb(pid: number, key: 'VmHWM' | 'VmRSS'): number | null {
  try {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** Machine-wide jiffies from /proc/stat: busy (all but idle and iowait), steal, total. */
function machineJiffies(): { busy: number; steal: number; total: number } {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0];
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = v;
  const total = user + nice + system + idle + iowait + irq + softirq + steal;
  return { busy: total - idle - iowait, steal, total };
}

interface CpuSnapshot {
  readonly t: number;
  /** Label -> pid -> CPU seconds. */
  readonly procs: Map<string, Map<number, number>>;
  /** Every other process on the machine, by command name -> pid -> CPU seconds. */
  readonly others: Map<string, Map<number, number>>;
  readonly machine: { busy: number; steal: number; total: number };
}

/** Local TCP ports of a process's sockets (its side of its connections to PostgreSQL). */
function localPorts(pid: number): Set<number> {
  const inodes = new Set<string>();
  try {
    for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m) inodes.add(m[1]);
      } catch {
        // closed meanwhile
      }
    }
  } catch {
    return new Set();
  }
  const ports = new Set<number>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && inodes.has(f[9])) ports.add(parseInt(f[1].split(':')[1], 16));
    }
  }
  return ports;
}

/**
 * Each process holding one end of a connected Unix stream socket, by the pid at the other end (`ss -xpn`: a
 * line per socket end, with its inode, its peer's inode and the process that holds it). Empty when `ss` fails.
 */
function unixSocketPeers(): Map<number, number> {
  let text = '';
  try {
    text = execFileSync('ss', ['-xpnH'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  } catch {
    return new Map();
  }
  const ends: Array<{ inode: string; peer: string; pid: number }> = [];
  for (const line of text.split('\n')) {
    // u_str ESTAB 0 0 <local address> <inode> <peer address> <peer inode> users:(("name",pid=N,fd=F))
    const f = line.trim().split(/\s+/);
    const pid = /pid=(\d+)/.exec(line);
    if (f.length >= 8 && pid) ends.push({ inode: f[5], peer: f[7], pid: Number(pid[1]) });
  }
  const holder = new Map(ends.map((e) => [e.inode, e.pid]));
  const peers = new Map<number, number>();
  for (const e of ends) {
    const other = holder.get(e.peer);
    if (other !== undefined) peers.set(e.pid, other);
  }
  return peers;
}

class Sampler {
  readonly peakRssKb = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly apps: () => Map<string, number>,
    private readonly db: Client,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.sampleRss(), 250);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.sampleRss();
  }

  private readonly phasePeakKb = new Map<string, number>();
  /** Phase -> app -> peak RSS in MiB. */
  readonly phasePeaks: Record<string, Record<string, number>> = {};

  private sampleRss(): void {
    for (const [name, pid] of this.apps()) {
      const kb = Math.max(statusKb(pid, 'VmHWM') ?? 0, statusKb(pid, 'VmRSS') ?? 0);
      if (kb > (this.peakRssKb.get(name) ?? 0)) this.peakRssKb.set(name, kb);
      if (kb > (this.phasePeakKb.get(name) ?? 0)) this.phasePeakKb.set(name, kb);
    }
  }

  /**
   * Starts a phase's own peak: VmHWM is reset by writing 5 to /proc/<pid>/clear_refs (proc(5); harmless to
   * the process), so the peak read at the end of the phase is the phase's, not an earlier one's.
   */
  beginPhase(): void {
    this.sampleRss();
    for (const [, pid] of this.apps()) {
      try {
        fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
      } catch {
        // not permitted here: the phase peak is then the running peak
      }
    }
    this.phasePeakKb.clear();
  }

  endPhase(phase: string): Record<string, number> {
    this.sampleRss();
    const peaks = Object.fromEntries([...this.phasePeakKb].map(([k, v]) => [k, Math.round(v / 1024)]));
    this.phasePeaks[phase] = peaks;
    return peaks;
  }

  /**
   * CPU seconds of our apps, the bench, nats-server, the PostgreSQL backends serving each of our processes
   * (matched by the client port of the connection, so other users' apps of the same name never count),
   * the other PostgreSQL processes, and every other process by name.
   */
  async snapshot(): Promise<CpuSnapshot> {
    const procs = new Map<string, Map<number, number>>();
    const others = new Map<string, Map<number, number>>();
    const put = (into: Map<string, Map<number, number>>, label: string, pid: number) => {
      const s = cpuSeconds(pid);
      if (s === null) return;
      const m = into.get(label) ?? new Map<number, number>();
      m.set(pid, s);
      into.set(label, m);
    };
    const ours = new Map<string, number>([...this.apps(), ['bench', process.pid]]);
    const portOwner = new Map<number, string>();
    for (const [name, pid] of ours) for (const port of localPorts(pid)) portOwner.set(port, name);
    const backendOwner = new Map<number, string>();
    const rows = (await this.db.query(`SELECT pid, client_port FROM pg_stat_activity WHERE client_port IS NOT NULL`)).rows as Array<{ pid: number; client_port: number }>;
    // A connection over the Unix socket has client port -1: its backend is matched by the socket's peer.
    const pidOwner = new Map([...ours].map(([name, pid]) => [pid, name]));
    const socketPeers = rows.some((r) => r.client_port === -1) ? unixSocketPeers() : new Map<number, number>();
    for (const r of rows) {
      const owner = r.client_port === -1 ? pidOwner.get(socketPeers.get(r.pid) ?? -1) : portOwner.get(r.client_port);
      if (owner) backendOwner.set(r.pid, owner);
    }
    const ourPids = new Set(ours.values());
    for (const [name, pid] of ours) put(procs, name, pid);
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const pid = Number(entry);
      if (ourPids.has(pid)) continue;
      let comm: string;
      try {
        comm = fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
      } catch {
        continue;
      }
      if (comm === 'nats-server') put(procs, 'nats-server', pid);
      else if (comm === 'postgres') put(procs, `pg:${backendOwner.get(pid) ?? 'other'}`, pid);
      // Grouped by name; kernel workers rename themselves with their current work item.
      else put(others, comm.replace(/^(kworker|ksoftirqd|migration|rcu_\w+)\/.*$/, '$1'), pid);
    }
    return { t: now(), procs, others, machine: machineJiffies() };
  }
}

interface CpuUsage {
  readonly wallS: number;
  /** Label -> percent of one core over the phase. */
  readonly percent: Record<string, number>;
  /** The busiest other processes (by command name), percent of one core. */
  readonly others: Record<string, number>;
  /** All other processes alive at both ends of the phase (or started within it), percent of one core. */
  readonly othersTotal: number;
  readonly machineBusyPercent: number;
  readonly machineStealPercent: number;
}

function cpuBetween(a: CpuSnapshot, b: CpuSnapshot): CpuUsage {
  const wallS = (b.t - a.t) / 1000;
  const usage = (before: Map<string, Map<number, number>>, after: Map<string, Map<number, number>>) => {
    const out: Record<string, number> = {};
    for (const [label, pids] of after) {
      let s = 0;
      // A process that started during the phase counts from zero; one that ended during it is lost.
      for (const [pid, sec] of pids) s += sec - (before.get(label)?.get(pid) ?? [...before.values()].find((m) => m.has(pid))?.get(pid) ?? 0);
      out[label] = (100 * s) / wallS;
    }
    return out;
  };
  const percent = usage(a.procs, b.procs);
  const allOthers = usage(a.others, b.others);
  const othersTotal = Object.values(allOthers).reduce((x, y) => x + y, 0);
  const others = Object.fromEntries(
    Object.entries(allOthers)
      .filter(([, v]) => v >= 1)
      .sort((x, y) => y[1] - x[1])
      .slice(0, 5),
  );
  const total = b.machine.total - a.machine.total;
  return {
    wallS,
    percent,
    others,
    othersTotal,
    machineBusyPercent: (100 * os.cpus().length * (b.machine.busy - a.machine.busy)) / total,
    machineStealPercent: (100 * os.cpus().length * (b.machine.steal - a.machine.steal)) / total,
  };
}

const CPU_ORDER = ['ingestion', 'scoring-worker', 'read-model', 'regression', 'bench', 'nats-server', 'pg:ingestion', 'pg:scoring-worker', 'pg:read-model', 'pg:regression', 'pg:bench', 'pg:other'];

function rssLine(peaks: Record<string, number>): string {
  return `peak RSS in this phase (VmHWM, MiB): ${APPS.map((a) => `${a} ${fmt(peaks[a])}`).join(', ')}`;
}

function cpuLine(u: CpuUsage): string {
  const parts = CPU_ORDER.filter((k) => u.percent[k] !== undefined).map((k) => `${k} ${fmt(u.percent[k])}%`);
  const ours = CPU_ORDER.filter((k) => k !== 'pg:other' && k !== 'nats-server').reduce((a, k) => a + (u.percent[k] ?? 0), 0);
  const seen = Object.values(u.percent).reduce((a, b) => a + b, 0) + u.othersTotal;
  const others = Object.entries(u.others).map(([k, v]) => `${k} ${fmt(v)}%`).join(', ');
  return (
    `CPU (% of one core) over ${fmt(u.wallS, 1)} s: ${parts.join(', ')}\n` +
    `  machine busy ${fmt(u.machineBusyPercent)}% of ${os.cpus().length} cores (steal ${fmt(u.machineStealPercent, 1)}%): ours ${fmt(ours)}% (apps, bench, their PostgreSQL backends); ` +
    `nats-server and pg:other are shared with other users of the servers; other processes ${fmt(u.othersTotal)}% (busiest: ${others || 'none'}); ` +
    `unattributed ${fmt(Math.max(0, u.machineBusyPercent - seen))}% (processes that ended within the phase, kernel)`
  );
}

// --- database work, from PostgreSQL's table statistics ---------------------------------------------------

interface TableStats {
  readonly eventsScans: number;
  readonly eventsRows: number;
  readonly evidenceRows: number;
  readonly outboxRows: number;
}

/**
 * Cumulative counters of the bench schema's tables. Backends report them at most once a second (and an idle
 * one within 10 s), so a phase's figures are read after an 11 s pause: approximate, but in this schema only.
 */
async function tableStats(db: Client, schema: string): Promise<TableStats> {
  const rows = (
    await db.query(
      `SELECT relname, coalesce(seq_scan, 0) + coalesce(idx_scan, 0) AS scans, n_tup_ins AS ins
       FROM pg_stat_user_tables WHERE schemaname = ANY($1) AND relname IN ('events', 'evidence', 'outbox')`,
      [deploymentSchemas(schema)],
    )
  ).rows as Array<{ relname: string; scans: string; ins: string }>;
  const get = (t: string) => rows.find((r) => r.relname === t);
  return {
    eventsScans: Number(get('events')?.scans ?? 0),
    eventsRows: Number(get('events')?.ins ?? 0),
    evidenceRows: Number(get('evidence')?.ins ?? 0),
    outboxRows: Number(get('outbox')?.ins ?? 0),
  };
}

interface DbWork {
  readonly events_table_scans: number;
  readonly events_table_scans_per_case: number | null;
  readonly events_rows: number;
  readonly evidence_rows: number;
  readonly outbox_rows: number;
}

function dbWork(a: TableStats, b: TableStats, cases: number): DbWork {
  const scans = b.eventsScans - a.eventsScans;
  return {
    events_table_scans: scans,
    events_table_scans_per_case: round(scans / cases, 2),
    events_rows: b.eventsRows - a.eventsRows,
    evidence_rows: b.evidenceRows - a.evidenceRows,
    outbox_rows: b.outboxRows - a.outboxRows,
  };
}

function dbLine(w: DbWork): string {
  return `database work (pg_stat_user_tables, approximate): ${fmt(w.events_table_scans)} reads of the events table (${fmt(w.events_table_scans_per_case, 2)} per case), rows inserted: events ${fmt(w.events_rows)}, evidence ${fmt(w.evidence_rows)}, outbox ${fmt(w.outbox_rows)}`;
}

// --- publishing ------------------------------------------------------------------------------------------

/**
 * Publishes prepared messages over `clients` connections, message i on connection i mod clients, each with
 * at most `window / clients` acknowledgements outstanding (async acks).
 */
async function publishSpread(clients: readonly JetStreamClient[], messages: ReadonlyArray<{ subject: string; id: string; text: string }>, window: number): Promise<void> {
  const share = Math.max(1, Math.ceil(window / clients.length));
  await Promise.all(
    clients.map((client, k) => {
      const mine = messages.filter((_, i) => i % clients.length === k);
      return publishWindowed(client, mine.length, share, (i) => mine[i]);
    }),
  );
}

/** Publishes `count` messages with at most `window` acknowledgements outstanding, in order on one connection. */
async function publishWindowed(js: JetStreamClient, count: number, window: number, make: (i: number) => { subject: string; id: string; text: string }): Promise<void> {
  const pending: Array<Promise<unknown>> = [];
  let head = 0;
  for (let i = 0; i < count; i++) {
    const m = make(i);
    if (Buffer.byteLength(m.text) > MAX_PAYLOAD) throw new Error(`message ${i} is ${Buffer.byteLength(m.text)} bytes, over max_payload`);
    const p = js.publish(m.subject, m.text, { msgID: m.id, timeout: 30_000 });
    p.catch(() => undefined); // awaited below; this only keeps an early failure from being "unhandled"
    pending.push(p);
    if (pending.length - head >= window) await pending[head++];
  }
  await Promise.all(pending.slice(head));
}

// --- results ---------------------------------------------------------------------------------------------

interface PhaseResult {
  readonly completed: boolean;
  readonly cases: number;
  readonly seconds: number;
  readonly casesPerSecond: number;
  readonly publishSeconds: number;
  readonly publishRate: number;
  readonly cpu: CpuUsage;
  readonly check: string;
}

// --- the benchmark ---------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const env = new BenchEnv('bench');
  const { suffix, streamPrefix, subjectPrefix, cleanups } = env;
  const subject = (s: string) => env.subject(s);
  const rawStream = `${streamPrefix}RAW`;
  let cluster: AppCluster | undefined;
  let idleCpu: CpuUsage | null = null;
  let failed = false;

  log(`pipeline benchmark: ${fmt(CASES)} cases, batched runs of ${fmt(BATCH_RUN)}, ${fmt(INFLIGHT)} publishes in flight; node ${process.version}, ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? '?'}`);
  if (Object.keys(APP_ENV).length > 0) log(`app environment overrides: ${JSON.stringify(APP_ENV)}`);
  log(APP_RUNTIME === 'dist' ? ensureBuilt() : 'apps: from source through @swc-node/register (BENCH_APPS=source)');
  log(`apps' NODE_OPTIONS: ${Object.keys(APP_ENVS).length === 0 ? 'none' : Object.entries(APP_ENVS).map(([a, e]) => `${a} ${e.NODE_OPTIONS}`).join('; ')}`);

  log(`PostgreSQL: ${env.pg.describe}`);
  const { schema, db, js, jsm } = await env.connect([rawStream]);

  const appPids = () => new Map<string, number>([...(cluster?.apps ?? new Map()).values()].filter((a) => a.child.pid !== undefined).map((a) => [a.name, a.child.pid!]));
  const sampler = new Sampler(appPids, db);

  try {
    // --- 0. raw baselines ------------------------------------------------------------------------------
    log('\n[0] raw baselines (apps not started yet)');
    const copy = await copyBaseline(db, schema, RAW_ROWS);
    log(`  PostgreSQL COPY (${copy.method}) of ${fmt(RAW_ROWS)} evidence-shaped rows into a table with evidence's primary key: ${fmt(copy.seconds, 2)} s = ${fmt(copy.rate)} rows/s`);
    const raw = await jetStreamBaseline(js, jsm, rawStream, `${subjectPrefix}.raw`, RAW_MSGS);
    log(`  JetStream publish of ${fmt(RAW_MSGS)} x ${raw.bytes}-byte messages (file storage, Nats-Msg-Id, ${fmt(INFLIGHT)} in flight): ${fmt(raw.seconds, 2)} s = ${fmt(raw.rate)} msg/s`);
    await jsm.streams.delete(rawStream).catch(() => undefined);

    // --- 1. apps and suites ----------------------------------------------------------------------------
    log('\n[1] starting ingestion, scoring-worker, read-model, regression as separate processes');
    const tBoot = now();
    cluster = await env.startApps({ env: APP_ENV, runtime: APP_RUNTIME, appEnv: APP_ENVS });
    // BENCH_WORKERS: more scoring-worker processes on the same durable consumer (docs/scaling.md).
    const workers = Number(process.env.BENCH_WORKERS ?? 1);
    for (let k = 2; k <= workers; k++) {
      const extra = await cluster.start('scoring-worker', `-${k}`);
      cleanups.push(() => stopProcess(extra.child, 'SIGTERM'));
    }
    if (workers > 1) log(`  scoring-worker processes: ${workers}`);
    log(`  healthy after ${fmt((now() - tBoot) / 1000, 1)} s; pids ${[...appPids()].map(([n, p]) => `${n}=${p}`).join(' ')}; logs in ${cluster.logDir}`);
    sampler.start();

    // Every EvalResult published, with the time it was received here.
    const arrivals = await env.resultArrivals();

    const pushSuite = async (key: string, n: number) => {
      const body = suiteBody(key, n);
      const t = now();
      const res = await fetch(cluster!.url('ingestion', '/v1/suites'), { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const seconds = (now() - t) / 1000;
      if (res.status !== 201) throw new Error(`POST /v1/suites ${key} answered ${res.status}: ${(await res.text()).slice(0, 2000)}`);
      log(`  suite ${key}: ${fmt(n)} cases, ${fmt(Buffer.byteLength(body) / 1024 / 1024, 1)} MiB JSON, pushed in ${fmt(seconds, 2)} s`);
      return seconds;
    };
    const suiteBig = `bench-big`;
    const suiteBatch = `bench-batch`;
    const suiteLat = `bench-latency`;
    sampler.beginPhase();
    const suitePushS = await pushSuite(suiteBig, CASES);
    await pushSuite(suiteBatch, BATCH_RUN);
    await pushSuite(suiteLat, LAT_RUN);
    log(`  ${rssLine(sampler.endPhase('suites'))}`);
    // Nothing in flight: what the apps spend when idle (consumer pulls, outbox and projection polling) is
    // part of every phase's CPU, and of its CPU per case the more the shorter the phase.
    const i0 = await sampler.snapshot();
    await sleep(IDLE_S * 1000);
    idleCpu = cpuBetween(i0, await sampler.snapshot());
    log(`  idle for ${IDLE_S} s: ${cpuLine(idleCpu)}`);

    const consumerState = async () => {
      const info = async (stream: string, durable: string) => {
        const i = await jsm.consumers.info(`${streamPrefix}${stream}`, durable).catch(() => null);
        return i ? `${i.num_pending}+${i.num_ack_pending}` : '?';
      };
      return `inbound ${await info('EVALS_INBOUND', 'ingestion')}, work ${await info('EVALS_WORK', 'scoring-worker')}, events ${await info('EVALS_EVENTS', 'read-model')}`;
    };
    const countEvidence = async (runIds: string[]) =>
      Number((await db.query(`SELECT count(*)::int AS n FROM evidence WHERE run_id = ANY($1)`, [runIds])).rows[0].n);

    /** Waits for the EvalResults of `runIds`; a progress line every 5 s. Returns the last arrival time, or null on timeout. */
    const waitForResults = async (runIds: string[], start: number, label: string): Promise<number | null> => {
      const deadline = now() + PHASE_TIMEOUT_S * 1000;
      let nextTick = now() + 5_000;
      let lastEvidence = -1;
      let stalledSince = now();
      for (;;) {
        const got = runIds.filter((r) => arrivals.has(r));
        if (got.length === runIds.length) return Math.max(...runIds.map((r) => arrivals.get(r)!.t));
        if (now() > deadline) return null;
        if (now() >= nextTick) {
          nextTick = now() + 5_000;
          const evidence = await countEvidence(runIds);
          if (evidence !== lastEvidence) stalledSince = now();
          lastEvidence = evidence;
          log(`    .. ${label} +${fmt((now() - start) / 1000)} s: evidence ${fmt(evidence)}/${fmt(label === 'streamed' || label === 'streamed-batches' ? CASES : runIds.length * (label === 'latency' ? LAT_RUN : BATCH_RUN))}, results ${got.length}/${runIds.length}; pending+unacked: ${await consumerState()}`);
          if (now() - stalledSince > 120_000 && got.length < runIds.length) {
            log(`    .. ${label}: no new evidence for 120 s, giving up on this phase`);
            return null;
          }
        }
        await sleep(20);
      }
    };

    const checkResults = (runIds: string[], perRun: number, passedPerRun: number): string => {
      const bad = runIds.map((r) => arrivals.get(r)?.data).filter((d) => !d || d.metrics?.n !== perRun || d.metrics?.passed !== passedPerRun || (d.metrics?.missing_outputs ?? 0) !== 0);
      return bad.length === 0 ? `ok (every run n=${perRun}, passed=${passedPerRun}, missing=0)` : `MISMATCH in ${bad.length} run(s), e.g. ${JSON.stringify(bad[0]?.metrics ?? null)}`;
    };

    // Table statistics are flushed by the backends within ~1 s (idle ones within 10 s): wait before reading.
    const settledStats = async () => {
      await sleep(11_000);
      return tableStats(db, schema.schema);
    };
    let statsBefore = await tableStats(db, schema.schema);
    /** Phases after an incomplete one are skipped: its backlog would still be draining into them. */
    let healthy = true;

    // --- 2. streamed ------------------------------------------------------------------------------------
    let streamed: (PhaseResult & { db: DbWork }) | null = null;
    if (!PHASES.has('streamed')) {
      log('\n[2] streamed: not in BENCH_PHASES');
    } else {
      log(`\n[2] streamed: run.requested + ${fmt(CASES)} x evals.output.submitted (${fmt(INFLIGHT)} in flight over ${PUBLISHERS} connections) + run.sealed`);
      const streamRun = `stream-${suffix}`;
      // Prepared before the clock starts: the phase measures the pipeline, not the bench's JSON encoding.
      const outputs = Array.from({ length: CASES }, (_, i) => ({
        subject: subject('evals.output.submitted'),
        ...envelope('evals.output.submitted', { run_id: streamRun, case_id: `c${i}`, output: outputFor(i) }),
      }));
      const publishers: NatsConnection[] = [];
      for (let k = 0; k < PUBLISHERS; k++) {
        const pc = await connect({ servers: testServers.nats.url, name: `evals-bench-publisher-${k}`, maxReconnectAttempts: -1, reconnectTimeWait: 500 });
        publishers.push(pc);
        cleanups.push(() => pc.close());
      }
      await profilePhase('streamed');
      sampler.beginPhase();
      const s0 = await sampler.snapshot();
      const tStream = now();
      {
        const m = envelope('evals.run.requested', { run_id: streamRun, suite_key: suiteBig, subject_kind: 'agent', subject_id: 'bench', source: 'sandbox' });
        await js.publish(subject('evals.run.requested'), m.text, { msgID: m.id });
      }
      await publishSpread(publishers.map((pc) => jetstream(pc)), outputs, INFLIGHT);
      {
        const m = envelope('evals.run.sealed', { run_id: streamRun });
        await js.publish(subject('evals.run.sealed'), m.text, { msgID: m.id });
      }
      const streamPublishS = (now() - tStream) / 1000;
      log(`  published in ${fmt(streamPublishS, 1)} s (${fmt((CASES + 2) / streamPublishS)} msg/s offered)`);
      const streamDone = await waitForResults([streamRun], tStream, 'streamed');
      const s1 = await sampler.snapshot();
      await profilePhase(null);
      const streamedRss = sampler.endPhase('streamed');
      const result = await phaseResult(streamDone, tStream, CASES, streamPublishS, cpuBetween(s0, s1), [streamRun], countEvidence, () =>
        checkResults([streamRun], CASES, expectedPassed(CASES)),
      );
      const statsAfter = await settledStats();
      streamed = { ...result, db: dbWork(statsBefore, statsAfter, CASES) };
      statsBefore = statsAfter;
      healthy = streamed.completed;
      log(`  ${streamed.completed ? '' : 'INCOMPLETE: '}${fmt(streamed.cases)} cases in ${fmt(streamed.seconds, 1)} s = ${fmt(streamed.casesPerSecond)} cases/s end to end; result check: ${streamed.check}`);
      log(`  ${cpuLine(streamed.cpu)}`);
      log(`  ${dbLine(streamed.db)}`);
      log(`  ${rssLine(streamedRss)}`);
      await profileReport('streamed');
    }

    // --- 2b. streamed in batches (issue 28) -------------------------------------------------------------
    let streamedBatches: (PhaseResult & { db: DbWork }) | null = null;
    if (!PHASES.has('streamed-batches')) {
      log('\n[2b] streamed in batches: not in BENCH_PHASES');
    } else if (!healthy) {
      log('\n[2b] streamed in batches: skipped, the streamed phase did not complete (its backlog would distort it)');
    } else {
      log(`\n[2b] streamed in batches: run.requested + ${fmt(CASES)} outputs in evals.outputs.submitted (@evals/publisher, ${BATCH_INFLIGHT} batches in flight) + run.sealed`);
      const runId = `stream-batches-${suffix}`;
      const outputs = Array.from({ length: CASES }, (_, i) => outputFor(i));
      await profilePhase('streamed-batches');
      sampler.beginPhase();
      const s0 = await sampler.snapshot();
      const t0 = now();
      const publisher = new EvalsPublisher(jetStreamPort(js, subjectPrefix), { sessionId: randomUUID(), maxInFlight: BATCH_INFLIGHT });
      const run = await publisher.open({ run_id: runId, suite_key: suiteBig, subject_kind: 'agent', subject_id: 'bench', source: 'sandbox' });
      for (let i = 0; i < CASES; i++) await run.output(`c${i}`, outputs[i]!);
      const summary = await run.seal();
      const publishS = (now() - t0) / 1000;
      log(`  published ${fmt(summary.batches)} batches in ${fmt(publishS, 1)} s (${fmt(CASES / publishS)} cases/s offered)`);
      const done = await waitForResults([runId], t0, 'streamed-batches');
      const s1 = await sampler.snapshot();
      await profilePhase(null);
      const phaseRss = sampler.endPhase('streamed-batches');
      const result = await phaseResult(done, t0, CASES, publishS, cpuBetween(s0, s1), [runId], countEvidence, () => checkResults([runId], CASES, expectedPassed(CASES)));
      const statsAfter = await settledStats();
      streamedBatches = { ...result, db: dbWork(statsBefore, statsAfter, CASES) };
      statsBefore = statsAfter;
      healthy = streamedBatches.completed;
      log(`  ${streamedBatches.completed ? '' : 'INCOMPLETE: '}${fmt(streamedBatches.cases)} cases in ${fmt(streamedBatches.seconds, 1)} s = ${fmt(streamedBatches.casesPerSecond)} cases/s end to end; result check: ${streamedBatches.check}`);
      log(`  ${cpuLine(streamedBatches.cpu)}`);
      log(`  ${dbLine(streamedBatches.db)}`);
      log(`  ${rssLine(phaseRss)}`);
      await profileReport('streamed-batches');
    }

    // --- 3. batched -------------------------------------------------------------------------------------
    let batched: (PhaseResult & { db: DbWork }) | null = null;
    const batchRuns = Math.ceil(CASES / BATCH_RUN);
    if (!PHASES.has('batched')) {
      log('\n[3] batched: not in BENCH_PHASES');
    } else if (!healthy) {
      log('\n[3] batched: skipped, the streamed phase did not complete (its backlog would distort it)');
    } else {
      log(`\n[3] batched: ${batchRuns} runs x ${fmt(BATCH_RUN)} inline outputs, one evals.run.requested each (${fmt(batchRuns * BATCH_RUN)} cases)`);
      const outputs = Array.from({ length: BATCH_RUN }, (_, i) => ({ case_id: `c${i}`, output: outputFor(i) }));
      const runIds = Array.from({ length: batchRuns }, (_, k) => `batch-${suffix}-${k}`);
      const messages = runIds.map((run_id) => envelope('evals.run.requested', { run_id, suite_key: suiteBatch, subject_kind: 'agent', subject_id: 'bench', source: 'ci', outputs }));
      const size = Buffer.byteLength(messages[0].text);
      log(`  one run.requested is ${fmt(size / 1024)} KiB (max_payload ${fmt(MAX_PAYLOAD / 1024)} KiB)`);
      if (size > MAX_PAYLOAD) throw new Error(`BENCH_BATCH_RUN=${BATCH_RUN} makes a ${size}-byte message: lower it`);
      await profilePhase('batched');
      sampler.beginPhase();
      const b0 = await sampler.snapshot();
      const tBatch = now();
      await publishWindowed(js, messages.length, 8, (k) => ({ subject: subject('evals.run.requested'), ...messages[k] }));
      const batchPublishS = (now() - tBatch) / 1000;
      log(`  published in ${fmt(batchPublishS, 2)} s`);
      const batchDone = await waitForResults(runIds, tBatch, 'batched');
      const b1 = await sampler.snapshot();
      await profilePhase(null);
      const batchedRss = sampler.endPhase('batched');
      const result = await phaseResult(batchDone, tBatch, batchRuns * BATCH_RUN, batchPublishS, cpuBetween(b0, b1), runIds, countEvidence, () =>
        checkResults(runIds, BATCH_RUN, expectedPassed(BATCH_RUN)),
      );
      const statsAfter = await settledStats();
      batched = { ...result, db: dbWork(statsBefore, statsAfter, batchRuns * BATCH_RUN) };
      statsBefore = statsAfter;
      healthy = batched.completed;
      log(`  ${batched.completed ? '' : 'INCOMPLETE: '}${fmt(batched.cases)} cases in ${fmt(batched.seconds, 1)} s = ${fmt(batched.casesPerSecond)} cases/s end to end; result check: ${batched.check}`);
      log(`  ${cpuLine(batched.cpu)}`);
      log(`  ${dbLine(batched.db)}`);
      log(`  ${rssLine(batchedRss)}`);
      await profileReport('batched');
    }

    // --- 4. latency -------------------------------------------------------------------------------------
    let latency: Record<string, unknown> | null = null;
    if (!PHASES.has('latency')) {
      log('\n[4] latency: not in BENCH_PHASES');
    } else if (!healthy) {
      log('\n[4] latency: skipped, an earlier phase did not complete');
    } else {
      const runs = Math.max(1, Math.round((LAT_RATE * LAT_SECONDS) / LAT_RUN));
      const warmRuns = Math.round((LAT_RATE * LAT_WARMUP_S) / LAT_RUN);
      const intervalMs = (1000 * LAT_RUN) / LAT_RATE;
      log(
        `\n[4] latency: ${LAT_RATE} cases/s for ${LAT_SECONDS} s = ${runs} streamed runs of ${LAT_RUN} cases, one every ${fmt(intervalMs)} ms, each sealed right after its outputs (${LAT_MESSAGES === 'batches' ? 'in evals.outputs.submitted batches, @evals/publisher' : 'one evals.output.submitted each'})${warmRuns > 0 ? `, after ${LAT_WARMUP_S} s of the same load as a warm-up (${warmRuns} runs, reported apart)` : ''}`,
      );
      const warmIds = Array.from({ length: warmRuns }, (_, k) => `latw-${suffix}-${k}`);
      const runIds = Array.from({ length: runs }, (_, k) => `lat-${suffix}-${k}`);
      const sealAt = new Map<string, number>();
      // When each step of a run was first seen committed, by a 10 ms poll: the ingestion's run.sealed event,
      // the worker's run.scored event, the read model's eval_results row.
      const sealedAt = new Map<string, number>();
      const scoredAt = new Map<string, number>();
      const projectedAt = new Map<string, number>();
      let pollUntil = Infinity;
      const poller = (async () => {
        const poll = new Client({ connectionString: schema.url, application_name: 'evals-bench' });
        await poll.connect();
        try {
          // Until every run's row was seen, or 5 s after the phase ended.
          while (projectedAt.size < runIds.length && now() < pollUntil) {
            const pending = runIds.filter((r) => sealAt.has(r) && !projectedAt.has(r));
            if (pending.length > 0) {
              const rows = (
                await poll.query(
                  `SELECT substr(stream_id, 5) AS run_id, type AS step FROM events WHERE stream_id = ANY($1) AND type IN ('run.sealed', 'run.scored')
                   UNION ALL SELECT run_id, 'projected' FROM eval_results WHERE run_id = ANY($2)`,
                  [pending.map((r) => runStreamId(r)), pending],
                )
              ).rows as Array<{ run_id: string; step: string }>;
              const t = now();
              for (const r of rows) {
                const into = r.step === 'run.sealed' ? sealedAt : r.step === 'run.scored' ? scoredAt : projectedAt;
                if (!into.has(r.run_id)) into.set(r.run_id, t);
              }
            }
            await sleep(10);
          }
        } finally {
          await poll.end();
        }
      })();
      const stream = LAT_MESSAGES === 'batches' ? env.streamRunInBatches.bind(env) : env.streamRun.bind(env);
      /** Starts `ids` one interval apart from `start`; each seal's time goes into `sealed`. */
      const offer = async (ids: readonly string[], start: number, sealed: Map<string, number>): Promise<Array<Promise<void>>> => {
        const tasks: Array<Promise<void>> = [];
        for (let k = 0; k < ids.length; k++) {
          const wait = start + k * intervalMs - now();
          if (wait > 0) await sleep(wait);
          const runId = ids[k];
          tasks.push(stream(runId, suiteLat, LAT_RUN, outputFor, () => sealed.set(runId, now())));
        }
        return tasks;
      };
      const warmSealAt = new Map<string, number>();
      const tWarm = now();
      const warmTasks = await offer(warmIds, tWarm, warmSealAt);
      await profilePhase('latency');
      sampler.beginPhase();
      // The measured runs go on at the same pace: the first one interval after the warm-up's last.
      const l0 = await sampler.snapshot();
      const tLat = warmRuns > 0 ? tWarm + warmRuns * intervalMs : now();
      const tasks = await offer(runIds, tLat, sealAt);
      await Promise.all([...warmTasks, ...tasks]);
      const offeredS = (now() - tLat) / 1000;
      const latDone = await waitForResults(runIds, tLat, 'latency');
      const warmDone = warmRuns > 0 ? await waitForResults(warmIds, tWarm, 'latency warm-up') : null;
      const l1 = await sampler.snapshot();
      await profilePhase(null);
      const latencyRss = sampler.endPhase('latency');
      pollUntil = now() + 5_000;
      await poller;
      const received = runIds.filter((r) => arrivals.has(r)).map((r) => arrivals.get(r)!.t - sealAt.get(r)!).sort((a, b) => a - b);
      const stored = runIds.filter((r) => arrivals.has(r)).map((r) => arrivals.get(r)!.stored - sealAt.get(r)!).sort((a, b) => a - b);
      const warmReceived = warmIds.filter((r) => arrivals.has(r)).map((r) => arrivals.get(r)!.t - warmSealAt.get(r)!).sort((a, b) => a - b);
      const since = (at: Map<string, number>) => runIds.filter((r) => at.has(r)).map((r) => at.get(r)! - sealAt.get(r)!).sort((a, b) => a - b);
      const projected = since(projectedAt);
      const stats = (xs: number[]) => ({
        n: xs.length,
        p50_ms: round(percentile(xs, 50)),
        p90_ms: round(percentile(xs, 90)),
        p99_ms: round(percentile(xs, 99)),
        max_ms: round(xs[xs.length - 1] ?? NaN),
        mean_ms: round(xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)),
      });
      // Per window of seal times: a backlog that builds up over the phase shows as percentiles that grow window
      // by window, which one percentile over the whole phase hides.
      const windows: Array<{ from_s: number; runs: number; p50_ms: number | null; p99_ms: number | null }> = [];
      for (let from = 0; from < offeredS; from += LAT_WINDOW_S) {
        const inWindow = runIds.filter((r) => {
          const at = (sealAt.get(r)! - tLat) / 1000;
          return arrivals.has(r) && at >= from && at < from + LAT_WINDOW_S;
        });
        const xs = inWindow.map((r) => arrivals.get(r)!.t - sealAt.get(r)!).sort((a, b) => a - b);
        windows.push({ from_s: from, runs: xs.length, p50_ms: round(percentile(xs, 50)), p99_ms: round(percentile(xs, 99)) });
      }
      const cpu = cpuBetween(l0, l1);
      const statsAfter = await settledStats();
      latency = {
        completed: latDone !== null,
        messages: LAT_MESSAGES,
        runs,
        cases_per_run: LAT_RUN,
        offered_cases_per_s: round((runs * LAT_RUN) / offeredS),
        warm_up: warmRuns > 0 ? { seconds: LAT_WARMUP_S, runs: warmRuns, completed: warmDone !== null, seal_to_received: stats(warmReceived) } : null,
        seal_to_received: stats(received),
        seal_to_stored: stats(stored),
        seal_to_projected: stats(projected),
        seal_to_run_sealed_committed: stats(since(sealedAt)),
        seal_to_run_scored_committed: stats(since(scoredAt)),
        seal_to_received_by_window: windows,
        check: checkResults([...warmIds, ...runIds], LAT_RUN, expectedPassed(LAT_RUN)),
        cpu,
        db: dbWork(statsBefore, statsAfter, runs * LAT_RUN),
      };
      const r = latency.seal_to_received as ReturnType<typeof stats>;
      const p = latency.seal_to_projected as ReturnType<typeof stats>;
      log(`  offered ${fmt(latency.offered_cases_per_s as number)} cases/s over ${fmt(offeredS, 1)} s; result check: ${latency.check}`);
      if (warmRuns > 0) {
        const wu = stats(warmReceived);
        log(`  warm-up (${LAT_WARMUP_S} s, ${warmRuns} runs before the measured ones, not in the figures below): seal publish -> EvalResult received p50 ${fmt(wu.p50_ms)} ms, p99 ${fmt(wu.p99_ms)} ms, max ${fmt(wu.max_ms)} ms`);
      }
      log(`  seal publish -> EvalResult received on evals.result.recorded: p50 ${fmt(r.p50_ms)} ms, p90 ${fmt(r.p90_ms)} ms, p99 ${fmt(r.p99_ms)} ms, max ${fmt(r.max_ms)} ms (n=${r.n})`);
      const st = latency.seal_to_stored as ReturnType<typeof stats>;
      log(`    of which seal publish -> EvalResult stored on the outbound stream (its JetStream timestamp; the rest is the bench reading it): p50 ${fmt(st.p50_ms)} ms, p90 ${fmt(st.p90_ms)} ms, p99 ${fmt(st.p99_ms)} ms`);
      log(`  seal publish -> row seen in eval_results (10 ms poll):  p50 ${fmt(p.p50_ms)} ms, p90 ${fmt(p.p90_ms)} ms, p99 ${fmt(p.p99_ms)} ms, max ${fmt(p.max_ms)} ms (n=${p.n})`);
      for (const [label, key] of [
        ['ingestion committed run.sealed', 'seal_to_run_sealed_committed'],
        ['worker committed run.scored', 'seal_to_run_scored_committed'],
      ] as const) {
        const x = latency[key] as ReturnType<typeof stats>;
        log(`    of which seal publish -> ${label} (10 ms poll): p50 ${fmt(x.p50_ms)} ms, p90 ${fmt(x.p90_ms)} ms, p99 ${fmt(x.p99_ms)} ms (n=${x.n})`);
      }
      log(`  seal publish -> EvalResult received, per ${LAT_WINDOW_S} s window of seals: ${windows.map((w) => `[${w.from_s}s n=${w.runs} p50 ${fmt(w.p50_ms)} p99 ${fmt(w.p99_ms)}]`).join(' ')}`);
      log(`  ${cpuLine(cpu)}`);
      log(`  ${dbLine(latency.db as DbWork)}`);
      log(`  ${rssLine(latencyRss)}`);
      await profileReport('latency');
    }

    // --- summary ----------------------------------------------------------------------------------------
    sampler.stop();
    const deadLetters = Number((await db.query(`SELECT count(*)::int AS n FROM dead_letters`)).rows[0].n);
    const rss: Record<string, number> = {};
    for (const [name, pid] of appPids()) rss[name] = Math.max(sampler.peakRssKb.get(name) ?? 0, statusKb(pid, 'VmHWM') ?? 0) / 1024;

    const target = 0.25 * copy.rate;
    const pct = (x: number, base: number) => `${fmt((100 * x) / base, 1)}%`;
    const met = (p: PhaseResult | null) => (p === null ? 'n/a' : p.completed && p.casesPerSecond >= target ? 'MET' : 'NOT MET');
    log('\n== summary');
    const rows: Array<[string, string]> = [
      ['cases (BENCH_CASES)', fmt(CASES)],
      ['raw PostgreSQL COPY, evidence rows/s', fmt(copy.rate)],
      ['raw JetStream publish, msg/s', fmt(raw.rate)],
    ];
    for (const [name, p] of [['streamed', streamed], ['streamed in batches', streamedBatches], ['batched', batched]] as const) {
      if (p === null) {
        rows.push([`${name} end to end, cases/s`, 'not run']);
        continue;
      }
      rows.push([`${name} end to end, cases/s${p.completed ? '' : ' (INCOMPLETE: evidence rate)'}`, fmt(p.casesPerSecond)]);
      rows.push([`  ${name}: publish side alone, cases/s`, fmt(p.cases / p.publishSeconds)]);
      rows.push([`  ${name} / raw COPY`, pct(p.casesPerSecond, copy.rate)]);
      rows.push([`  ${name} / raw JetStream publish`, pct(p.casesPerSecond, raw.rate)]);
      rows.push([`  ${name}: app CPU per case (4 apps + their PostgreSQL backends), us`, fmt(appCpuPerCaseUs(p))]);
    }
    if (batched) {
      const ok = batched.completed && batched.casesPerSecond >= 0.15 * copy.rate && appCpuPerCaseUs(batched) <= 60;
      rows.push(['issue 15: batched >= 15% of raw COPY and <= 60 us app CPU per case', ok ? 'MET' : 'NOT MET']);
    }
    if (streamedBatches) {
      const ok = streamedBatches.completed && (streamedBatches.casesPerSecond >= 15_000 || (batched !== null && streamedBatches.casesPerSecond >= 0.5 * batched.casesPerSecond)) && appCpuPerCaseUs(streamedBatches) <= 70;
      rows.push(['issue 28: streamed in batches >= 15,000 cases/s or >= 50% of batched, and <= 70 us app CPU per case', ok ? 'MET' : 'NOT MET']);
    }
    if (streamed) rows.push(['issue 15: streamed >= 10,000 cases/s', streamed.completed && streamed.casesPerSecond >= 10_000 ? 'MET' : 'NOT MET']);
    rows.push([`target: end to end >= 25% of raw COPY = ${fmt(target)} cases/s`, `streamed ${met(streamed)}, batched ${met(batched)}`]);
    if (latency) {
      const r = latency.seal_to_received as { p50_ms: number; p99_ms: number };
      const p = latency.seal_to_projected as { p50_ms: number; p99_ms: number };
      const wu = latency.warm_up as { seconds: number; seal_to_received: { p50_ms: number; p99_ms: number } } | null;
      rows.push([
        `latency seal -> received (${fmt(latency.offered_cases_per_s as number)} cases/s offered, ${latency.messages}${wu ? `, after a ${wu.seconds} s warm-up` : ''})`,
        `p50 ${fmt(r.p50_ms)} ms, p99 ${fmt(r.p99_ms)} ms`,
      ]);
      if (wu) rows.push([`  the warm-up's own runs (not in the line above)`, `p50 ${fmt(wu.seal_to_received.p50_ms)} ms, p99 ${fmt(wu.seal_to_received.p99_ms)} ms`]);
      rows.push([`issue 28: p99 seal -> received <= 250 ms at >= 5 000 cases/s offered`, (latency.offered_cases_per_s as number) >= 4_900 && r.p99_ms <= 250 ? 'MET' : 'NOT MET']);
      rows.push(['latency seal -> in eval_results (10 ms poll)', `p50 ${fmt(p.p50_ms)} ms, p99 ${fmt(p.p99_ms)} ms`]);
    } else {
      rows.push(['latency', 'not run']);
    }
    for (const app of APPS) {
      const by = Object.entries(sampler.phasePeaks).map(([phase, peaks]) => `${phase} ${fmt(peaks[app])}`).join(', ');
      rows.push([`peak RSS ${app}, MiB`, `${fmt(rss[app], 0)} (by phase: ${by})`]);
    }
    rows.push(['suite push of BENCH_CASES cases, s', fmt(suitePushS, 2)]);
    rows.push(['dead letters (expected 0)', fmt(deadLetters)]);
    const warnings = appWarnings(cluster.logDir);
    rows.push(['app warnings/errors logged', warnings.length === 0 ? 'none' : warnings.map(([k, n]) => `${n} x ${k}`).join('; ')]);
    const w = Math.max(...rows.map((r) => r[0].length));
    for (const [k, v] of rows) log(`${k.padEnd(w)}  ${v}`);

    const json = {
      bench: 'pipeline',
      cases: CASES,
      cores: os.cpus().length,
      app_env: APP_ENV,
      apps_runtime: APP_RUNTIME,
      pg_transport: env.pg.kind,
      apps_node_options: Object.fromEntries(Object.entries(APP_ENVS).map(([a, e]) => [a, e.NODE_OPTIONS])),
      raw: { copy_rows: RAW_ROWS, copy_method: copy.method, copy_rows_per_s: round(copy.rate), jetstream_msgs: RAW_MSGS, jetstream_msg_bytes: raw.bytes, jetstream_msgs_per_s: round(raw.rate) },
      streamed: streamed ? { ...summarize(streamed, copy.rate, raw.rate), publishers: PUBLISHERS, db: streamed.db } : null,
      streamed_batches: streamedBatches ? { ...summarize(streamedBatches, copy.rate, raw.rate), batch_inflight: BATCH_INFLIGHT, db: streamedBatches.db } : null,
      idle: idleCpu ? { seconds: IDLE_S, cpu: cpuJson(idleCpu) } : null,
      batched: batched ? { ...summarize(batched, copy.rate, raw.rate), runs: batchRuns, cases_per_run: BATCH_RUN, db: batched.db } : null,
      target_25pct_of_copy: { cases_per_s: round(target), streamed: met(streamed), batched: met(batched) },
      latency: latency ? { ...latency, cpu: cpuJson(latency.cpu as CpuUsage) } : null,
      peak_rss_mib: Object.fromEntries(Object.entries(rss).map(([k, v]) => [k, round(v)])),
      peak_rss_mib_by_phase: sampler.phasePeaks,
      suite_push_s: round(suitePushS, 2),
      dead_letters: deadLetters,
      app_warnings: Object.fromEntries(warnings),
    };
    log(`BENCH_PIPELINE_JSON ${JSON.stringify(json)}`);
  } catch (error) {
    failed = true;
    log(`benchmark failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    if (cluster) log(`app logs kept in ${cluster.logDir}`);
  } finally {
    sampler.stop();
    const logDir = cluster?.logDir;
    await env.cleanup();
    if (logDir && !failed && !process.env.BENCH_KEEP_LOGS) fs.rmSync(logDir, { recursive: true, force: true });
    log('cleaned up: processes stopped, streams deleted, schema dropped');
  }
  process.exit(failed ? 1 : 0);
}

/** Warn and error lines of the apps' logs, counted by app, level and message (ids and counts only - D1). */
function appWarnings(logDir: string): Array<[string, number]> {
  const counts = new Map<string, number>();
  for (const file of fs.readdirSync(logDir)) {
    for (const line of fs.readFileSync(path.join(logDir, file), 'utf8').split('\n')) {
      if (!line.includes('"level":"warn"') && !line.includes('"level":"error"')) continue;
      try {
        const e = JSON.parse(line) as { app?: string; level?: string; msg?: string };
        const key = `${e.app ?? file} ${e.level}: ${String(e.msg).slice(0, 80)}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      } catch {
        counts.set(`${file}: unparsed line`, (counts.get(`${file}: unparsed line`) ?? 0) + 1);
      }
    }
  }
  return [...counts].sort((a, b) => b[1] - a[1]).slice(0, 8);
}

async function phaseResult(
  done: number | null,
  start: number,
  cases: number,
  publishSeconds: number,
  cpu: CpuUsage,
  runIds: string[],
  countEvidence: (runIds: string[]) => Promise<number>,
  check: () => string,
): Promise<PhaseResult> {
  if (done !== null) {
    const seconds = (done - start) / 1000;
    return { completed: true, cases, seconds, casesPerSecond: cases / seconds, publishSeconds, publishRate: cases / publishSeconds, cpu, check: check() };
  }
  // Timed out: report the rate at which evidence was written so far.
  const scored = await countEvidence(runIds);
  const seconds = (now() - start) / 1000;
  return { completed: false, cases: scored, seconds, casesPerSecond: scored / seconds, publishSeconds, publishRate: cases / publishSeconds, cpu, check: 'n/a (incomplete)' };
}

function cpuJson(u: CpuUsage): Record<string, unknown> {
  return {
    wall_s: round(u.wallS, 1),
    percent_of_one_core: Object.fromEntries(Object.entries(u.percent).map(([k, v]) => [k, round(v)])),
    other_processes_percent: round(u.othersTotal),
    busiest_other_processes_percent: Object.fromEntries(Object.entries(u.others).map(([k, v]) => [k, round(v)])),
    machine_busy_percent: round(u.machineBusyPercent),
    machine_steal_percent: round(u.machineStealPercent, 1),
  };
}

/**
 * CPU of the four apps and of their PostgreSQL backends per case, in microseconds (issue 15's "total app CPU
 * per case"). CPU seconds move less with other users of the machine than wall time does.
 */
function appCpuPerCaseUs(p: PhaseResult): number {
  const percent = Object.entries(p.cpu.percent)
    .filter(([label]) => APPS.some((app) => label === app || label === `pg:${app}`))
    .reduce((sum, [, v]) => sum + v, 0);
  return ((percent / 100) * p.cpu.wallS * 1e6) / p.cases;
}

function summarize(p: PhaseResult, copyRate: number, rawRate: number): Record<string, unknown> {
  return {
    app_cpu_us_per_case: round(appCpuPerCaseUs(p)),
    completed: p.completed,
    cases: p.cases,
    seconds: round(p.seconds, 2),
    cases_per_s: round(p.casesPerSecond),
    publish_s: round(p.publishSeconds, 2),
    ratio_to_copy: round(p.casesPerSecond / copyRate, 4),
    ratio_to_jetstream: round(p.casesPerSecond / rawRate, 4),
    check: p.check,
    cpu: cpuJson(p.cpu),
  };
}

// --- raw baselines ---------------------------------------------------------------------------------------

interface CopyStream extends NodeJS.WritableStream {
  on(event: 'finish' | 'error', listener: (...args: any[]) => void): this;
}

/** pg-copy-streams when installed (devDependency), else `psql` reading COPY data from its standard input. */
function loadCopyFrom(): ((sql: string) => CopyStream) | null {
  try {
    return (require('pg-copy-streams') as { from(sql: string): CopyStream }).from;
  } catch {
    return null;
  }
}

async function copyBaseline(db: Client, schema: TestSchema, rows: number): Promise<{ seconds: number; rate: number; method: string }> {
  // The columns, types and primary key of `evidence` (libs/persistence migrations); no append-only trigger,
  // which fires on UPDATE/DELETE only anyway.
  await db.query(`
    CREATE TABLE bench_copy_evidence (
      run_id text NOT NULL, case_id text NOT NULL, scorer text NOT NULL, scorer_version text NOT NULL,
      score double precision NOT NULL CHECK (score BETWEEN 0 AND 1), passed boolean NOT NULL, label varchar(120) NOT NULL,
      detail_hash text, output_chars integer, scored_at timestamptz NOT NULL,
      PRIMARY KEY (run_id, case_id))`);
  const scoredAt = new Date().toISOString();
  const chunks: string[] = [];
  for (let start = 0; start < rows; start += 1000) {
    let s = '';
    for (let i = start; i < Math.min(rows, start + 1000); i++) {
      const passed = !failing(i);
      const hash = randomUUID().replace(/-/g, '') + randomUUID().replace(/-/g, '');
      s += `copy-run\tc${i}\t${kindOf(i)}\t1.0.0\t${passed ? 1 : 0}\t${passed ? 't' : 'f'}\t${passed ? 'match' : 'mismatch'}\t${hash}\t200\t${scoredAt}\n`;
    }
    chunks.push(s);
  }
  const sql = `COPY bench_copy_evidence (run_id, case_id, scorer, scorer_version, score, passed, label, detail_hash, output_chars, scored_at) FROM STDIN`;
  const copyFrom = loadCopyFrom();
  let seconds: number;
  let method: string;
  if (copyFrom) {
    method = 'pg-copy-streams';
    const t = now();
    await new Promise<void>((resolve, reject) => {
      const stream = db.query(copyFrom(sql) as any) as unknown as CopyStream;
      stream.on('error', reject);
      stream.on('finish', () => resolve());
      let i = 0;
      const write = () => {
        while (i < chunks.length) {
          if (!stream.write(chunks[i++])) {
            stream.once('drain' as any, write);
            return;
          }
        }
        stream.end();
      };
      write();
    });
    seconds = (now() - t) / 1000;
  } else {
    method = 'psql COPY FROM STDIN';
    const t = now();
    await new Promise<void>((resolve, reject) => {
      const child = spawn('psql', [testServers.postgres.url, '-v', 'ON_ERROR_STOP=1', '-qc', sql], {
        stdio: ['pipe', 'ignore', 'inherit'],
        env: { ...process.env, PGOPTIONS: `-c search_path=${schema.schema}` },
      });
      child.on('error', reject);
      child.stdin.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`psql exited with ${code}`))));
      let i = 0;
      const write = () => {
        while (i < chunks.length) {
          if (!child.stdin.write(chunks[i++])) {
            child.stdin.once('drain', write);
            return;
          }
        }
        child.stdin.end();
      };
      write();
    });
    seconds = (now() - t) / 1000;
  }
  const n = Number((await db.query(`SELECT count(*)::int AS n FROM bench_copy_evidence`)).rows[0].n);
  if (n !== rows) throw new Error(`COPY wrote ${n} rows, not ${rows}`);
  await db.query(`DROP TABLE bench_copy_evidence`);
  return { seconds, rate: rows / seconds, method };
}

async function jetStreamBaseline(js: JetStreamClient, jsm: JetStreamManager, stream: string, subj: string, count: number): Promise<{ seconds: number; rate: number; bytes: number }> {
  await jsm.streams.add({ name: stream, subjects: [subj], storage: StorageType.File, retention: RetentionPolicy.Limits, num_replicas: 1 });
  const body = filler(7, 200);
  const t = now();
  await publishWindowed(js, count, INFLIGHT, () => ({ subject: subj, id: randomUUID(), text: body }));
  const seconds = (now() - t) / 1000;
  return { seconds, rate: count / seconds, bytes: Buffer.byteLength(body) };
}

void main();
