import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createServer as createHttpServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
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

function get(port: number, urlPath: string, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: urlPath, method: 'GET', headers }, (res) => {
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
  // Stands in for the ingestion and regression apps the dashboard forwards to: records what reached it.
  let upstream: Server;
  const forwarded: Array<{ url: string; headers: IncomingHttpHeaders }> = [];

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
    // Issue 30: the projects the scoping test uses (with access control off, X-Evals-Project names one).
    await ds.query(`INSERT INTO projects (id, name) VALUES ('team-a', 'Team A'), ('team-b', 'Team B')`);
    upstream = createHttpServer((req, res) => {
      forwarded.push({ url: req.url ?? '', headers: req.headers });
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ items: [], total: 0 }));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const upstreamUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
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
        DASHBOARD_INGESTION_URL: upstreamUrl,
        DASHBOARD_REGRESSION_URL: upstreamUrl,
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
    await new Promise((resolve) => (upstream ? upstream.close(resolve) : resolve(undefined)));
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

  describe('two projects on the same suite key and subject (issue 30)', () => {
    const A = { 'x-evals-project': 'team-a' };
    const B = { 'x-evals-project': 'team-b' };

    /** A decided run of `project`: suite support-triage v3, subject agent/support-bot, as every run of this file. */
    async function decided(runId: string, project: string, start: number): Promise<void> {
      const s = new RunScript(runId, { project }, start);
      await s.appendRun(ds, s.openedEvent());
      await s.appendCases(ds, s.resultsEvent([result('c1', 1), result('c2', 1), result('c3', 0, false), result('c4', 1)]));
      await s.appendRun(ds, s.sealedEvent());
      await s.appendRun(ds, s.scoredEvent(4, 3, 3));
      await s.appendRun(ds, s.comparedEvent({ verdict: 'no_baseline', completeness: 'complete', baseline_run_id: null, chosen_by: null, comparison: null, finding_id: null }));
    }

    beforeAll(async () => {
      await decided('http-a-1', 'team-a', 100);
      await decided('http-b-1', 'team-b', 110);
      for (const [id, h] of [['http-a-1', A], ['http-b-1', B]] as const) {
        await waitFor(async () => (JSON.parse((await get(port, `/v1/runs/${id}`, h)).body).regression ? true : undefined), 30_000);
      }
    });

    it("serves a run and its SSE replay only in the run's project; elsewhere the 404 of a missing run, before any frame", async () => {
      const own = JSON.parse((await get(port, '/v1/runs/http-a-1?include=cases', A)).body);
      expect(own.run).toMatchObject({ run_id: 'http-a-1', project: 'team-a', status: 'completed' });
      expect(own.cases).toHaveLength(4);
      expect((await get(port, '/v1/runs/http-a-1/events', A)).body).toContain('event: summary');
      // Another project (team-b), and the default one (no header): exactly what a missing run answers.
      for (const h of [B, {}]) {
        for (const url of ['/v1/runs/http-a-1', '/v1/runs/http-a-1?include=cases', '/v1/runs/http-a-1/events', '/v1/runs/http-a-1/cases']) {
          const r = await get(port, url, h);
          expect(r.status).toBe(404);
          expect(r.headers['content-type']).toMatch(/^application\/json/);
          expect(r.body).not.toContain('event:');
          expect(JSON.parse(r.body).code).toBe('RUN_NOT_FOUND');
        }
        for (const url of ['/v1/runs/http-a-1', '/v1/runs/http-a-1/events']) {
          expect(JSON.parse((await get(port, url, h)).body)).toEqual({ code: 'RUN_NOT_FOUND', message: 'no run http-a-1 in the read model', field: 'id' });
        }
      }
      // A run of default is not one of team-a's either.
      expect((await get(port, '/v1/runs/http-run-1', A)).status).toBe(404);
      // A project that does not exist: the guard's 404, whatever the run.
      expect(JSON.parse((await get(port, '/v1/runs/http-a-1', { 'x-evals-project': 'team-zz' })).body).code).toBe('PROJECT_NOT_FOUND');
    });

    it('keeps two scorecards for the same suite and subject in two projects, and the dashboard lists each project its own runs', async () => {
      const cards = async (h: Record<string, string>) => JSON.parse((await get(port, '/v1/scorecards?suite_key=support-triage&subject_id=support-bot', h)).body).scorecards;
      expect((await cards(A)).map((c: { latest_run_id: string; runs: number }) => [c.latest_run_id, c.runs])).toEqual([['http-a-1', 1]]);
      expect((await cards(B)).map((c: { latest_run_id: string; runs: number }) => [c.latest_run_id, c.runs])).toEqual([['http-b-1', 1]]);
      expect((await cards({})).map((c: { latest_run_id: string }) => c.latest_run_id)).toEqual(['http-run-1']);
      const csvB = (await get(port, '/v1/scorecards?format=csv', B)).body;
      expect(csvB).toContain('http-b-1');
      expect(csvB).not.toContain('http-a-1');

      const list = async (h: Record<string, string>, query = '') => {
        const page = JSON.parse((await get(port, `/v1/run-list${query}`, h)).body);
        return { ids: page.items.map((r: { run_id: string }) => r.run_id), total: page.total };
      };
      expect(await list(A)).toEqual({ ids: ['http-a-1'], total: 1 });
      expect(await list(B, '?suite_key=support-triage&subject_id=support-bot')).toEqual({ ids: ['http-b-1'], total: 1 });
      expect(await list({})).toEqual({ ids: ['http-run-1'], total: 1 });
      const cases = JSON.parse((await get(port, '/v1/runs/http-b-1/cases?passed=false', B)).body);
      expect(cases).toMatchObject({ total: 1, items: [{ case_id: 'c3' }] });
      // The canary: nothing of team-a's run in any of team-b's answers above or of its whoami.
      for (const url of ['/v1/run-list', '/v1/scorecards', '/v1/runs/http-b-1?include=cases', '/v1/runs/http-b-1/events', '/v1/whoami']) {
        expect((await get(port, url, B)).body).not.toContain('http-a-1');
      }
    });

    it('whoami names the project the request acts in', async () => {
      expect(JSON.parse((await get(port, '/v1/whoami', A)).body)).toEqual({ name: 'auth-disabled', tier: 'admin', auth_disabled: true, project: 'team-a', platform: false });
      expect(JSON.parse((await get(port, '/v1/whoami')).body)).toMatchObject({ project: 'default' });
    });

    it('announces the EvalResult of team-a on evals.result.recorded.team-a with metadata.project (EVALS_OUTBOUND captures it)', async () => {
      const outbound = streamOf(names, 'EVALS_OUTBOUND');
      for (const project of ['team-a', 'team-b']) {
        const message = await waitFor(async () => (await jsm.streams.getMessage(outbound, { last_by_subj: subjectOf(names, `${SUBJECTS.RESULT_RECORDED}.${project}`) })) ?? undefined, 15_000);
        // Decoded on the subject it travelled on: a project's message only decodes on its own project's token.
        const decoded = decodeMessage(`${SUBJECTS.RESULT_RECORDED}.${project}`, message.data);
        expect(decoded.ok && decoded.message.metadata.project).toBe(project);
        expect(decodeMessage(SUBJECTS.RESULT_RECORDED, message.data).ok).toBe(false);
        expect(decoded.ok && (decoded.message.data as { run_id: string }).run_id).toBe(project === 'team-a' ? 'http-a-1' : 'http-b-1');
      }
      // The default run's result stays alone on the bare subject, its envelope without a project.
      const bare = decodeMessage(SUBJECTS.RESULT_RECORDED, (await jsm.streams.getMessage(outbound, { last_by_subj: subjectOf(names, SUBJECTS.RESULT_RECORDED) }))!.data);
      expect(bare.ok && (bare.message.data as { run_id: string }).run_id).toBe('http-run-1');
      expect(bare.ok && 'project' in bare.message.metadata).toBe(false);
      expect((await jsm.streams.info(outbound)).state.messages).toBe(3);
    });

    it("forwards the dashboard's upstream requests with the caller's key and the request's project", async () => {
      forwarded.length = 0;
      expect((await get(port, '/dashboard/upstream/regression/v1/findings?limit=5', { ...A, authorization: 'Bearer evk_test_key' })).status).toBe(200);
      expect((await get(port, '/dashboard/upstream/ingestion/v1/gates', {})).status).toBe(200);
      expect(forwarded.map((f) => [f.url, f.headers['x-evals-project'], f.headers.authorization])).toEqual([
        ['/v1/findings?limit=5', 'team-a', 'Bearer evk_test_key'],
        ['/v1/gates', 'default', undefined],
      ]);
    });
  });
});
