import type { AppName } from '../support/app-processes';
import { eventually } from '../support/app-processes';
import { uniqueSuffix } from '../support/isolation';
import {
  createProjectWithKeys,
  expectStatus,
  FOUR_APPS,
  JUDGE_MODEL,
  leaked,
  outputsFor,
  seedProject,
  sha256,
  startProjectsCluster,
  TIERS,
  type ProjectKeys,
  type ProjectsCluster,
  type Reply,
  type SeededProject,
} from '../support/projects';

/**
 * Issue 30, the canary: project A's finding id, run ids, suite keys, case ids, tags, subject, rubric hash,
 * calibration set and report, comparison and gate ids - every one a unique canary string - appear in no
 * answer, no dashboard page (HTML or JSON) and no event stream (replayed while A's run streams) fetched with project B's
 * keys, at any tier, nor with the platform key acting in B. Every GET route the apps document is fetched
 * (a route without a URL below fails the test), on B's objects, on A's, and with the filters that name the
 * suite key both projects use.
 */
jest.setTimeout(180_000);

describe("e2e: issue 30 - project A's canaries in no answer, page or stream of project B's keys", () => {
  let pc: ProjectsCluster;
  let a: ProjectKeys;
  let b: ProjectKeys;
  let seedA: SeededProject;
  let seedB: SeededProject;
  const sfx = uniqueSuffix().slice(0, 8);
  const projA = `canary-a-${sfx}`;
  const projB = `canary-b-${sfx}`;
  const tagA = `ka${uniqueSuffix().slice(0, 8)}`;
  const tagB = `kb${uniqueSuffix().slice(0, 8)}`;
  const shared = `canary-shared-${sfx}`;
  const documented: string[] = [];
  /** Every answer B's keys got: where, and its text. */
  const answers: Array<{ at: string; reply: Reply }> = [];

  beforeAll(async () => {
    pc = await startProjectsCluster('e2pc');
    a = await createProjectWithKeys(pc, projA);
    b = await createProjectWithKeys(pc, projB);
    seedA = await seedProject(pc, a, tagA, shared);
    seedB = await seedProject(pc, b, tagB, shared);
    for (const app of FOUR_APPS) {
      const doc = await pc.call(app, 'GET', '/openapi.json');
      if (doc.status !== 200) continue;
      for (const [p, ops] of Object.entries(doc.json.paths as Record<string, Record<string, unknown>>)) if ('get' in ops) documented.push(`${app} ${p}`);
    }
  }, 480_000);

  afterAll(async () => {
    await pc?.stop();
  });

  const canaries = () => [...seedA.canaries, projA];

  /** The GET URLs B's keys fetch: B's own objects, A's, and filters naming the shared suite key. */
  function urls(): Array<[AppName, string]> {
    const objects = (s: SeededProject): Array<[AppName, string]> => [
      ['ingestion', `/v1/projects/${s.project}`],
      ['ingestion', `/v1/suites/${s.ownSuite}`],
      ['ingestion', `/v1/suites/${s.ownSuite}/versions/1`],
      ['ingestion', `/v1/gate/${s.gateId}`],
      ['read-model', `/v1/runs/${s.candRunId}?include=cases`],
      ['read-model', `/v1/runs/${s.baseRunId}`],
      ['read-model', `/v1/runs/${s.candRunId}/cases?limit=500`],
      ['read-model', `/v1/runs/${s.candRunId}/events`],
      ['read-model', `/dashboard/upstream/ingestion/v1/gate/${s.gateId}`],
      ['read-model', `/dashboard/upstream/regression/v1/findings/${s.candRunId}`],
      ['read-model', `/runs/${s.candRunId}`],
      ['read-model', `/gates/${s.gateId}`],
      ['regression', `/v1/findings/${s.candRunId}`],
      ['regression', `/v1/comparisons/${s.comparisonId}`],
      ['regression', `/v1/calibration-sets/${s.setId}`],
      ['regression', `/v1/calibrations/${s.reportId}`],
      ['regression', `/v1/judges/status?model=${JUDGE_MODEL}&scope=rubric:${sha256(s.rubric)}`],
    ];
    return [
      ...objects(seedB),
      ...objects(seedA),
      ['ingestion', '/v1/projects'],
      ['ingestion', '/v1/keys'],
      ['ingestion', '/v1/suites?limit=500'],
      ['ingestion', `/v1/suites/${shared}`],
      ['ingestion', `/v1/suites/${shared}/versions/1`],
      ['ingestion', '/v1/gates'],
      ['ingestion', `/v1/gates?suite_key=${shared}`],
      ['ingestion', '/v1/budgets'],
      ['read-model', '/v1/run-list?limit=200'],
      ['read-model', `/v1/run-list?suite_key=${shared}`],
      ['read-model', '/v1/scorecards'],
      ['read-model', `/v1/scorecards?suite_key=${shared}`],
      ['read-model', `/v1/scorecards?suite_key=${shared}&format=csv`],
      ['read-model', `/v1/runs/${seedB.sharedRunId}?include=cases`],
      ['read-model', '/v1/whoami'],
      ['read-model', '/dashboard/upstream/ingestion/v1/gates'],
      ['read-model', '/dashboard/upstream/regression/v1/findings'],
      ['read-model', '/dashboard/upstream/regression/v1/judges'],
      ...['/', '/runs', '/scorecards', '/findings', '/gates', '/judges', '/dashboard/config.json'].map((p): [AppName, string] => ['read-model', p]),
      ['regression', '/v1/baselines'],
      ['regression', `/v1/baselines?suite_key=${shared}`],
      ['regression', '/v1/findings'],
      ['regression', `/v1/findings?suite_key=${shared}`],
      ['regression', '/v1/judges'],
      ['regression', `/v1/judges/status?model=${JUDGE_MODEL}`],
      ['regression', `/v1/judges/status?model=${JUDGE_MODEL}&scope=suite:${shared}`],
      ...FOUR_APPS.flatMap((app): Array<[AppName, string]> => [
        [app, '/health'],
        [app, '/metrics'],
      ]),
    ];
  }

  it('seeds one object of every kind in each project', () => {
    expect([...seedA.problems, ...seedB.problems]).toEqual([]);
  });

  it('every GET route the apps document has a URL in the canary sweep', () => {
    expect(documented.length).toBeGreaterThan(20);
    const pattern = (route: string) => new RegExp(`^${route.replace(/\{[a-z_]+\}/g, '[^/?]+')}(\\?.*)?$`);
    const covered = (route: string) => {
      const [app, p] = route.split(' ') as [AppName, string];
      return urls().some(([u, path]) => u === app && pattern(p).test(path));
    };
    const skipped = documented.filter((r) => !/ \/(openapi\.json|docs|asyncapi\.json)$/.test(r) && !covered(r));
    expect(skipped).toEqual([]);
  });

  it("no answer of B's keys (each tier) or of the platform key in B holds any of A's canaries", async () => {
    const callers: Array<[string, { key: string; project?: string }]> = [...TIERS.map((t): [string, { key: string }] => [`B ${t}`, { key: b[t] }]), ['platform in B', { key: pc.platformKey, project: projB }]];
    for (const [who, as] of callers) {
      for (const [app, path] of urls()) {
        // Projects and keys are a platform key's to manage across projects, whichever it acts in (ADR 0009).
        if (who.startsWith('platform') && (path === '/v1/projects' || path === '/v1/keys' || path.startsWith('/v1/projects/'))) continue;
        const reply = await pc.call(app, 'GET', path, { ...as, streamMs: 2_000 });
        answers.push({ at: `${who}: ${app} GET ${path}`, reply });
      }
    }
    const sentByCaller = (at: string) => canaries().filter((c) => at.includes(c));
    const leaks = answers.flatMap(({ at, reply }) => {
      const found = leaked(reply.text, canaries()).filter((c) => !sentByCaller(at).includes(c));
      return found.length > 0 ? [`${at} (${reply.status}): ${found.join(', ')}`] : [];
    });
    expect(leaks).toEqual([]);
    // Not vacuous: B's own objects were read (its run, its finding, its shared suite), and A's answered 404.
    const status = (fragment: string) => answers.find((x) => x.at === `B viewer: ${fragment}`)?.reply.status;
    expect([
      status(`read-model GET /v1/runs/${seedB.candRunId}?include=cases`),
      status(`regression GET /v1/findings/${seedB.candRunId}`),
      status(`ingestion GET /v1/suites/${shared}`),
      status(`read-model GET /v1/runs/${seedA.candRunId}?include=cases`),
      status(`regression GET /v1/findings/${seedA.candRunId}`),
      status(`read-model GET /v1/runs/${seedA.candRunId}/events`),
    ]).toEqual([200, 200, 200, 404, 404, 404]);
    const ownRun = answers.find((x) => x.at === `B viewer: read-model GET /v1/runs/${seedB.candRunId}/events`)!.reply;
    expect(ownRun.text).toContain(seedB.caseIds[0]);
  });

  it("A's keys do see their canaries on the same URLs (the sweep would find a leak)", async () => {
    const seen = new Set<string>();
    for (const [app, path] of urls()) {
      const reply = await pc.call(app, 'GET', path, { key: a.admin, streamMs: 2_000 });
      for (const c of leaked(reply.text, canaries())) seen.add(c);
    }
    const must = [tagA, seedA.gateId, seedA.findingId, seedA.setId, sha256(seedA.rubric), projA];
    expect(must.filter((c) => !seen.has(c))).toEqual([]);
  });

  it("B's event stream of a run on the shared suite key, read while A's run on it streams and seals, carries none of A's cases", async () => {
    const runB = `stream-${tagB}`;
    const runA = `stream-${tagA}`;
    const open = (keys: ProjectKeys, runId: string, s: SeededProject) =>
      pc.call('ingestion', 'POST', '/v1/streamed-runs', { key: keys.operator, body: { run_id: runId, suite_key: shared, subject_kind: 'agent', subject_id: s.subjectId } });
    expectStatus(await open(b, runB, seedB), 200, 'B opens');
    expectStatus(await open(a, runA, seedA), 200, 'A opens');
    const send = async (keys: ProjectKeys, runId: string, s: SeededProject, tag: string) => {
      for (const ids of [s.sharedCaseIds.slice(0, 3), s.sharedCaseIds.slice(3)]) {
        expectStatus(await pc.call('ingestion', 'POST', `/v1/streamed-runs/${runId}/outputs`, { key: keys.operator, body: { outputs: outputsFor(ids, 2, tag) } }), [200, 202]);
      }
      expectStatus(await pc.call('ingestion', 'POST', `/v1/streamed-runs/${runId}/seal`, { key: keys.operator, body: {} }), [200, 202]);
    };
    // B replays its stream (R6: the frames so far, then the end) over and over while both projects send and seal.
    const seen: string[] = [];
    let sending = true;
    const reading = (async () => {
      while (sending) {
        const r = await pc.call('read-model', 'GET', `/v1/runs/${runB}/events`, { key: b.viewer, streamMs: 2_000 });
        seen.push(r.text);
      }
    })();
    await Promise.all([send(a, runA, seedA, tagA), send(b, runB, seedB, tagB)]);
    const done = await eventually(async () => {
      const r = await pc.call('read-model', 'GET', `/v1/runs/${runB}/events`, { key: b.viewer, streamMs: 2_000 });
      return r.text.includes('"status":"completed"') ? r : undefined;
    }, 30_000, "B's run completed in its stream");
    sending = false;
    await reading;
    seen.push(done.text);
    expect(seen.length).toBeGreaterThan(1);
    expect(seen.flatMap((text) => leaked(text, [...canaries(), runA]))).toEqual([]);
    // B's stream holds B's cases: one frame each, then the summary.
    expect(seedB.sharedCaseIds.filter((id) => !done.text.includes(`"case_id":"${id}"`))).toEqual([]);
    // A's stream is refused to B like any run B does not have.
    const refused = await pc.call('read-model', 'GET', `/v1/runs/${runA}/events`, { key: b.viewer, streamMs: 2_000 });
    expect([refused.status, refused.json?.code]).toEqual([404, 'RUN_NOT_FOUND']);
  });
});
