import { randomUUID } from 'node:crypto';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { eventually } from '../support/app-processes';
import { uniqueSuffix } from '../support/isolation';
import { testServers } from '../support/servers';
import { untilProjected } from '../support/read-model';
import { createProjectWithKeys, exactSuite, expectStatus, outputsFor, startProjectsCluster, type ProjectKeys, type ProjectsCluster } from '../support/projects';

/**
 * Issue 30, two teams at once (docs/adr/0009-projects.md): the four apps on the real servers, projects A and B
 * pushing the same suite keys with different cases, running against their baselines (automatic, then
 * pinned) and gating - all concurrently. Each project's runs, results, verdicts, findings, baselines and
 * scorecards are its own; on the bus a consumer filtering `finding.reported.<b>` or
 * `evals.result.recorded.<b>` sees only B's messages, one filtering the bare subjects (the default project,
 * as every consumer written before projects) sees neither. Then the bus edge: inbound messages whose
 * `metadata.project` is malformed are dead-lettered INVALID_ENVELOPE, of a project that does not exist
 * PROJECT_NOT_FOUND, while the valid ones sent among them - for B and for the default project - all
 * complete in their project.
 */
jest.setTimeout(180_000);

interface Team {
  readonly keys: ProjectKeys;
  readonly project: string;
  readonly tag: string;
  readonly caseIds: readonly string[];
  readonly subject: string;
  readonly runs: { base: string; cand: string; pinned: string };
  /** Passing outputs of the base run, the candidate and the run after the pin. */
  readonly passing: { base: number; cand: number; pinned: number; gate: number };
}

