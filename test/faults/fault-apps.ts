import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Pool } from 'pg';
import { eventually, startCluster, type AppCluster, type AppName } from '../support/app-processes';
import { createTestSchema, type TestSchema } from '../support/isolation';
import { faultSuite, streamedRuns, type StreamedRuns } from './streamed-runs';

export const STREAMS = ['EVALS_INBOUND', 'EVALS_WORK', 'EVALS_EVENTS', 'EVALS_OUTBOUND'];

/** The apps started together with one environment: the partition gives the worker a NATS_URL of its own. */
export interface AppGroup {
  apps: AppName[];
  env?: Record<string, string>;
}

/**
 * What every fault case stands on (faults, cluster, partition): a NATS connection, a schema of its own,
 * streams and subjects prefixed with `label` and `suffix`, the apps in one or more groups, a pool, the
 * streamed runs, and the suite posted. `start` in beforeAll, `stop` in afterAll: `stop` takes down only what
 * was started, so a setup that failed halfway is cleaned up too. The NATS servers themselves are the case's.
 */
export class FaultApps {
  readonly streamPrefix: string;
  readonly subjectPrefix: string;
  nc!: NatsConnection;
  jsm!: JetStreamManager;
  schema!: TestSchema;
  db!: Pool;
  runs!: StreamedRuns;
  readonly groups: AppCluster[] = [];

  constructor(
    private readonly options: { label: string; suffix: string; suiteKey: string; cases: number; publishDeadlineMs?: number },
  ) {
    this.streamPrefix = `${options.label.toUpperCase()}_${options.suffix}_`;
    this.subjectPrefix = `${options.label}_${options.suffix}`;
  }

  subject(s: string): string {
    return `${this.subjectPrefix}.${s}`;
  }

  async start(nats: string | string[], groups: AppGroup[]): Promise<void> {
    const { label, suiteKey, cases, publishDeadlineMs } = this.options;
    this.nc = await connect({ servers: nats, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
    // A cluster's JetStream answers once its nodes have elected a meta leader; one server answers at once.
    this.jsm = await eventually(async () => (await jetstreamManager(this.nc, { timeout: 5_000 }).catch(() => undefined)), 60_000, 'JetStream meta leader');
    this.schema = await createTestSchema(label);
    for (const group of groups) {
      this.groups.push(await startCluster({ schema: this.schema.schema, streamPrefix: this.streamPrefix, subjectPrefix: this.subjectPrefix, apps: group.apps, env: group.env }));
    }
    this.db = new Pool({ connectionString: this.schema.url, max: 2 });
    // A PostgreSQL restart ends idle connections: the pool replaces them.
    this.db.on('error', () => undefined);
    this.runs = streamedRuns({ js: jetstream(this.nc, { timeout: 10_000 }), db: this.db, subjectPrefix: this.subjectPrefix, suiteKey, cases, publishDeadlineMs });
    const ingestion = this.groups.find((g) => g.apps.has('ingestion'));
    if (!ingestion) throw new Error('no group starts ingestion');
    const res = await fetch(ingestion.url('ingestion', '/v1/suites'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(faultSuite(suiteKey, cases)) });
    expect(res.status).toBe(201);
  }

  async stop(): Promise<void> {
    for (const group of [...this.groups].reverse()) await group.stopAll();
    await this.db?.end().catch(() => undefined);
    if (this.jsm) for (const s of STREAMS) await this.jsm.streams.delete(`${this.streamPrefix}${s}`).catch(() => undefined);
    await this.nc?.close().catch(() => undefined);
    await this.schema?.drop().catch(() => undefined);
  }

  /** At the end of the case: `expected` EvalResults, each once in the outbox and once on EVALS_OUTBOUND. */
  checkAllResults(expected: number) {
    return this.runs.checkAllResults(this.jsm, this.streamPrefix, expected);
  }
}
