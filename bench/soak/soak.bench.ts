/**
 * Soak (issue 18 part 5; docs/reliability.md "Soak"): the four apps as separate processes on the real
 * PostgreSQL and NATS JetStream, in a fresh schema with prefixed streams and subjects (never anybody else's
 * data), offered streamed runs at a fixed rate for a fixed time. Run: `npm run bench:soak`.
 *
 *   SOAK_MINUTES  (default 10)   how long runs are offered
 *   SOAK_RATE     (default 500)  cases/s offered, as runs of SOAK_RUN cases started every SOAK_RUN/SOAK_RATE s
 *   SOAK_RUN      (default 100)  cases per run; each run is sealed once its outputs are acknowledged
 *   SOAK_WINDOW_S (default 10)   sampling period
 *   SOAK_OUT      (default the temp dir) where the series (JSON) and the plot (SVG, PNG if chromium renders it) go
 *
 * Every window: the RSS (VmRSS) of every app, the consumer lag (num_pending, and num_ack_pending, of the
 * scoring worker's durable consumer; the ingestion's too), and the p50/p99 seal-to-result latency of the runs
 * whose EvalResult arrived in that window (from just before the seal's `js.publish` to the EvalResult received
 * on `evals.result.recorded`). At the end: the series, the least-squares RSS slope per process in MiB/min
 * (over the windows after the first minute, the warm-up), and a check that every run's EvalResult arrived and
 * is right. Prints numbers only and asserts nothing (docs/testing.md); cleans up processes, streams, schema.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AppName } from '../../test/support/app-processes';
import { APPS, BenchEnv, log, now, numEnv, percentile, sleep } from '../pipeline/bench-env';

const MINUTES = numEnv('SOAK_MINUTES', 10);
const RATE = numEnv('SOAK_RATE', 500);
const RUN = Math.round(numEnv('SOAK_RUN', 100, 1));
const WINDOW_S = numEnv('SOAK_WINDOW_S', 10, 1);
const OUT = path.resolve(process.env.SOAK_OUT ?? os.tmpdir());
/** Windows before this are the warm-up: left out of the RSS slope. */
const WARMUP_S = Math.min(60, (MINUTES * 60) / 4);

const f = (x: number | null | undefined, d = 0) => (x === null || x === undefined || !Number.isFinite(x) ? 'n/a' : x.toFixed(d));

