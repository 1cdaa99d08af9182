/**
 * What the benchmarks that start the service's apps on the real servers share (pipeline.bench.ts,
 * bench/soak/soak.bench.ts): their settings read from the environment, the message envelope, the
 * nearest-rank percentile, and `BenchEnv` - a fresh schema with prefixed streams and subjects (never anybody
 * else's data), the four apps started one by one, the EvalResults received on the outbound stream, and the
 * clean-up steps, run in reverse at the end or on Ctrl-C.
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { DeliverPolicy, jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Client } from 'pg';
import { EvalsPublisher, jetStreamPort } from '@evals/publisher';
import { startCluster, type AppCluster, type AppName } from '../../test/support/app-processes';
import { createTestSchema, uniqueSuffix, type TestSchema } from '../../test/support/isolation';
import { testServers } from '../../test/support/servers';

export const APPS: AppName[] = ['ingestion', 'scoring-worker', 'read-model', 'regression'];
export const STREAMS = ['EVALS_INBOUND', 'EVALS_WORK', 'EVALS_EVENTS', 'EVALS_OUTBOUND'];

/** Where Debian's PostgreSQL listens on its Unix socket (the directory; the socket is `.s.PGSQL.<port>` in it). */
const PG_SOCKET_DIR = '/var/run/postgresql';

export interface PgTransport {
  readonly kind: 'socket' | 'tcp';
  /** The server URL the bench and the apps connect with (the apps get it with their schema's search_path). */
  readonly url: string;
  /** What the header prints. */
  readonly describe: string;
}

/**
 * How the bench and the apps it starts reach PostgreSQL (BENCH_PG_TRANSPORT=tcp|socket). TCP to the test
 * server by default, as every figure in docs/benchmarks.md was taken. `socket` goes through the server's Unix
 * socket, as a deployment on one host may (docs/deploy.md): a loopback TCP round trip runs the kernel's TCP
 * path at both ends. On this VM the two could not be told apart through the noise (issue 28, 2026-12-07 night).
 */
export function pgTransport(): PgTransport {
  const wanted = process.env.BENCH_PG_TRANSPORT ?? 'tcp';
  if (wanted !== 'socket' && wanted !== 'tcp') throw new Error(`BENCH_PG_TRANSPORT must be socket or tcp, got ${wanted}`);
  const tcp: PgTransport = { kind: 'tcp', url: testServers.postgres.url, describe: `TCP (${new URL(testServers.postgres.url).host}; BENCH_PG_TRANSPORT=socket for the Unix socket)` };
  if (wanted === 'tcp') return tcp;
  const port = new URL(testServers.postgres.url).port || '5432';
  const socket = `${PG_SOCKET_DIR}/.s.PGSQL.${port}`;
  if (!fs.existsSync(socket)) throw new Error(`BENCH_PG_TRANSPORT=socket: no PostgreSQL socket at ${socket}`);
  // pg reads `host` from the query string and takes a path there as a socket directory.
  const url = new URL(testServers.postgres.url);
  url.host = 'localhost';
  url.searchParams.set('host', PG_SOCKET_DIR);
  return { kind: 'socket', url: url.toString(), describe: `Unix socket ${socket} (BENCH_PG_TRANSPORT=socket)` };
}

export const log = (line = '') => process.stdout.write(`${line}\n`);
export const now = () => performance.now();
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function fromEnv(name: string, fallback: number, ok: (n: number) => boolean, what: string): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!ok(n)) throw new Error(`${name} must be ${what}, got ${raw}`);
  return n;
}

/** An integer setting of at least `min`; unset or empty: `fallback`. */
export function intEnv(name: string, fallback: number, min = 1): number {
  return fromEnv(name, fallback, (n) => Number.isSafeInteger(n) && n >= min, `an integer >= ${min}`);
}

/** A numeric setting of at least `min`; unset or empty: `fallback`. */
export function numEnv(name: string, fallback: number, min = 0.01): number {
  return fromEnv(name, fallback, (n) => Number.isFinite(n) && n >= min, `a number >= ${min}`);
}

export function envelope(type: string, data: unknown): { id: string; text: string } {
  const id = randomUUID();
  const text = JSON.stringify({
    schema: `${type}.v1`,
    type,
    version: 1,
    data,
    metadata: { message_id: id, correlation_id: id, causation_id: id, occurred_at: new Date().toISOString() },
  });
  return { id, text };
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length); // nearest rank
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** An EvalResult received, with the time (performance.now()) it was received here. */
export interface Arrival {
  /** When this process read it (`now()`). */
  readonly t: number;
  /**
   * When the server stored it on the outbound stream, on the same clock: `t` less the wall-clock age of the
   * message's JetStream timestamp. What `t` adds to it is this process's own delay in reading it - on a
   * saturated machine, the load generator waiting for a core.
   */
  readonly stored: number;
  readonly data: Record<string, any>;
}

