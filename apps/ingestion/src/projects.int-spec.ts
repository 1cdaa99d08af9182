import { encodeMessage, serializeMessage, SUBJECTS } from '@evals/contracts';
import { subjectOf, type InProcessBus } from '@evals/bus';
import { runStreamId, suiteStreamId } from '@evals/domain';
import { createDataSource } from '@evals/persistence';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { DataSource } from 'typeorm';
import { createTestSchema, type TestSchema } from '../../../test/support/isolation';
import { testServers } from '../../../test/support/servers';
import { startAllInOne } from './all-in-one.testing';

interface Reply {
  readonly status: number;
  readonly json: any;
}

jest.setTimeout(120_000);

const A = 'ingest-a';
const B = 'ingest-b';
const KEY = 'shared-key';

/**
 * Issue 30 (docs/adr/0009-projects.md) in the ingestion, over HTTP and the bus on the all-in-one composition
 * with real PostgreSQL and the in-process bus: two projects push the same suite key with different content
 * and run it, gate it and budget it, and each sees only its own - another project's suite, run and gate
 * answer exactly what a missing one answers, its run id is a plain conflict, and on the bus a message of a
 * project that does not exist is dead-lettered PROJECT_NOT_FOUND while one naming another project's run is
 * refused as an unknown run.
 */