function rssMiB(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** Least-squares slope and its standard error of y over x. */
export function slope(points: ReadonlyArray<[number, number]>): { slope: number; se: number } {
  const n = points.length;
  if (n < 3) return { slope: NaN, se: NaN };
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const b = sxy / sxx;
  const a = my - b * mx;
  const sse = points.reduce((s, [x, y]) => s + (y - a - b * x) ** 2, 0);
  return { slope: b, se: Math.sqrt(sse / (n - 2) / sxx) };
}

interface Sample {
  /** Seconds since the first run was offered. */
  t: number;
  rss: Record<string, number | null>;
  workPending: number | null;
  workAckPending: number | null;
  inboundPending: number | null;
  /** Runs whose EvalResult arrived in this window, and their seal-to-result latency. */
  results: number;
  p50: number;
  p99: number;
  offeredRuns: number;
}

async function main(): Promise<void> {
  const env = new BenchEnv('soak');
  const { suffix, streamPrefix } = env;

  log(`soak: ${RATE} cases/s offered for ${MINUTES} min as runs of ${RUN} cases, sampled every ${WINDOW_S} s; node ${process.version}, ${os.cpus().length} cores`);
  const { db, jsm } = await env.connect();

  try {
    const cluster = await env.startApps();
    const pid = (app: AppName) => cluster.apps.get(app)?.child.pid;
    log(`apps: ${APPS.map((a) => `${a}=${pid(a)}`).join(' ')}; logs in ${cluster.logDir}`);

    const suite = {
      key: 'soak',
      default_scorer: { type: 'exact' },
      pass_threshold: 0.5,
      regression_threshold: 0.1,
      cases: Array.from({ length: RUN }, (_, i) => ({ id: `c${i}`, input: `q${i}`, expected: `answer ${i}` })),
    };
    const outputFor = (i: number) => (i % 4 === 3 ? `wrong ${i}` : `answer ${i}`);
    const expectedPassed = Array.from({ length: RUN }, (_, i) => i).filter((i) => i % 4 !== 3).length;
    const res = await fetch(cluster.url('ingestion', '/v1/suites'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(suite) });
    if (res.status !== 201) throw new Error(`POST /v1/suites answered ${res.status}: ${(await res.text()).slice(0, 500)}`);

    const sealAt = new Map<string, number>();
    const latencies: number[] = [];
    const arrived = await env.resultArrivals((runId, { t }) => {
      const s = sealAt.get(runId);
      if (s !== undefined) latencies.push(t - s);
    });

    const consumer = async (stream: string, durable: string) => jsm.consumers.info(`${streamPrefix}${stream}`, durable).catch(() => null);
    const samples: Sample[] = [];
    const runIds: string[] = [];
    const failures: string[] = [];
    const t0 = now();
    const endAt = t0 + MINUTES * 60_000;
    let taken = 0;
    const sampleOnce = async () => {
      const work = await consumer('EVALS_WORK', 'scoring-worker');
      const inbound = await consumer('EVALS_INBOUND', 'ingestion');
      const window = latencies.splice(0).sort((a, b) => a - b);
      const s: Sample = {
        t: Math.round((now() - t0) / 1000),
        rss: Object.fromEntries(APPS.map((a) => [a, rssMiB(pid(a))])),
        workPending: work?.num_pending ?? null,
        workAckPending: work?.num_ack_pending ?? null,
        inboundPending: inbound ? inbound.num_pending + inbound.num_ack_pending : null,
        results: window.length,
        p50: percentile(window, 50),
        p99: percentile(window, 99),
        offeredRuns: runIds.length,
      };
      samples.push(s);
      log(
        `  t=${String(s.t).padStart(4)} s  rss MiB ${APPS.map((a) => `${a} ${f(s.rss[a], 0)}`).join(', ')}  |  work pending ${s.workPending ?? '?'} (+${s.workAckPending ?? '?'} unacked), inbound ${s.inboundPending ?? '?'}  |  ${s.results} results, seal->result p50 ${f(s.p50)} ms p99 ${f(s.p99)} ms`,
      );
    };
    const sampler = (async () => {
      while (now() < endAt + 1) {
        taken++;
        const wait = t0 + taken * WINDOW_S * 1000 - now();
        if (wait > 0) await sleep(wait);
        await sampleOnce();
      }
    })();

    const intervalMs = (1000 * RUN) / RATE;
    const tasks: Array<Promise<void>> = [];
    for (let k = 0; ; k++) {
      const at = t0 + k * intervalMs;
      if (at >= endAt) break;
      const wait = at - now();
      if (wait > 0) await sleep(wait);
      const runId = `soak-${suffix}-${k}`;
      runIds.push(runId);
      const task = env.streamRun(runId, 'soak', RUN, outputFor, () => sealAt.set(runId, now())).catch((e) => {
        failures.push(`${runId}: ${e instanceof Error ? e.message : e}`);
      });
      tasks.push(task);
      // Finished runs are dropped, so the driver's own memory stays flat.
      if (tasks.length > 2000) tasks.splice(0, 1000);
    }
    await Promise.all(tasks);
    await sampler;
    const offeredS = (now() - t0) / 1000;
    log(`offered ${runIds.length} runs = ${runIds.length * RUN} cases over ${f(offeredS, 1)} s = ${f((runIds.length * RUN) / offeredS)} cases/s; ${failures.length} publishes failed${failures.length ? `: ${failures.slice(0, 3).join('; ')}` : ''}`);

    // Drain: the last runs' results (at most 2 min), still sampled.
    const drainEnd = now() + 120_000;
    while (arrived.size < runIds.length && now() < drainEnd) await sleep(200);
    if (latencies.length > 0) await sampleOnce();
    const missing = runIds.filter((r) => !arrived.has(r));
    const wrong = runIds.filter((r) => arrived.has(r) && (arrived.get(r)!.data.metrics?.n !== RUN || arrived.get(r)!.data.metrics?.passed !== expectedPassed));
    const evidence = Number((await db.query('SELECT count(*)::int AS n FROM evidence')).rows[0].n);
    const check = `${arrived.size}/${runIds.length} EvalResults received, ${missing.length} missing, ${wrong.length} with wrong metrics; evidence rows ${evidence} (expected ${runIds.length * RUN})`;
    log(`result check: ${check}`);
    const sealed = runIds.filter((r) => arrived.has(r) && sealAt.has(r)).map((r) => arrived.get(r)!.t - sealAt.get(r)!).sort((a, b) => a - b);
    log(`seal->result over the whole soak: p50 ${f(percentile(sealed, 50))} ms, p99 ${f(percentile(sealed, 99))} ms, max ${f(sealed[sealed.length - 1])} ms`);

    const slopes: Record<string, { slope: number; se: number; first: number | null; last: number | null; max: number }> = {};
    for (const app of APPS) {
      const pts = samples.filter((s) => s.t >= WARMUP_S && s.rss[app] !== null).map((s) => [s.t / 60, s.rss[app]!] as [number, number]);
      const all = samples.map((s) => s.rss[app]).filter((x): x is number => x !== null);
      slopes[app] = { ...slope(pts), first: all[0] ?? null, last: all[all.length - 1] ?? null, max: Math.max(...all) };
    }
    const lag = slope(samples.filter((s) => s.t >= WARMUP_S && s.workPending !== null).map((s) => [s.t / 60, s.workPending!] as [number, number]));
    log(`\nRSS slope per process (least squares over t >= ${WARMUP_S} s, MiB/min, ± standard error):`);
    for (const app of APPS) {
      const s = slopes[app];
      log(`  ${app.padEnd(15)} ${f(s.slope, 2).padStart(7)} ± ${f(s.se, 2)} MiB/min   (RSS first ${f(s.first, 0)}, last ${f(s.last, 0)}, max ${f(s.max, 0)} MiB)`);
    }
    const inLag = slope(samples.filter((s) => s.t >= WARMUP_S && s.inboundPending !== null).map((s) => [s.t / 60, s.inboundPending!] as [number, number]));
    log(`worker consumer num_pending slope: ${f(lag.slope, 1)} ± ${f(lag.se, 1)} messages/min; max pending ${Math.max(...samples.map((s) => s.workPending ?? 0))}`);
    log(`ingestion consumer pending+unacked slope: ${f(inLag.slope, 1)} ± ${f(inLag.se, 1)} messages/min; max ${Math.max(...samples.map((s) => s.inboundPending ?? 0))}`);

    fs.mkdirSync(OUT, { recursive: true });
    const base = path.join(OUT, `soak-${suffix}`);
    const summary = { rate: RATE, minutes: MINUTES, run: RUN, window_s: WINDOW_S, warmup_s: WARMUP_S, offered_s: offeredS, runs: runIds.length, check, slopes_mib_per_min: slopes, lag_slope_per_min: lag, samples };
    fs.writeFileSync(`${base}.json`, JSON.stringify(summary, null, 1));
    fs.writeFileSync(`${base}.svg`, plot(samples, slopes, `soak: ${RATE} cases/s offered for ${MINUTES} min (runs of ${RUN}), ${os.cpus().length} shared cores`));
    log(`\nseries: ${base}.json\nplot: ${base}.svg`);
    const png = renderPng(`${base}.svg`, `${base}.png`);
    if (png) log(`plot (PNG): ${png}`);
    log(JSON.stringify({ rate: RATE, minutes: MINUTES, check, slopes_mib_per_min: Object.fromEntries(APPS.map((a) => [a, Number(slopes[a].slope.toFixed(3))])), lag_slope_per_min: Number(lag.slope.toFixed(2)) }));
  } finally {
    await env.cleanup();
  }
}

/** Three stacked panels sharing the time axis: RSS per app, worker consumer lag, p99 seal-to-result. */
function plot(samples: Sample[], slopes: Record<string, { slope: number }>, title: string): string {
  const W = 900;
  const PH = 200;
  const L = 70;
  const R = 190;
  const T = 40;
  const GAP = 50;
  const colors: Record<string, string> = { ingestion: '#1f77b4', 'scoring-worker': '#d62728', 'read-model': '#2ca02c', regression: '#9467bd' };
  const tMax = Math.max(1, ...samples.map((s) => s.t));
  const x = (t: number) => L + ((W - L - R) * t) / tMax;
  const out: string[] = [];
  const panel = (k: number, label: string, series: Array<{ name: string; color: string; pts: Array<[number, number]> }>, legend: (name: string) => string) => {
    const top = T + k * (PH + GAP);
    const ys = series.flatMap((s) => s.pts.map(([, y]) => y));
    const yMax = Math.max(1, ...ys) * 1.1;
    const y = (v: number) => top + PH - (PH * v) / yMax;
    out.push(`<rect x="${L}" y="${top}" width="${W - L - R}" height="${PH}" fill="none" stroke="#999"/>`);
    out.push(`<text x="${L}" y="${top - 8}" font-size="13" font-weight="bold">${label}</text>`);
    for (let i = 0; i <= 4; i++) {
      const v = (yMax * i) / 4;
      out.push(`<line x1="${L - 4}" x2="${W - R}" y1="${y(v)}" y2="${y(v)}" stroke="#eee"/><text x="${L - 6}" y="${y(v) + 4}" font-size="10" text-anchor="end">${v >= 100 ? v.toFixed(0) : v.toFixed(1)}</text>`);
    }
    for (let m = 0; m <= tMax / 60; m++) out.push(`<text x="${x(m * 60)}" y="${top + PH + 14}" font-size="10" text-anchor="middle">${m}</text>`);
    series.forEach((s, i) => {
      if (s.pts.length > 0) out.push(`<polyline fill="none" stroke="${s.color}" stroke-width="1.8" points="${s.pts.map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(' ')}"/>`);
      out.push(`<rect x="${W - R + 12}" y="${top + 8 + i * 18}" width="12" height="3" fill="${s.color}"/><text x="${W - R + 30}" y="${top + 13 + i * 18}" font-size="11">${legend(s.name)}</text>`);
    });
  };
  panel(0, 'RSS per app (MiB)', Object.keys(colors).map((name) => ({ name, color: colors[name], pts: samples.filter((s) => s.rss[name] !== null).map((s) => [s.t, s.rss[name]!] as [number, number]) })), (n) => `${n} ${f(slopes[n]?.slope, 2)} MiB/min`);
  panel(1, 'consumer lag (messages): scoring-worker pending, unacked; ingestion pending+unacked', [
    { name: 'pending', color: '#ff7f0e', pts: samples.filter((s) => s.workPending !== null).map((s) => [s.t, s.workPending!] as [number, number]) },
    { name: 'unacked', color: '#8c564b', pts: samples.filter((s) => s.workAckPending !== null).map((s) => [s.t, s.workAckPending!] as [number, number]) },
    { name: 'ingestion', color: '#17becf', pts: samples.filter((s) => s.inboundPending !== null).map((s) => [s.t, s.inboundPending!] as [number, number]) },
  ], (n) => n);
  panel(2, `seal -> EvalResult received, per ${WINDOW_S} s window (ms)`, [
    { name: 'p99', color: '#d62728', pts: samples.filter((s) => Number.isFinite(s.p99)).map((s) => [s.t, s.p99] as [number, number]) },
    { name: 'p50', color: '#1f77b4', pts: samples.filter((s) => Number.isFinite(s.p50)).map((s) => [s.t, s.p50] as [number, number]) },
  ], (n) => n);
  const H = T + 3 * (PH + GAP);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${L}" y="20" font-size="14">${title}</text>`,
    ...out,
    `<text x="${(L + W - R) / 2}" y="${H - 12}" font-size="11" text-anchor="middle">minutes</text>`,
    '</svg>',
  ].join('\n');
}

/** The SVG rendered to PNG by a headless chromium, when one is installed; null otherwise. */
function renderPng(svg: string, png: string): string | null {
  const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((c) => fs.existsSync(c));
  if (!chromium) return null;
  try {
    const dims = /width="(\d+)" height="(\d+)"/.exec(fs.readFileSync(svg, 'utf8'));
    execFileSync(chromium, ['--headless', '--no-sandbox', '--disable-gpu', `--screenshot=${png}`, `--window-size=${dims?.[1] ?? 900},${dims?.[2] ?? 790}`, `file://${svg}`], { stdio: 'ignore', timeout: 60_000 });
    return fs.existsSync(png) ? png : null;
  } catch {
    return null;
  }
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