export interface BenchServers {
  readonly schema: TestSchema;
  readonly db: Client;
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
}

/**
 * One benchmark's own corner of the servers, named after `label` (schema `label_...`, streams
 * `LABEL_<suffix>_...`, subjects `label_<suffix>.`...). Every step that makes something pushes its undoing
 * onto `cleanups`; `cleanup()` runs them last first, and Ctrl-C runs them before exiting.
 */
export class BenchEnv {
  readonly suffix = uniqueSuffix();
  readonly streamPrefix: string;
  readonly subjectPrefix: string;
  readonly cleanups: Array<() => Promise<unknown>> = [];
  private servers: BenchServers | undefined;
  readonly pg = pgTransport();

  constructor(private readonly label: string) {
    this.streamPrefix = `${label.toUpperCase()}_${this.suffix}_`;
    this.subjectPrefix = `${label}_${this.suffix}`;
    process.once('SIGINT', () => {
      log('interrupted: cleaning up');
      void this.cleanup().then(() => process.exit(130));
    });
  }

  subject(s: string): string {
    return `${this.subjectPrefix}.${s}`;
  }

  async cleanup(): Promise<void> {
    while (this.cleanups.length > 0) await this.cleanups.pop()!().catch((e) => log(`cleanup step failed: ${e instanceof Error ? e.message : e}`));
  }

  /** A fresh schema and a client on it, a NATS connection; the prefixed streams (and `extraStreams`, full names) deleted at the end. */
  async connect(extraStreams: string[] = []): Promise<BenchServers> {
    const { cleanups, streamPrefix } = this;
    const schema = await createTestSchema(this.label, this.pg.url);
    cleanups.push(() => schema.drop());
    const db = new Client({ connectionString: schema.url, application_name: `evals-${this.label}` });
    await db.connect();
    cleanups.push(() => db.end());
    const dead = await vacuumCatalogs(db);
    if (dead > 0) log(`catalogs: ${dead.toLocaleString('en-US')} dead rows of dropped schemas vacuumed before measuring`);
    const nc = await connect({ servers: testServers.nats.url, name: `evals-${this.label}`, maxReconnectAttempts: -1, reconnectTimeWait: 500 });
    cleanups.push(() => nc.close());
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    cleanups.push(async () => {
      // Retried: other users of the server may be restarting it just now.
      for (const s of [...STREAMS.map((x) => `${streamPrefix}${x}`), ...extraStreams]) {
        for (let attempt = 1; attempt <= 5; attempt++) {
          const error = await jsm.streams.delete(s).then(
            () => null,
            (e: unknown) => e,
          );
          if (error === null || /not found|10059/i.test(String((error as Error)?.message ?? error))) break;
          if (attempt === 5) log(`could not delete stream ${s}: ${error instanceof Error ? error.message : String(error)}`);
          else await sleep(2_000);
        }
      }
    });
    log(`schema ${schema.schema}, stream prefix ${streamPrefix}, subject prefix ${this.subjectPrefix}`);
    this.servers = { schema, db, nc, js, jsm };
    return this.servers;
  }

  /**
   * The four apps, started one by one on an empty cluster so an app that fails to boot never leaves the
   * others running; `options` as startCluster's.
   */
  async startApps(options: Pick<Parameters<typeof startCluster>[0], 'env' | 'runtime' | 'appEnv'> = {}): Promise<AppCluster> {
    if (!this.servers) throw new Error('connect() first');
    const cluster = await startCluster({ schema: this.servers.schema.schema, streamPrefix: this.streamPrefix, subjectPrefix: this.subjectPrefix, apps: [], ...options });
    this.cleanups.push(() => cluster.stopAll());
    for (const app of APPS) {
      // Other users of the same servers may restart them: an app that could not connect gets two more tries.
      for (let attempt = 1; ; attempt++) {
        try {
          await cluster.start(app);
          break;
        } catch (error) {
          if (attempt >= 3) throw error;
          log(`  ${app} failed to boot (attempt ${attempt}): ${(error instanceof Error ? error.message : String(error)).split('\n').slice(-3).join(' ').slice(0, 300)}; retrying`);
          await sleep(3_000);
        }
      }
    }
    return cluster;
  }

