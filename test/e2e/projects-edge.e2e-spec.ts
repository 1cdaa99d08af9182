import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { EvalsPublisher, jetStreamPort } from '@evals/publisher';
import { runEvals } from '../../apps/cli/src/e2e.testing';
import { startCluster, eventually, type AppCluster } from '../support/app-processes';
import { createTestSchema, deleteTestStreams, type TestSchema, uniqueSuffix } from '../support/isolation';
import { testServers } from '../support/servers';

/**
 * Issue 30 (docs/adr/0009-projects.md), the edges of the service: a run published with `@evals/publisher`'s
 * `project` lands in that project - opened, scored and recorded there, its EvalResult on the project's
 * subject - while the same suite key in `default` stays apart; a run of a project that does not exist is
 * dead-lettered PROJECT_NOT_FOUND; and the CLI's `--project` reaches every app as X-Evals-Project. Separate
 * processes (ingestion, scoring worker, read model, regression) on the real PostgreSQL and NATS JetStream,
 * with EVALS_AUTH=disabled: the header picks the project, as for a platform key.
 */
const root = path.resolve(__dirname, '../..');
const SUITE = 'extraction-json';
const suiteYaml = fs.readFileSync(path.join(root, `examples/${SUITE}.suite.yaml`), 'utf8');
const outputsFile = path.join(root, `examples/${SUITE}.good.outputs.jsonl`);
const goodOutputs: Array<{ case_id: string; output: string }> = fs.readFileSync(outputsFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line));