describe('integration: the ingestion per project (issue 30)', () => {
  let schema: TestSchema;
  let ds: DataSource;
  let app: NestExpressApplication;
  let bus: InProcessBus;
  let base: string;

  beforeAll(async () => {
    schema = await createTestSchema('ingestprojects');
    // EVALS_AUTH=disabled (startAllInOne): the request's project is the X-Evals-Project header's, as for a platform key.
    ({ app, base, inner: bus } = await startAllInOne(schema.schema, { EVALS_HMAC_SECRET: 'projects-test-secret-0123456789abcdef', LOG_LEVEL: 'warn' }, () => undefined));
    ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize: 2 });
    await ds.initialize();
    await ds.query(`INSERT INTO projects (id, name) VALUES ($1, 'A'), ($2, 'B')`, [A, B]);

    // The same key in both projects, with other cases: A has three, B two of its own.
    const suite = (cases: string[], description: string) => ({ key: KEY, description, default_scorer: { type: 'exact' }, pass_threshold: 0.5, regression_threshold: 0.1, cases: cases.map((id) => ({ id, input: `q ${id}`, expected: 'yes' })) });
    const inA = await call('POST', '/v1/suites', A, suite(['a0', 'a1', 'a2'], 'of A'));
    const inB = await call('POST', '/v1/suites', B, suite(['b0', 'b1'], 'of B'));
    expect([inA.status, inB.status]).toEqual([201, 201]);
    expect([inA.json.suite.version, inB.json.suite.version]).toEqual([1, 1]);
  });

  afterAll(async () => {
    await app?.close();
    await ds?.destroy();
    await schema?.drop();
  });

  async function call(method: 'GET' | 'POST', route: string, project: string | null, body?: unknown): Promise<Reply> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (project !== null) headers['x-evals-project'] = project;
    const res = await fetch(`${base}${route}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null };
  }

  const run = (runId: string, cases: string[], extra: Record<string, unknown> = {}) => ({
    run_id: runId,
    suite_key: KEY,
    subject_kind: 'agent',
    subject_id: 'bot',
    source: 'ci',
    outputs: cases.map((case_id) => ({ case_id, output: 'yes' })),
    ...extra,
  });

  async function stream(runId: string): Promise<Array<{ type: string; data: any }>> {
    return ds.query(`SELECT type, data FROM events WHERE stream_id = $1 ORDER BY stream_version`, [runStreamId(runId)]);
  }

  /** A 404's body with the id it names replaced: what tells a foreign object from a missing one, if anything. */
  const shape = (reply: Reply, id: string) => ({ status: reply.status, code: reply.json?.code, message: String(reply.json?.message).replaceAll(id, '<id>') });

  it('each project lists and reads its own suite of the shared key; default has none', async () => {
    const listA = await call('GET', '/v1/suites', A);
    const listB = await call('GET', '/v1/suites', B);
    expect(listA.json.items.map((s: any) => [s.suite_key, s.case_count, s.description])).toEqual([[KEY, 3, 'of A']]);
    expect(listB.json.items.map((s: any) => [s.suite_key, s.case_count, s.description])).toEqual([[KEY, 2, 'of B']]);
    expect((await call('GET', '/v1/suites', null)).json.total).toBe(0);
    expect((await call('GET', `/v1/suites/${KEY}`, B)).json.suite.cases.map((c: any) => c.case_id)).toEqual(['b0', 'b1']);
    expect(shape(await call('GET', `/v1/suites/${KEY}`, null), KEY)).toEqual(shape(await call('GET', '/v1/suites/never-pushed', null), 'never-pushed'));
    expect((await call('GET', `/v1/suites/${KEY}`, null)).status).toBe(404);
    // Each version's head is in its project's stream.
    const heads = await ds.query(`SELECT stream_id FROM events WHERE type = 'suite.published' ORDER BY stream_id`);
    expect(heads.map((h: any) => h.stream_id)).toEqual([suiteStreamId(A, KEY, 1), suiteStreamId(B, KEY, 1)]);
  });

  it("runs of the shared key score each project's own suite; another project's run id is a plain conflict", async () => {
    const ranA = await call('POST', '/v1/runs', A, run('proj-run-a', ['a0', 'a1', 'a2']));
    const ranB = await call('POST', '/v1/runs', B, run('proj-run-b', ['b0', 'b1']));
    expect([ranA.status, ranB.status]).toEqual([200, 200]);
    expect(ranA.json.run).toMatchObject({ run_id: 'proj-run-a', suite_key: KEY, suite_version: 1 });
    expect([ranA.json.run.summary.n, ranB.json.run.summary.n]).toEqual([3, 2]);
    expect((await stream('proj-run-a'))[0]!.data).toMatchObject({ project: A, case_count: 3 });
    const before = await stream('proj-run-a');
    // A case only A's suite has is unknown in B's.
    expect((await call('POST', '/v1/runs', B, run('proj-run-b2', ['a0']))).json.code).toBe('UNKNOWN_CASE');

    // A's run id from B, with the very same request: RUN_ID_CONFLICT, worded as A's own conflict is.
    const cross = await call('POST', '/v1/runs', B, run('proj-run-a', ['a0', 'a1', 'a2']));
    const own = await call('POST', '/v1/runs', A, run('proj-run-a', ['a0']));
    expect(cross).toMatchObject({ status: 409, json: { code: 'RUN_ID_CONFLICT' } });
    expect(cross.json).toEqual(own.json);
    expect(JSON.stringify(cross.json)).not.toContain(A);
    // Neither conflict appended anything to A's run.
    expect(await stream('proj-run-a')).toEqual(before);
  });

  it("another project's open run takes no outputs and no seal: UNKNOWN_RUN, as a run that does not exist", async () => {
    const opened = await call('POST', '/v1/streamed-runs', A, { ...run('proj-stream-a', []), outputs: undefined });
    expect(opened).toMatchObject({ status: 200, json: { run_id: 'proj-stream-a', case_count: 3, phase: 'open' } });
    const outputs = { outputs: [{ case_id: 'a0', output: 'yes' }] };
    const foreign = await call('POST', '/v1/streamed-runs/proj-stream-a/outputs', B, outputs);
    const missing = await call('POST', '/v1/streamed-runs/proj-stream-none/outputs', B, outputs);
    expect(shape(foreign, 'proj-stream-a')).toEqual({ status: 404, code: 'UNKNOWN_RUN', message: 'no run <id>' });
    expect(shape(foreign, 'proj-stream-a')).toEqual(shape(missing, 'proj-stream-none'));
    const foreignSeal = await call('POST', '/v1/streamed-runs/proj-stream-a/seal', B, { wait: false });
    expect(shape(foreignSeal, 'proj-stream-a')).toEqual(shape(await call('POST', '/v1/streamed-runs/proj-stream-none/seal', B, { wait: false }), 'proj-stream-none'));
    expect((await stream('proj-stream-a')).map((e) => e.type)).toEqual(['run.opened']);
    // Its own project feeds it.
    expect(await call('POST', '/v1/streamed-runs/proj-stream-a/outputs', A, outputs)).toMatchObject({ status: 200, json: { accepted: 1 } });
  });

  it("gates and their overrides are the project's: GATE_NOT_FOUND from the other, which lists only its own", async () => {
    const gateA = await call('POST', '/v1/gate', A, { ...run('proj-gate-a', ['a0', 'a1', 'a2']), source: undefined });
    const gateB = await call('POST', '/v1/gate', B, { ...run('proj-gate-b', []), outputs: [{ case_id: 'b0', output: 'no' }, { case_id: 'b1', output: 'no' }], source: undefined });
    expect([gateA.status, gateB.status]).toEqual([200, 200]);
    // B's run answered both of its cases wrong: its gate fails and may be overridden - by B alone.
    expect(gateB.json.recorded_verdict).toBe('fail');
    const idA = gateA.json.gate_id as string;
    const idB = gateB.json.gate_id as string;
    expect((await call('GET', `/v1/gate/${idA}`, A)).json).toMatchObject({ gate_id: idA, run: { run_id: 'proj-gate-a' } });
    const foreign = await call('GET', `/v1/gate/${idA}`, B);
    expect(shape(foreign, idA)).toEqual({ status: 404, code: 'GATE_NOT_FOUND', message: 'no gate <id>' });
    const reason = { reason: 'accepted by a team that does not own this gate at all' };
    expect(shape(await call('POST', `/v1/gate/${idB}/override`, A, reason), idB)).toEqual({ status: 404, code: 'GATE_NOT_FOUND', message: 'no gate <id>' });
    expect(await ds.query(`SELECT count(*)::int AS n FROM gate_overrides`)).toEqual([{ n: 0 }]);
    expect(await call('POST', `/v1/gate/${idB}/override`, B, reason)).toMatchObject({ status: 200, json: { effective_verdict: 'pass' } });
    expect((await call('GET', '/v1/gates', A)).json.items.map((g: any) => g.gate_id)).toEqual([idA]);
    expect((await call('GET', '/v1/gates', B)).json.items.map((g: any) => [g.gate_id, g.overrides])).toEqual([[idB, 1]]);
    // Named by run id, another project's gate is not listed either.
    expect((await call('GET', '/v1/gates?run_id=proj-gate-b', A)).json).toMatchObject({ items: [], total: 0 });
    expect(await ds.query(`SELECT project FROM gate_verdicts ORDER BY project`)).toEqual([{ project: A }, { project: B }]);
  });

  it('the same budget scope in two projects is two budgets, each listed in its own project only', async () => {
    await ds.query(`INSERT INTO budgets (project, scope, limit_usd, mode, period) VALUES ($1, $3, 10, 'block', 'month'), ($2, $3, 2, 'throttle', 'total')`, [A, B, `suite:${KEY}`]);
    const inA = await call('GET', '/v1/budgets', A);
    const inB = await call('GET', '/v1/budgets', B);
    expect(inA.json.budgets.map((b: any) => [b.scope, b.limit_usd, b.mode])).toEqual([[`suite:${KEY}`, 10, 'block']]);
    expect(inB.json.budgets.map((b: any) => [b.scope, b.limit_usd, b.mode])).toEqual([[`suite:${KEY}`, 2, 'throttle']]);
    expect((await call('GET', '/v1/budgets', null)).json.budgets).toEqual([]);
  });

  describe('on the bus', () => {
    const meta = (id: string, project?: string) => ({ message_id: id, correlation_id: id, causation_id: id, occurred_at: new Date().toISOString(), ...(project ? { project } : {}) });

    async function publish(subject: (typeof SUBJECTS)[keyof typeof SUBJECTS], data: unknown, id: string, project?: string): Promise<void> {
      await bus.publish(subjectOf(bus.names, subject), serializeMessage(encodeMessage(subject as never, 1 as never, data as never, meta(id, project))), id);
    }

    async function deadLetter(messageId: string, within = 20_000): Promise<{ code: string; reason: string } | undefined> {
      const deadline = Date.now() + within;
      for (;;) {
        const rows = await ds.query(`SELECT code, reason FROM dead_letters WHERE message_id = $1`, [messageId]);
        if (rows.length > 0) return rows[0];
        if (Date.now() > deadline) return undefined;
        await new Promise((r) => setTimeout(r, 50));
      }
    }

    it('a message of a project that does not exist is dead-lettered PROJECT_NOT_FOUND, naming no value', async () => {
      await publish(SUBJECTS.RUN_REQUESTED, { ...run('bus-ghost-run', []), outputs: undefined, source: 'sandbox' }, 'bus-ghost-open', 'no-such-project');
      expect(await deadLetter('bus-ghost-open')).toEqual({ code: 'PROJECT_NOT_FOUND', reason: 'metadata.project: no such project' });
      expect(await stream('bus-ghost-run')).toEqual([]);
    });

    it("a run requested on the bus is its message's project's; another project's output and seal for it are refused as for an unknown run", async () => {
      await publish(SUBJECTS.RUN_REQUESTED, { ...run('bus-run-b', []), outputs: undefined, source: 'sandbox' }, 'bus-b-open', B);
      const deadline = Date.now() + 10_000;
      while ((await stream('bus-run-b')).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect((await stream('bus-run-b'))[0]).toMatchObject({ type: 'run.opened', data: { project: B, case_count: 2 } });

      // A's seal of B's run: UNKNOWN_RUN at once, as for a run never opened.
      await publish(SUBJECTS.RUN_SEALED, { run_id: 'bus-run-b' }, 'bus-a-seal', A);
      const sealLetter = await deadLetter('bus-a-seal');
      expect(sealLetter).toMatchObject({ code: 'UNKNOWN_RUN' });
      expect(sealLetter!.reason).not.toContain(B);
      // A's output for B's run waits like an output for a run not opened yet, then is dead-lettered the same way.
      await publish(SUBJECTS.OUTPUT_SUBMITTED, { run_id: 'bus-run-b', case_id: 'b0', output: 'yes' }, 'bus-a-output', A);
      expect(await deadLetter('bus-a-output', 60_000)).toEqual({ code: 'UNKNOWN_RUN', reason: 'data.run_id: no run bus-run-b' });
      expect((await stream('bus-run-b')).map((e) => e.type)).toEqual(['run.opened']);
    });
  });
});

/**
 * Issue 30: the session monitor per project. A signal is scored by its message's project's monitor suites
 * (the same key in two projects with other cases), into a window run of that project named apart from the
 * other's, and the sweep closes each window in its own project.
 */
describe('integration: monitor windows per project (issue 30)', () => {
  let schema: TestSchema;
  let ds: DataSource;
  let app: NestExpressApplication;
  let bus: InProcessBus;
  let base: string;
  const MONITOR = 'mon-shared';

  beforeAll(async () => {
    schema = await createTestSchema('ingestmonitor');
    ({ app, base, inner: bus } = await startAllInOne(
      schema.schema,
      { EVALS_HMAC_SECRET: 'monitor-test-secret-0123456789abcdef', LOG_LEVEL: 'warn', EVALS_MONITOR_SUITES: MONITOR, EVALS_MONITOR_WINDOW_SECONDS: '3', EVALS_MONITOR_GRACE_SECONDS: '1' },
      () => undefined,
    ));
    ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize: 2 });
    await ds.initialize();
    await ds.query(`INSERT INTO projects (id, name) VALUES ($1, 'A'), ($2, 'B')`, [A, B]);
    const push = (project: string, fields: string[]) =>
      fetch(`${base}/v1/suites`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-evals-project': project },
        body: JSON.stringify({ key: MONITOR, default_scorer: { type: 'exact' }, pass_threshold: 0.5, regression_threshold: 0.1, cases: fields.map((f) => ({ id: f, input: { signal_field: f }, scorer: { type: 'numeric_range', max: 1_000_000 } })) }),
      }).then((r) => r.status);
    expect([await push(A, ['cost_usd']), await push(B, ['cost_usd', 'tokens_total'])]).toEqual([201, 201]);
  });

  afterAll(async () => {
    await app?.close();
    await ds?.destroy();
    await schema?.drop();
  });

  it("each project's signal opens a window run of its own suite and project, and the sweep seals each", async () => {
    const occurredAt = new Date().toISOString();
    const signal = { session_id: 's1', subject_kind: 'agent', subject_id: 'bot', occurred_at: occurredAt, state: 'completed', finding_count: 0, max_severity: 'none', tokens_in: 10, tokens_out: 5, cost_usd: 0.01 };
    for (const project of [A, B]) {
      const id = `signal-${project}`;
      const message = encodeMessage(SUBJECTS.SESSION_SIGNAL, 1, signal as never, { message_id: id, correlation_id: id, causation_id: id, occurred_at: occurredAt, project });
      await bus.publish(subjectOf(bus.names, SUBJECTS.SESSION_SIGNAL), serializeMessage(message), id);
    }
    const deadline = Date.now() + 30_000;
    let windows: Array<{ project: string; run_id: string; sealed: boolean }> = [];
    while (Date.now() < deadline) {
      windows = await ds.query(`SELECT project, run_id, sealed_at IS NOT NULL AS sealed FROM monitor_windows ORDER BY project`);
      if (windows.length === 2 && windows.every((w) => w.sealed)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(windows.map((w) => [w.project, w.sealed])).toEqual([
      [A, true],
      [B, true],
    ]);
    // Run ids unique across the service: the same suite key, subject and window, named by the project.
    expect(windows[0]!.run_id).not.toBe(windows[1]!.run_id);
    expect(windows[0]!.run_id).toContain(`${A}:${MONITOR}`);
    for (const [w, cases] of [
      [windows[0]!, 1],
      [windows[1]!, 2],
    ] as const) {
      const events: Array<{ type: string; data: any }> = await ds.query(`SELECT type, data FROM events WHERE stream_id = $1 ORDER BY stream_version`, [runStreamId(w.run_id)]);
      expect(events[0]).toMatchObject({ type: 'run.opened', data: { project: w.project, suite_key: MONITOR, case_count: cases, source: 'session_sample' } });
      expect(events.map((e) => e.type)).toContain('run.sealed');
    }
  });
});