  /**
   * One run streamed as a client sends it: run.requested, its `cases` outputs all in flight, and once they are
   * acknowledged run.sealed; `beforeSeal` is called right before the seal is handed to the client (where a
   * seal-to-result latency starts).
   */
  async streamRun(runId: string, suiteKey: string, cases: number, outputFor: (i: number) => string, beforeSeal: () => void): Promise<void> {
    if (!this.servers) throw new Error('connect() first');
    const { js } = this.servers;
    const send = (type: string, m: { id: string; text: string }) => js.publish(this.subject(type), m.text, { msgID: m.id, timeout: 30_000 });
    await send('evals.run.requested', envelope('evals.run.requested', { run_id: runId, suite_key: suiteKey, subject_kind: 'agent', subject_id: this.label, source: 'sandbox' }));
    await Promise.all(Array.from({ length: cases }, (_, i) => send('evals.output.submitted', envelope('evals.output.submitted', { run_id: runId, case_id: `c${i}`, output: outputFor(i) }))));
    const seal = envelope('evals.run.sealed', { run_id: runId });
    beforeSeal();
    await send('evals.run.sealed', seal);
  }

  /**
   * The same run as `streamRun`, published as a sandbox team would (issue 28): with `@evals/publisher`, its
   * outputs in `evals.outputs.submitted` batches; `beforeSeal` runs once every batch is stored, right before
   * the seal is handed to the client.
   */
  async streamRunInBatches(runId: string, suiteKey: string, cases: number, outputFor: (i: number) => string, beforeSeal: () => void): Promise<void> {
    if (!this.servers) throw new Error('connect() first');
    const publisher = new EvalsPublisher(jetStreamPort(this.servers.js, this.subjectPrefix), { sessionId: this.suffix });
    const run = await publisher.open({ run_id: runId, suite_key: suiteKey, subject_kind: 'agent', subject_id: this.label, source: 'sandbox' });
    for (let i = 0; i < cases; i++) await run.output(`c${i}`, outputFor(i));
    await run.flush();
    beforeSeal();
    await run.seal();
  }

  /** Every EvalResult on the outbound stream, by run id (the first of each), as it is received; `onArrival` told of each. */
  async resultArrivals(onArrival?: (runId: string, arrival: Arrival) => void): Promise<Map<string, Arrival>> {
    if (!this.servers) throw new Error('connect() first');
    const arrivals = new Map<string, Arrival>();
    const outbound = await this.servers.js.consumers.get(`${this.streamPrefix}EVALS_OUTBOUND`, { filter_subjects: this.subject('evals.result.recorded'), deliver_policy: DeliverPolicy.All });
    const results = await outbound.consume();
    this.cleanups.push(async () => results.stop());
    void (async () => {
      for await (const m of results) {
        const t = now();
        const age = Date.now() - m.info.timestampNanos / 1e6;
        const data = m.json<{ data: Record<string, any> }>()?.data;
        const runId = data?.run_id;
        if (!runId || arrivals.has(runId)) continue;
        const arrival = { t, stored: t - Math.max(0, age), data };
        arrivals.set(runId, arrival);
        onArrival?.(runId, arrival);
      }
    })().catch((e) => log(`outbound listener stopped: ${e instanceof Error ? e.message : e}`));
    return arrivals;
  }
}

/**
 * The system catalogs that dropped schemas leave dead rows in. Why they are vacuumed before a measurement:
 * every integration test and every bench run creates and drops schemas of about forty tables, and on a server
 * with autovacuum off - this machine's CI configuration - pg_attribute, pg_class and pg_depend keep every
 * dropped table's rows (about 1 500 in pg_attribute a bench run), which every later plan's catalog lookups
 * walk. After 15 bench runs pg_attribute held 21 841 dead rows; the latency phase's last four runs before the
 * vacuum had p99 563-1 589 ms, the seven after it 427-583 ms and one 2 002 ms (issue 28, docs/benchmarks.md):
 * a machine-wide drift that a comparison of two builds must not carry. A role that may not vacuum a catalog
 * gets a warning, not an error.
 */
const DROPPED_SCHEMA_CATALOGS = ['pg_attribute', 'pg_class', 'pg_depend', 'pg_type', 'pg_constraint', 'pg_index', 'pg_shdepend', 'pg_namespace'];

async function vacuumCatalogs(db: Client): Promise<number> {
  const { rows } = await db.query<{ dead: string }>(
    `SELECT coalesce(sum(n_dead_tup), 0)::bigint AS dead FROM pg_stat_sys_tables WHERE schemaname = 'pg_catalog' AND relname = ANY($1::text[])`,
    [DROPPED_SCHEMA_CATALOGS],
  );
  const dead = Number(rows[0]?.dead ?? 0);
  // Below this the catalogs are as good as clean; the vacuum itself takes a second or two when they are not.
  if (dead < 1_000) return 0;
  await db.query(`VACUUM ${DROPPED_SCHEMA_CATALOGS.map((t) => `pg_catalog.${t}`).join(', ')}`);
  return dead;
}
