import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { createServer } from 'node:net';
import * as path from 'node:path';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { decodeMessage, SUBJECTS } from '@evals/contracts';
import { streamOf, subjectOf, type BusNames } from '@evals/bus';
import { createDataSource, EventStore, migrate } from '@evals/persistence';
import type { DataSource } from 'typeorm';
import { createTestSchema, testBusNames, type TestSchema } from '../../../test/support/isolation';
import { testServers } from '../../../test/support/servers';
import { result, RunScript } from './run-events.testing';

const ROOT = path.resolve(__dirname, '../../..');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

function get(port: number, urlPath: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: urlPath, method: 'GET' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The read-model process end to end: started with `node -r @swc-node/register apps/read-model/src/main.ts`
 * on its own schema and stream names, fed only by events appended to the log (its own outbox relay puts
 * them on EVALS_EVENTS), and read over HTTP.
 */
describe('integration: read-model process over HTTP (R3, R4, R6, GT6)', () => {
  jest.setTimeout(120_000);
  let schema: TestSchema;
  let ds: DataSource;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let names: BusNames;
  let child: ChildProcess;
  let port: number;
  let output = '';

  beforeAll(async () => {
    schema = await createTestSchema('rmhttp');
    ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize: 2 });
    await ds.initialize();
    await migrate(ds);
    nc = await connect({ servers: testServers.nats.url });
    jsm = await jetstreamManager(nc);
    const t = testBusNames('rmh');
    names = { streamPrefix: `RMH_${t.suffix}_`, subjectPrefix: `rmh_${t.suffix}` };
    port = await freePort();
    child = spawn(process.execPath, ['-r', '@swc-node/register', 'apps/read-model/src/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: testServers.postgres.url,
        DATABASE_SCHEMA: schema.schema,
        NATS_URL: testServers.nats.url,
        EVALS_STREAM_PREFIX: names.streamPrefix,
        EVALS_SUBJECT_PREFIX: names.subjectPrefix,
        PORT: String(port),
        LOG_LEVEL: 'warn',
        // Access control is tested in test/e2e/access.e2e-spec.ts; here the reads go without a key.
        EVALS_AUTH: 'disabled',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    try {
      await waitFor(async () => ((await get(port, '/health')).status === 200 ? true : undefined), 60_000);
    } catch (error) {
      throw new Error(`read-model did not become healthy:\n${output}`);
    }
  });

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    for (const s of ['EVALS_INBOUND', 'EVALS_WORK', 'EVALS_EVENTS', 'EVALS_OUTBOUND'] as const) {
      await jsm?.streams.delete(streamOf(names, s)).catch(() => undefined);
    }
    await nc?.close();
    await ds?.destroy();
    await schema?.drop();
  });

  it('projects a run from the log, serves it with its summary and EvalResult, and announces the EvalResult once (R3, R4, GT6)', async () => {
    const s = new RunScript('http-run-1', { variant: 'prompt-v7' });
    await s.appendRun(ds, s.openedEvent());
    const first = await s.appendCases(ds, s.casesEvent([result('c2', 1), result('c1', 0.5)]));
    await s.appendCases(ds, s.casesEvent([result('c3', 0, false)]));
    await s.appendRun(ds, s.sealedEvent());
    // The seal's missing_output row crosses as cases.scored v3, like every result (issue 27).
    await s.appendCases(ds, s.resultsEvent([result('c4', 0, false, 'missing_output')]));
    const scored = await s.appendRun(ds, s.scoredEvent(4, 2, 1.5, ['c4']));

    const view = await waitFor(async () => {
      const r = await get(port, '/v1/runs/http-run-1');
      const body = r.status === 200 ? JSON.parse(r.body) : undefined;
      return body?.eval_result ? body : undefined;
    }, 30_000);
    expect(view.run).toMatchObject({ run_id: 'http-run-1', status: 'completed', variant: 'prompt-v7', scored: 4, passed: 2, missing_outputs: 1 });
    expect(view.run.summary).toMatchObject({ n: 4, passed: 2, score: 0.375, pass_rate: 0.5, run_passed: false, pass_rate_ci: { level: 0.95 } });
    expect(view.run.summary.pass_rate_ci.lower).toBeLessThan(0.5);
    expect(view.run.summary.pass_rate_ci.upper).toBeGreaterThan(0.5);
    expect(view.eval_result).toMatchObject({ run_id: 'http-run-1', score: 0.375, passed: false, occurred_at: scored.metadata.occurred_at, metrics: { n: 4, passed: 2 } });
    expect(view.cases).toBeUndefined();

    const withCases = JSON.parse((await get(port, '/v1/runs/http-run-1?include=cases')).body);
    expect(withCases.cases.map((c: { case_id: string }) => c.case_id)).toEqual(['c1', 'c2', 'c3', 'c4']);
    expect(withCases.cases[0]).toEqual({ case_id: 'c1', scorer: 'exact', scorer_version: '1.0.0', score: 0.5, passed: true, label: 'pass', scored_at: first.metadata.occurred_at });
    expect(withCases.cases[3]).toMatchObject({ case_id: 'c4', passed: false, label: 'missing_output' });

    // R4: the process's own relay publishes the EvalResult on EVALS_OUTBOUND.
    const outbound = streamOf(names, 'EVALS_OUTBOUND');
    const message = await waitFor(async () => (await jsm.streams.getMessage(outbound, { last_by_subj: subjectOf(names, SUBJECTS.RESULT_RECORDED) })) ?? undefined, 15_000);
    const decoded = decodeMessage(SUBJECTS.RESULT_RECORDED, message.data);
    expect(decoded.ok).toBe(true);
    expect(decoded.ok && decoded.message.data).toEqual(view.eval_result);
    expect(decoded.ok && decoded.message.metadata).toMatchObject({ correlation_id: s.correlationId, causation_id: scored.metadata.message_id });
    expect((await jsm.streams.info(outbound)).state.messages).toBe(1);
  });

  it('replays the persisted run as SSE: case frames by case id, then the summary; twice the same bytes (R6)', async () => {
    const first = await get(port, '/v1/runs/http-run-1/events');
    const second = await get(port, '/v1/runs/http-run-1/events');
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(second.body).toBe(first.body);
    const frames = first.body.split('\n\n').filter((f) => f !== '');
    expect(frames.map((f) => f.split('\n')[0])).toEqual(['event: case', 'event: case', 'event: case', 'event: case', 'event: summary']);
    const data = frames.map((f) => JSON.parse(f.split('\n')[1].replace(/^data: /, '')));
    expect(data.slice(0, 4).map((d) => d.case_id)).toEqual(['c1', 'c2', 'c3', 'c4']);
    expect(data[4]).toMatchObject({ run_id: 'http-run-1', status: 'completed', n: 4, passed: 2, frames: 4, pass_rate: 0.5 });
  });

  it('projects the regression decision from run.compared on the run\'s stream: the run view and the scorecards (G4, SC1)', async () => {
    const s = new RunScript('http-run-1', {}, 10);
    const [{ version }] = await ds.query(`SELECT max(stream_version)::int AS version FROM events WHERE stream_id = 'run-http-run-1'`);
    // Appended as the regression app records it; the process's own relay puts it on EVALS_EVENTS.
    await new EventStore().append(ds, 'run-http-run-1', version, [
      s.comparedEvent({ verdict: 'no_baseline', completeness: 'incomplete', baseline_run_id: null, chosen_by: null, comparison: null, finding_id: null }),
    ]);
    const view = await waitFor(async () => {
      const body = JSON.parse((await get(port, '/v1/runs/http-run-1')).body);
      return body.regression ? body : undefined;
    }, 30_000);
    expect(view.regression).toEqual({
      verdict: 'no_baseline',
      baseline_run_id: null,
      chosen_by: null,
      comparison: null,
      completeness: 'incomplete',
      baseline_eligible: false,
      baseline_ineligible_reason: 'incomplete',
    });
    const cards = JSON.parse((await get(port, '/v1/scorecards?subject_id=support-bot')).body).scorecards;
    expect(cards).toHaveLength(1);
    expect(cards[0]).toMatchObject({
      suite_key: 'support-triage',
      subject_id: 'support-bot',
      runs: 1,
      runs_incomplete: 1,
      latest_run_id: 'http-run-1',
      latest_pass_rate: { passed: 2, n: 4 },
      latest_verdict: 'no_baseline',
      latest_completeness: 'incomplete',
    });
    const csv = await get(port, '/v1/scorecards?format=csv');
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.body.split('\r\n').filter((l) => l !== '')).toHaveLength(2);
  });

  it('rebuild command: replays the log into the same read model while the process runs, and announces nothing again', async () => {
    const before = JSON.parse((await get(port, '/v1/runs/http-run-1?include=cases')).body);
    const cardsBefore = (await get(port, '/v1/scorecards')).body;
    const run = (env: Record<string, string>) =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        execFile(process.execPath, ['-r', '@swc-node/register', 'apps/read-model/src/rebuild.ts'], { cwd: ROOT, env: { ...process.env, ...env } }, (error, stdout, stderr) =>
          resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: `${stdout}${stderr}` }),
        );
      });
    const done = await run({ DATABASE_URL: testServers.postgres.url, DATABASE_SCHEMA: schema.schema, REBUILD_PAGE_SIZE: '2' });
    expect(done.code).toBe(0);
    const report = JSON.parse(done.out.trim().split('\n').pop() as string);
    expect(report).toMatchObject({ msg: 'read model rebuilt', events: 7, applied: 7, runs: 1, evalResults: 1, verdicts: 1, published: 0 });
    expect(JSON.parse((await get(port, '/v1/runs/http-run-1?include=cases')).body)).toEqual(before);
    expect(before.regression).toMatchObject({ verdict: 'no_baseline', completeness: 'incomplete' });
    expect((await get(port, '/v1/scorecards')).body).toBe(cardsBefore);
    expect((await jsm.streams.info(streamOf(names, 'EVALS_OUTBOUND'))).state.messages).toBe(1);

    const refused = await run({ DATABASE_URL: 'mysql://nope', DATABASE_SCHEMA: schema.schema });
    expect(refused.code).toBe(2);
    expect(refused.out).toContain('DATABASE_URL: must be a postgres or postgresql URL');
  });

  it('answers 404 RUN_NOT_FOUND as JSON for an unknown run, on both routes', async () => {
    for (const url of ['/v1/runs/no-such-run', '/v1/runs/no-such-run/events']) {
      const r = await get(port, url);
      expect(r.status).toBe(404);
      expect(JSON.parse(r.body)).toEqual({ code: 'RUN_NOT_FOUND', message: 'no run no-such-run in the read model', field: 'id' });
    }
  });
});