describe('e2e: a project through the publisher, the bus and the CLI (issue 30)', () => {
  const suffix = uniqueSuffix();
  const streamPrefix = `E2P_${suffix}_`;
  const subjectPrefix = `e2p_${suffix}`;
  let schema: TestSchema;
  let cluster: AppCluster;
  let bus: { nc: NatsConnection; js: JetStreamClient; jsm: JetStreamManager };
  const teamA = `team-a-${suffix}`;
  const missing = `nowhere-${suffix}`;

  const headers = (project?: string): Record<string, string> => (project ? { 'x-evals-project': project } : {});
  const get = (app: 'read-model' | 'ingestion', route: string, project?: string) => fetch(cluster.url(app, route), { headers: headers(project) });

  beforeAll(async () => {
    schema = await createTestSchema('e2p');
    cluster = await startCluster({ schema: schema.schema, streamPrefix, subjectPrefix, apps: ['ingestion', 'scoring-worker', 'read-model', 'regression'] });
    const nc = await connect({ servers: testServers.nats.url });
    bus = { nc, js: jetstream(nc), jsm: await jetstreamManager(nc) };
    const created = await fetch(cluster.url('ingestion', '/v1/projects'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: teamA, name: 'Team A' }) });
    expect(created.status).toBe(201);
    // The same suite key in both projects.
    for (const project of [undefined, teamA]) {
      const pushed = await fetch(cluster.url('ingestion', '/v1/suites'), { method: 'POST', headers: { 'content-type': 'application/yaml', ...headers(project) }, body: suiteYaml });
      expect(pushed.status).toBe(201);
    }
  }, 120_000);

  afterAll(async () => {
    await cluster?.stopAll();
    await bus?.nc.close();
    await deleteTestStreams(streamPrefix);
    await schema?.drop();
  });

  /** The last EvalResult stored on exactly this wire subject of the outbound stream (one run per subject here). */
  const lastResultOn = (wireSubject: string) =>
    eventually(
      async () => (await bus.jsm.streams.getMessage(`${streamPrefix}EVALS_OUTBOUND`, { last_by_subj: wireSubject }).catch(() => null))?.json<Record<string, any>>() ?? undefined,
      60_000,
      `an evals.result.recorded on ${wireSubject}`,
    );

  async function publishRun(runId: string, project?: string): Promise<void> {
    const publisher = new EvalsPublisher(jetStreamPort(bus.js, subjectPrefix), { sessionId: randomUUID(), batchOutputs: 3, ...(project ? { project } : {}) });
    const run = await publisher.open({ run_id: runId, suite_key: SUITE, subject_kind: 'agent', subject_id: 'extractor', source: 'sandbox' });
    for (const o of goodOutputs) await run.output(o.case_id, o.output);
    await run.seal();
  }

  it("a run published with the publisher's project is that project's: recorded on its subject, read only in it", async () => {
    const theirs = `pub-a-${suffix}`;
    const mine = `pub-default-${suffix}`;
    await publishRun(theirs, teamA);
    await publishRun(mine);

    // Its EvalResult is on the project's subject and names it; the default run's, on the bare one, does not.
    const recorded = await lastResultOn(`${subjectPrefix}.evals.result.recorded.${teamA}`);
    expect(recorded).toMatchObject({ type: 'evals.result.recorded', data: { run_id: theirs, metrics: { n: goodOutputs.length } }, metadata: { project: teamA } });
    const plain = await lastResultOn(`${subjectPrefix}.evals.result.recorded`);
    expect(plain.data.run_id).toBe(mine);
    expect(plain.metadata).not.toHaveProperty('project');

    // Each run is found in its own project only; in the other it answers what a missing run answers.
    const inA = await eventually(async () => {
      const res = await get('read-model', `/v1/runs/${theirs}`, teamA);
      return res.status === 200 ? ((await res.json()) as any) : undefined;
    }, 30_000, `the run ${theirs} in ${teamA}`);
    expect(inA.run ?? inA).toMatchObject({ run_id: theirs, suite_key: SUITE });
    const none = await get('read-model', `/v1/runs/pub-never-${suffix}`);
    const fromDefault = await get('read-model', `/v1/runs/${theirs}`);
    expect(fromDefault.status).toBe(404);
    expect(((await fromDefault.json()) as any).code).toBe(((await none.json()) as any).code);
    expect((await get('read-model', `/v1/runs/${mine}`, teamA)).status).toBe(404);
    expect((await get('read-model', `/v1/runs/${mine}`)).status).toBe(200);
  }, 120_000);

  it('a run published for a project that does not exist is dead-lettered PROJECT_NOT_FOUND, and opens nowhere', async () => {
    const runId = `pub-missing-${suffix}`;
    await publishRun(runId, missing);
    const letters = await eventually(async () => {
      const out = execFileSync('psql', [testServers.postgres.url, '-tAc', `SELECT subject || ':' || code FROM "${schema.schema}".dead_letters WHERE message_id LIKE '${runId}:%' ORDER BY id`]).toString().trim();
      return out.split('\n').includes('evals.run.requested:PROJECT_NOT_FOUND') ? out.split('\n') : undefined;
    }, 60_000, 'the dead letter of the run requested');
    // Nothing of the message is echoed in the letter; no run was opened in any project.
    expect(letters.every((l) => l.endsWith(':PROJECT_NOT_FOUND'))).toBe(true);
    expect((await get('read-model', `/v1/runs/${runId}`)).status).toBe(404);
    expect((await get('read-model', `/v1/runs/${runId}`, teamA)).status).toBe(404);
  }, 120_000);

  it('evals --project pushes, runs and reads in that project; EVALS_PROJECT too; a bad id is exit 2 before any request', async () => {
    const env = { EVALS_SERVER: cluster.url('ingestion', ''), EVALS_READ_SERVER: cluster.url('read-model', ''), EVALS_REGRESSION_SERVER: cluster.url('regression', ''), EVALS_NO_PROGRESS: '1' };
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-projects-e2e-'));
    try {
      const runId = `cli-a-${suffix}`;
      const junit = path.join(dir, 'junit.xml');
      const r = await runEvals(['--project', teamA, 'run', '--suite', SUITE, '--outputs', outputsFile, '--subject-id', 'cli-bot', '--run-id', runId, '--junit', junit, '--json'], env);
      if (r.code !== 0) throw new Error(`exit ${r.code}\n${r.stdout}\n${r.stderr}`);
      // The JUnit file needs the read model's cases: read in the same project, or it would be a 404.
      expect(fs.readFileSync(junit, 'utf8')).toContain('<testcase');
      expect((await get('read-model', `/v1/runs/${runId}`, teamA)).status).toBe(200);
      expect((await get('read-model', `/v1/runs/${runId}`)).status).toBe(404);

      const list = await runEvals(['baseline', 'list', '--json'], { ...env, EVALS_PROJECT: teamA });
      expect(list.code).toBe(0);
      const unknown = await runEvals(['baseline', 'list'], { ...env, EVALS_PROJECT: missing });
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('PROJECT_NOT_FOUND');

      const bad = await runEvals(['--project', 'Team_A', 'run', '--suite', SUITE, '--outputs', outputsFile, '--subject-id', 'cli-bot'], { ...env, EVALS_SERVER: 'http://127.0.0.1:9' });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--project is not a project id');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});

describe('e2e: two projects on the embedded default, one suite key (issue 30)', () => {
  const SUPPORT = 'examples/support-triage.suite.yaml';
  const GOOD = 'examples/support-triage.good.outputs.jsonl';
  let dir: string;
  let env: Record<string, string>;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-projects-embedded-'));
    env = { EVALS_DATA_DIR: path.join(dir, 'data'), EVALS_NO_PROGRESS: '1' };
  });

  afterAll(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const evals = async (args: string[], extra: Record<string, string> = {}) => {
    const r = await runEvals(args, { ...env, ...extra });
    if (r.code !== 0) throw new Error(`evals ${args.join(' ')}: exit ${r.code}\n${r.stdout}\n${r.stderr}`);
    return r;
  };

  it('the embedded service serves every project through its one guard: each sees only its own runs of the same suite key', async () => {
    // A project that does not exist yet: refused by the guard, as a missing one always is.
    const before = await runEvals(['--project', 'team-a', 'suite', 'push', SUPPORT], env);
    expect(before.code).toBe(2);
    expect(before.stderr).toContain('PROJECT_NOT_FOUND');

    await evals(['project', 'create', 'team-a', '--name', 'Team A']);
    expect(JSON.parse((await evals(['project', 'list', '--json'])).stdout).projects.map((p: { id: string }) => p.id).sort()).toEqual(['default', 'team-a']);
    // The same suite file, pushed in both projects: each gets its own v1.
    for (const extra of [{}, { EVALS_PROJECT: 'team-a' }] as Array<Record<string, string>>) expect((await evals(['suite', 'push', SUPPORT, '--json'], extra)).stdout).toMatch(/"version": 1/);

    const a = JSON.parse((await evals(['--project', 'team-a', 'run', '--suite', 'support-triage', '--outputs', GOOD, '--subject-id', 'bot-a', '--run-id', 'emb-a', '--json'])).stdout);
    const d = JSON.parse((await evals(['run', '--suite', 'support-triage', '--outputs', GOOD, '--subject-id', 'bot-d', '--run-id', 'emb-d', '--json'])).stdout);
    expect([a.run.run_id, d.run.run_id]).toEqual(['emb-a', 'emb-d']);

    // Each project's scorecards name only its own subject.
    const cards = async (extra: Record<string, string>) => (await evals(['scorecard', '--format', 'json'], extra)).stdout;
    const ofA = await cards({ EVALS_PROJECT: 'team-a' });
    const ofDefault = await cards({});
    expect(ofA).toContain('bot-a');
    expect(ofA).not.toContain('bot-d');
    expect(ofDefault).toContain('bot-d');
    expect(ofDefault).not.toContain('bot-a');
  }, 600_000);
});
