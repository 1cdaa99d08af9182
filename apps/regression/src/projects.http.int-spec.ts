import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { InProcessBus } from '@evals/bus';
import { DEFAULT_PROJECT } from '@evals/contracts';
import { CalibrationRepository, ComparisonRepository, createDataSource, migrate, ProjectRepository, RegressionRepository, type RunVerdictRow } from '@evals/persistence';
import { InfrastructureModule, JsonLogger, useBodyParsers } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { createTestSchema, type TestSchema } from '../../../test/support/isolation';
import { testServers } from '../../../test/support/servers';
import { loadRegressionConfig } from './config';
import { RegressionModule } from './regression.module';

const A = 'team-a';
const D = DEFAULT_PROJECT;

/** A verdict row of `project` on the suite key and subject both projects use. */
const verdict = (project: string, run_id: string, verdict = 'regressed'): RunVerdictRow => ({
  project,
  run_id,
  suite_key: 'support',
  suite_version: 1,
  subject_kind: 'agent',
  subject_id: 'bot',
  variant: null,
  completed_at: '2026-12-01T01:00:00.000Z',
  n: 10,
  passed: 9,
  score: 0.9,
  pass_threshold: 0.5,
  scorer_versions: { exact: '1.0.0' },
  verdict,
  completeness: 'complete',
  baseline_run_id: null,
  baseline_choice: null,
  comparison: null,
});

/**
 * Issue 30 (ADR 0009) over HTTP: the regression app's routes act in the request's project (`@ProjectScope`,
 * here from X-Evals-Project with EVALS_AUTH=disabled). The same suite key and subject in two projects: each
 * project lists only its own findings, pins and sets, and another project's object answers exactly what a
 * missing one answers - the same status and code, a message naming only what the caller sent.
 */