describe('e2e: issue 30 - two projects on the same suite keys at once, each with its own results, verdicts and bus subjects', () => {
  let pc: ProjectsCluster;
  let nc: NatsConnection;
  let js: JetStreamClient;
  let jsm: JetStreamManager;
  const sfx = uniqueSuffix().slice(0, 8);
  const suiteKey = `team-suite-${sfx}`;
  const teams: Record<'a' | 'b', Team> = {} as Record<'a' | 'b', Team>;
  const outcome: Record<'a' | 'b', { cand: any; pinned: any; gate: any }> = {} as Record<'a' | 'b', { cand: any; pinned: any; gate: any }>;
  const subject = (s: string) => `${pc.subjectPrefix}.${s}`;

  beforeAll(async () => {
    pc = await startProjectsCluster('e2pt');
    nc = await connect({ servers: testServers.nats.url });
    js = jetstream(nc);
    jsm = await jetstreamManager(nc, { timeout: 20_000 });
    for (const [name, n, passing] of [
      ['a', 8, { base: 8, cand: 2, pinned: 8, gate: 8 }],
      ['b', 12, { base: 12, cand: 3, pinned: 12, gate: 4 }],
    ] as const) {
      const project = `team-${name}-${sfx}`;
      const tag = `t${name}${uniqueSuffix().slice(0, 8)}`;
      teams[name] = {
        keys: await createProjectWithKeys(pc, project),
        project,
        tag,
        caseIds: Array.from({ length: n }, (_, i) => `case-${tag}-${i}`),
        subject: `bot-${tag}`,
        runs: { base: `base-${tag}`, cand: `cand-${tag}`, pinned: `pinned-${tag}` },
        passing,
      };
    }
  }, 240_000);

  afterAll(async () => {
    await nc?.close();
    await pc?.stop();
  });

  /** Every message on the outbound stream whose subject matches `filter`, read by a consumer of that filter. */
  async function outbound(filter: string): Promise<Array<{ subject: string; body: any }>> {
    const stream = `${pc.streamPrefix}EVALS_OUTBOUND`;
    const name = `probe_${uniqueSuffix()}`;
    await jsm.consumers.add(stream, { name, ack_policy: AckPolicy.None, deliver_policy: DeliverPolicy.All, filter_subject: subject(filter), inactive_threshold: 60_000_000_000 });
    try {
      const consumer = await js.consumers.get(stream, name);
      const out: Array<{ subject: string; body: any }> = [];
      const pending = (await consumer.info()).num_pending;
      if (pending === 0) return out;
      const msgs = await consumer.fetch({ max_messages: 1000, expires: 2000 });
      for await (const m of msgs) {
        out.push({ subject: m.subject, body: m.json() });
        if (m.info.pending === 0) break;
      }
      return out;
    } finally {
      await jsm.consumers.delete(stream, name).catch(() => undefined);
    }
  }

  async function play(team: Team): Promise<{ cand: any; pinned: any; gate: any }> {
    const { keys } = team;
    const call = (app: 'ingestion' | 'regression' | 'read-model', method: string, path: string, key: string, body?: unknown) => pc.call(app, method, path, { key, ...(body !== undefined ? { body } : {}) });
    expectStatus(await call('ingestion', 'POST', '/v1/suites', keys.operator, exactSuite(suiteKey, team.caseIds, team.tag)), 201, `${team.project} pushes`);
    const run = async (runId: string, passing: number) => {
      const r = await call('ingestion', 'POST', '/v1/runs', keys.operator, { run_id: runId, suite_key: suiteKey, subject_kind: 'agent', subject_id: team.subject, outputs: outputsFor(team.caseIds, passing) });
      expectStatus(r, 200, `${team.project} runs ${runId}`);
      await untilProjected(async () => {
        const v = await call('read-model', 'GET', `/v1/runs/${runId}`, keys.viewer);
        return v.status === 200 ? v.json : null;
      }, `${team.project} ${runId}`);
      return r.json;
    };
    const base = await run(team.runs.base, team.passing.base);
    expect([team.project, base.regression.verdict]).toEqual([team.project, 'no_baseline']);
    const cand = await run(team.runs.cand, team.passing.cand);
    const pin = await call('regression', 'POST', '/v1/baselines', keys.operator, { suite_key: suiteKey, subject_kind: 'agent', subject_id: team.subject, run_id: team.runs.base });
    expectStatus(pin, 201, `${team.project} pins`);
    const pinned = await run(team.runs.pinned, team.passing.pinned);
    // The gate on a subject of its own, so the scorecard of the team's subject holds its three runs.
    const gate = await call('ingestion', 'POST', '/v1/gate', keys.operator, { suite_key: suiteKey, subject_kind: 'agent', subject_id: `${team.subject}-gate`, outputs: outputsFor(team.caseIds, team.passing.gate) });
    expectStatus(gate, 200, `${team.project} gates`);
    return { cand, pinned, gate: gate.json };
  }

  it('both projects push the same suite key with their own cases, run, compare and gate at once; each answer is its own', async () => {
    const [ra, rb] = await Promise.all([play(teams.a), play(teams.b)]);
    outcome.a = ra;
    outcome.b = rb;
    for (const name of ['a', 'b'] as const) {
      const t = teams[name];
      const o = outcome[name];
      // Each project's suite is its own version 1, with its own cases.
      expect([t.project, o.cand.run.suite_version, o.cand.run.case_count, o.cand.run.passed]).toEqual([t.project, 1, t.caseIds.length, t.passing.cand]);
      // The automatic baseline, then the pinned one, are the project's own runs.
      expect([t.project, o.cand.regression.verdict, o.cand.regression.baseline_run_id, o.cand.regression.comparison.baseline.n]).toEqual([t.project, 'regressed', t.runs.base, t.caseIds.length]);
      expect([t.project, o.pinned.regression.chosen_by, o.pinned.regression.baseline_run_id]).toEqual([t.project, 'pinned', t.runs.base]);
    }
    // Same suite key, opposite gate verdicts: A passes with all 8 of its cases, B fails with 4 of its 12.
    expect([outcome.a.gate.recorded_verdict, outcome.a.gate.run.n, outcome.b.gate.recorded_verdict, outcome.b.gate.run.n]).toEqual(['pass', 8, 'fail', 12]);
  });

  it("each project reads only its own suite, runs, findings, baselines, gates and scorecards of the shared key", async () => {
    for (const [me, other] of [['a', 'b'], ['b', 'a']] as const) {
      const t = teams[me];
      const o = teams[other];
      const read = async (app: 'ingestion' | 'regression' | 'read-model', path: string) => {
        const r = await pc.call(app, 'GET', path, { key: t.keys.viewer });
        expectStatus(r, 200, `${t.project} GET ${path}`);
        expect([path, r.text.includes(o.tag)]).toEqual([path, false]);
        return r.json;
      };
      const suite = await read('ingestion', `/v1/suites/${suiteKey}`);
      expect(suite.suite.cases.map((c: { case_id: string }) => c.case_id)).toEqual(t.caseIds);
      const findings = await read('regression', `/v1/findings?suite_key=${suiteKey}`);
      expect(findings.findings.map((f: { run_id: string }) => f.run_id)).toEqual([t.runs.cand]);
      const pins = await read('regression', `/v1/baselines?suite_key=${suiteKey}`);
      expect(pins.pins.map((p: { run_id: string; subject_id: string }) => [p.subject_id, p.run_id])).toEqual([[t.subject, t.runs.base]]);
      const cards = await read('read-model', `/v1/scorecards?suite_key=${suiteKey}`);
      // The team's subject (and its gate's subject, when the gate's run is carded): this project's subjects only.
      expect(cards.scorecards.every((c: { subject_id: string }) => c.subject_id.startsWith(t.subject))).toBe(true);
      const card = cards.scorecards.find((c: { subject_id: string }) => c.subject_id === t.subject);
      expect([card?.runs, card?.latest_run_id, card?.latest_pass_rate?.n]).toEqual([3, t.runs.pinned, t.caseIds.length]);
      const gate = await read('ingestion', `/v1/gate/${outcome[me].gate.gate_id}`);
      expect(gate.recorded_verdict).toBe(outcome[me].gate.recorded_verdict);
      const list = await read('read-model', '/v1/run-list?limit=200');
      expect(JSON.stringify(list).includes(t.runs.cand)).toBe(true);
      // The other project's run and gate: as missing.
      for (const [app, path, code] of [
        ['read-model', `/v1/runs/${o.runs.cand}`, 'RUN_NOT_FOUND'],
        ['regression', `/v1/findings/${o.runs.cand}`, 'FINDING_NOT_FOUND'],
        ['ingestion', `/v1/gate/${outcome[other].gate.gate_id}`, 'GATE_NOT_FOUND'],
      ] as const) {
        const r = await pc.call(app, 'GET', path, { key: t.keys.viewer });
        expect([path, r.status, r.json?.code]).toEqual([path, 404, code]);
      }
    }
  });

  it('a consumer of finding.reported.<b> / evals.result.recorded.<b> sees only B\'s messages; the bare subjects (default) see neither', async () => {
    const runsOf = (t: Team) => [t.runs.base, t.runs.cand, t.runs.pinned];
    for (const [me, other] of [['b', 'a'], ['a', 'b']] as const) {
      const t = teams[me];
      const results = await eventually(async () => {
        const got = await outbound(`evals.result.recorded.${t.project}`);
        return got.length >= 3 ? got : undefined;
      }, 30_000, `evals.result.recorded.${t.project}`);
      // The three runs (and the gate's), all of this project, none of the other.
      expect(results.every((m) => m.subject === subject(`evals.result.recorded.${t.project}`) && m.body.metadata?.project === t.project)).toBe(true);
      expect(results.map((m) => m.body.data.run_id)).toEqual(expect.arrayContaining(runsOf(t)));
      expect(results.filter((m) => JSON.stringify(m.body).includes(teams[other].tag))).toEqual([]);
      const findings = await eventually(async () => {
        const got = await outbound(`finding.reported.${t.project}`);
        return got.length >= 1 ? got : undefined;
      }, 30_000, `finding.reported.${t.project}`);
      expect(findings.map((m) => [m.subject, m.body.metadata?.project, m.body.data.run_id])).toEqual([[subject(`finding.reported.${t.project}`), t.project, t.runs.cand]]);
    }
    // A consumer of every project sees both; one of the bare subjects - the default project's - neither.
    const all = await outbound('evals.result.>');
    for (const t of [teams.a, teams.b]) expect(all.map((m) => m.body.data.run_id)).toEqual(expect.arrayContaining(runsOf(t)));
    const bare = [...(await outbound('evals.result.recorded')), ...(await outbound('finding.reported'))];
    expect(bare.filter((m) => [teams.a.tag, teams.b.tag].some((tag) => JSON.stringify(m.body).includes(tag)))).toEqual([]);
  });

  it('inbound messages with a malformed metadata.project: INVALID_ENVELOPE, an unknown project: PROJECT_NOT_FOUND; the valid ones among them all complete in their project', async () => {
    const b = teams.b;
    const envelope = (type: string, data: unknown, project: unknown) => {
      const id = randomUUID();
      return { schema: `${type}.v1`, type, version: 1, data, metadata: { message_id: id, correlation_id: id, causation_id: id, occurred_at: new Date().toISOString(), ...(project === undefined ? {} : { project }) } };
    };
    const malformed: unknown[] = ['x'.repeat(64), 'Team-B', b.project.toUpperCase(), '..', 'a:b', `${b.project}:x`, 'ünï', 'tëam', '', ' ', 'a.b', '-lead', 'a/b', 'a b', 42, null, ['team'], { id: b.project }];
    const unknown = [`no-such-${sfx}`, `team-z-${sfx}`];
    const dead = async () => (await pc.ds.query(`SELECT code, count(*)::int AS n FROM dead_letters WHERE subject = 'evals.run.requested' GROUP BY code`)) as Array<{ code: string; n: number }>;
    const before = Object.fromEntries((await dead()).map((r) => [r.code, r.n]));
    const valid: Array<{ runId: string; project: string | undefined }> = [];
    const pushed = await pc.call('ingestion', 'POST', '/v1/suites', { key: pc.platformKey, body: exactSuite(`default-${suiteKey}`, ['d0', 'd1'], 'default') });
    expectStatus(pushed, 201, 'the default suite');
    let i = 0;
    // Interleaved: a valid run for B, or the default project, after every refused one.
    for (const project of [...malformed, ...unknown]) {
      const runId = `bus-${b.tag}-${i++}`;
      const bad = envelope('evals.run.requested', { run_id: `refused-${runId}`, suite_key: suiteKey, subject_kind: 'agent', subject_id: b.subject, source: 'ci', outputs: outputsFor(b.caseIds, 12) }, project);
      await js.publish(subject('evals.run.requested'), JSON.stringify(bad), { msgID: bad.metadata.message_id });
      const forB = i % 2 === 0;
      const ok = envelope('evals.run.requested', { run_id: runId, suite_key: suiteKey, subject_kind: 'agent', subject_id: b.subject, source: 'ci', outputs: outputsFor(b.caseIds, 12) }, forB ? b.project : undefined);
      // The default project has no suite of this key: its valid runs use one pushed there first.
      if (!forB) ok.data = { ...(ok.data as object), suite_key: `default-${suiteKey}`, outputs: outputsFor(['d0', 'd1'], 2) } as typeof ok.data;
      await js.publish(subject('evals.run.requested'), JSON.stringify(ok), { msgID: ok.metadata.message_id });
      valid.push({ runId, project: forB ? b.project : undefined });
    }
    // Until every refused message is dead-lettered (or 30 s): then the counts by code, whatever they are.
    let counts: Record<string, number> = {};
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
      counts = Object.fromEntries((await dead()).map((r) => [r.code, r.n - (before[r.code] ?? 0)]).filter(([, n]) => (n as number) > 0));
      if (Object.values(counts).reduce((x, y) => x + y, 0) >= malformed.length + unknown.length) break;
    }
    expect(counts).toEqual({ INVALID_ENVELOPE: malformed.length, PROJECT_NOT_FOUND: unknown.length });
    // Every valid message completed, in its project only.
    for (const v of valid) {
      const keys = v.project ? { key: b.keys.viewer } : { key: pc.platformKey };
      const run = await eventually(async () => {
        const r = await pc.call('read-model', 'GET', `/v1/runs/${v.runId}`, keys);
        return r.status === 200 && r.json.run.status === 'completed' ? r.json : undefined;
      }, 60_000, `run ${v.runId}`);
      expect([v.runId, run.run.suite_key]).toEqual([v.runId, v.project ? suiteKey : `default-${suiteKey}`]);
      const elsewhere = await pc.call('read-model', 'GET', `/v1/runs/${v.runId}`, v.project ? { key: pc.platformKey } : { key: b.keys.viewer });
      expect([v.runId, elsewhere.status]).toEqual([v.runId, 404]);
    }
    // No refused message opened a run anywhere.
    for (const project of [b.project, undefined]) {
      const list = await pc.call('read-model', 'GET', '/v1/run-list?limit=200', { key: pc.platformKey, ...(project ? { project } : {}) });
      expect(list.text.includes('refused-bus-')).toBe(false);
    }
    // Every app is still up.
    for (const app of ['ingestion', 'scoring-worker', 'read-model', 'regression'] as const) expect((await pc.call(app, 'GET', '/health')).status).toBe(200);
  }, 180_000);
});