describe('integration: the regression routes per project, over HTTP (issue 30)', () => {
  let schema: TestSchema;
  let ds: DataSource;
  let app: NestExpressApplication;
  let base: string;
  const repo = new RegressionRepository();
  let comparisonOfA: string;

  beforeAll(async () => {
    schema = await createTestSchema('regproj');
    ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize: 2 });
    await ds.initialize();
    await migrate(ds);
    await new ProjectRepository().create(ds, { id: A, name: 'team a' });
    for (const [project, runId] of [[A, 'h-a'], [D, 'h-d']] as const) {
      await repo.record(ds, verdict(project, runId));
      await repo.addFinding(ds, project, { finding_id: randomUUID(), kind: 'eval_regression', run_id: runId, payload: { kind: 'eval_regression', run_id: runId, suite: 'support', subject_id: 'bot' }, occurred_at: '2026-12-01T01:00:00.000Z' });
    }
    await repo.record(ds, verdict(D, 'h-d-ok', 'no_regression'));
    comparisonOfA = (await new ComparisonRepository().add(ds, A, { id: randomUUID(), run_a: 'h-a', run_b: 'h-a2', judge_model: 'm', prompt_version: 'p', rubric_hash: 'a'.repeat(64), report: { ties: 0 } })).id;

    const config = loadRegressionConfig(
      { DATABASE_URL: testServers.postgres.url, DATABASE_SCHEMA: schema.schema, DATABASE_POOL_SIZE: '4', EVALS_AUTH: 'disabled', LOG_LEVEL: 'error', PORT: '0' },
      { servers: 'optional' },
    );
    const logger = new JsonLogger('regression-projects-it', 'error', () => undefined);
    const features = RegressionModule.features(null);
    app = await NestFactory.create<NestExpressApplication>(
      { ...features, imports: [InfrastructureModule.forRoot({ app: 'regression', config, logger, bus: () => InProcessBus.open({ streamPrefix: '', subjectPrefix: '' }) })] },
      { logger, bodyParser: false, abortOnError: false },
    );
    useBodyParsers(app, 64, { yaml: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await ds?.destroy();
    await schema?.drop();
  });

  async function call(project: string | null, method: string, route: string, body?: unknown): Promise<{ status: number; body: any }> {
    const headers: Record<string, string> = { ...(project === null ? {} : { 'x-evals-project': project }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
    const res = await fetch(`${base}${route}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: res.status, body: await res.json() };
  }

  it('GET /v1/findings lists only the caller project\'s findings; no header is default', async () => {
    const runIds = async (project: string | null) => (await call(project, 'GET', '/v1/findings')).body.findings.map((f: { run_id: string }) => f.run_id);
    expect(await runIds(A)).toEqual(['h-a']);
    expect(await runIds(null)).toEqual(['h-d']);
    expect(await runIds(D)).toEqual(['h-d']);
  });

  it("GET /v1/findings/:id of another project's run answers what a run without a finding answers", async () => {
    expect(await call(A, 'GET', '/v1/findings/h-a')).toMatchObject({ status: 200, body: { run_id: 'h-a' } });
    const missing = await call(A, 'GET', '/v1/findings/nowhere');
    expect(missing).toMatchObject({ status: 404, body: { code: 'FINDING_NOT_FOUND' } });
    const other = await call(A, 'GET', '/v1/findings/h-d');
    expect(other).toEqual({ status: 404, body: { ...missing.body, message: missing.body.message.replace('nowhere', 'h-d') } });
    expect(JSON.stringify(other.body)).not.toContain('support');
  });

  it("POST /v1/baselines pins only the caller project's runs; GET /v1/baselines lists only its pins", async () => {
    const pin = (run_id: string) => ({ run_id, suite_key: 'support', subject_kind: 'agent', subject_id: 'bot' });
    const missing = await call(A, 'POST', '/v1/baselines', pin('nowhere'));
    expect(missing).toMatchObject({ status: 404, body: { code: 'RUN_NOT_FOUND' } });
    const other = await call(A, 'POST', '/v1/baselines', pin('h-d-ok'));
    expect(other).toEqual({ status: 404, body: { ...missing.body, message: missing.body.message.replace('nowhere', 'h-d-ok') } });
    expect(await call(D, 'POST', '/v1/baselines', pin('h-d-ok'))).toMatchObject({ status: 201, body: { pin: { run_id: 'h-d-ok' } } });
    expect((await call(A, 'GET', '/v1/baselines')).body).toEqual({ pins: [] });
    expect((await call(D, 'GET', '/v1/baselines')).body.pins.map((p: { run_id: string }) => p.run_id)).toEqual(['h-d-ok']);
  });

  it("calibration sets: created in the caller's project, another project's set is SET_NOT_FOUND", async () => {
    const created = await call(A, 'POST', '/v1/calibration-sets', { name: 'team a set', rubric: 'Polite.', items: [{ item_id: 'i1', output_hash: 'a'.repeat(64), human_verdict: 'pass', output_chars: 3 }] });
    expect(created.status).toBe(201);
    const id = created.body.set.id as string;
    expect(await call(A, 'GET', `/v1/calibration-sets/${id}`)).toMatchObject({ status: 200, body: { set: { id, name: 'team a set' } } });
    const missingId = randomUUID();
    const missing = await call(D, 'GET', `/v1/calibration-sets/${missingId}`);
    expect(missing).toMatchObject({ status: 404, body: { code: 'SET_NOT_FOUND' } });
    expect(await call(D, 'GET', `/v1/calibration-sets/${id}`)).toEqual({ status: 404, body: { ...missing.body, message: missing.body.message.replace(missingId, id) } });
    // A calibration of it from default never reaches the judge (none is configured here): the set is not found first.
    expect(await call(D, 'POST', '/v1/calibrations', { set_id: id })).toMatchObject({ status: 404, body: { code: 'SET_NOT_FOUND' } });
  });

  it("GET /v1/comparisons/:id of another project's report is COMPARISON_NOT_FOUND", async () => {
    expect(await call(A, 'GET', `/v1/comparisons/${comparisonOfA}`)).toMatchObject({ status: 200, body: { comparison_id: comparisonOfA } });
    const missingId = randomUUID();
    const missing = await call(D, 'GET', `/v1/comparisons/${missingId}`);
    expect(missing).toMatchObject({ status: 404, body: { code: 'COMPARISON_NOT_FOUND' } });
    expect(await call(D, 'GET', `/v1/comparisons/${comparisonOfA}`)).toEqual({ status: 404, body: { ...missing.body, message: missing.body.message.replace(missingId, comparisonOfA) } });
  });

  it("GET /v1/judges and /v1/judges/status: a judge certified by team-a's labels is uncalibrated in default", async () => {
    const calibration = new CalibrationRepository();
    const setId = randomUUID();
    await calibration.createSet(ds, A, { id: setId, name: 'team a labels', golden: false, rubric: null, suite_key: 'support', suite_version: 1, item_count: 0 }, []);
    const rate = (x: number, n: number) => ({ value: x / n, numerator: x, denominator: n, lower: 0, upper: 1 });
    const report = { n: 60, agreement: rate(58, 60), kappa: { value: 0.9 }, sensitivity: rate(47, 48), specificity: rate(11, 12), targets: {}, reasons: [] };
    const stored = await calibration.addReport(ds, A, { id: randomUUID(), set_id: setId, judge_model: 'judge-m', prompt_version: 'judge-p', scope: 'suite:support', targets: {}, report, status: 'certified' });
    const status = (project: string) => call(project, 'GET', '/v1/judges/status?model=judge-m&prompt_version=judge-p&scope=suite:support');
    expect(await status(A)).toMatchObject({ status: 200, body: { status: 'certified', report_id: stored.id } });
    expect(await status(D)).toMatchObject({ status: 200, body: { status: 'uncalibrated', report_id: null } });
    const pins = async (project: string) => (await call(project, 'GET', '/v1/judges')).body.judges.map((j: { judge_model: string; status: string }) => [j.judge_model, j.status]);
    expect(await pins(A)).toEqual([['judge-m', 'certified']]);
    expect(await pins(D)).toEqual([]);
  });

  it('a project that does not exist is refused by the guard before any route reads: 404 PROJECT_NOT_FOUND', async () => {
    expect(await call('team-nowhere', 'GET', '/v1/findings')).toMatchObject({ status: 404, body: { code: 'PROJECT_NOT_FOUND' } });
  });
});
