import * as fs from 'node:fs';
import { randomBytes, randomUUID } from 'node:crypto';
import type { ApiKeyTier } from '@evals/persistence';
import type { AppName, AppProcess } from '../support/app-processes';
import { uniqueSuffix } from '../support/isolation';
import {
  createProjectWithKeys,
  exactSuite,
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
 * Issue 30, the authorization matrix (docs/adr/0009-projects.md): every route of the four apps - enumerated
 * from their OpenAPI documents and from the routes they map at boot, so a new route without a row below
 * fails this test - called with the keys of project B at each tier against project A's objects, one of
 * every kind (suite, run, streamed run, gate and its override, baseline pin, finding, scorecard,
 * calibration set and report, comparison, budget, key, the project itself). B's answer is exactly the
 * answer for an object that does not exist (404, never 403, never A's data; a list answers 200 without any
 * of A's objects); A's keys of the route's tier get past it (never 404); the platform key reaches A's
 * objects with `X-Evals-Project: A` and not with B or without the header; a project key naming another
 * project in `X-Evals-Project` answers 404 PROJECT_NOT_FOUND, as for a project that does not exist.
 */
jest.setTimeout(180_000);

type Tier = ApiKeyTier;
interface Req {
  readonly path: string;
  readonly body?: unknown;
}
/**
 * - `object`: names one of A's objects; B gets the 404 a missing object gets.
 * - `list`: B gets 200 with none of A's objects; A's answer shows `shows(A)`.
 * - `probe`: answers 200 for anything asked (the judge status of a scope): B's answer is the answer for a scope nobody measured.
 * - `platform`: project management, platform keys only (POST /v1/projects).
 * - `own-write`: B's write with A's names makes B's own object (checked on its own, last).
 * - `public`: no key needed, and no data: B's key reads none of A's.
 */
type Kind = 'object' | 'list' | 'probe' | 'platform' | 'own-write' | 'public';
interface Row {
  readonly kind: Kind;
  readonly tier: Tier;
  readonly req: (s: SeededProject, p: Peers) => Req;
  /** For `list`: strings A's answer must show (its objects are there), so the list is not vacuously clean. */
  readonly shows?: (s: SeededProject, p: Peers) => string[];
}
/** What the rows need besides A's seed: the projects and key ids. */
interface Peers {
  readonly a: ProjectKeys;
  readonly b: ProjectKeys;
  readonly spareKeyId: string;
}

const get = (path: (s: SeededProject, p: Peers) => string) => (s: SeededProject, p: Peers): Req => ({ path: path(s, p) });
const post = (path: (s: SeededProject, p: Peers) => string, body: (s: SeededProject, p: Peers) => unknown) => (s: SeededProject, p: Peers): Req => ({ path: path(s, p), body: body(s, p) });
const none = get(() => '/');

const runBody = (s: SeededProject) => ({ run_id: `matrix-run-${s.canaries[0]}`, suite_key: s.ownSuite, subject_kind: 'agent', subject_id: s.subjectId, outputs: outputsFor(s.caseIds, 8) });
const gateBody = (s: SeededProject) => ({ suite_key: s.ownSuite, subject_kind: 'agent', subject_id: s.subjectId, outputs: outputsFor(s.caseIds, 9) });
const overrideBody = () => ({ reason: 'the matrix asks for an override of this gate' });

/** One row per route: `app METHOD /path/{param}` (OpenAPI's form). */
const MATRIX: Record<string, Row> = {
  // ingestion
  'ingestion POST /v1/projects': { kind: 'platform', tier: 'admin', req: post(() => '/v1/projects', (_s, p) => ({ id: `matrix-${p.b.project}`.slice(0, 60), name: 'made by a project key' })) },
  'ingestion GET /v1/projects': { kind: 'list', tier: 'viewer', req: get(() => '/v1/projects'), shows: (s) => [s.project] },
  'ingestion GET /v1/projects/{id}': { kind: 'object', tier: 'viewer', req: get((s) => `/v1/projects/${s.project}`) },
  'ingestion POST /v1/keys': { kind: 'object', tier: 'admin', req: post(() => '/v1/keys', (s) => ({ name: 'matrix-key', tier: 'viewer', project: s.project })) },
  'ingestion GET /v1/keys': { kind: 'list', tier: 'admin', req: get(() => '/v1/keys'), shows: (_s, p) => Object.values(p.a.ids) },
  'ingestion DELETE /v1/keys/{id}': { kind: 'object', tier: 'admin', req: get((_s, p) => `/v1/keys/${p.spareKeyId}`) },
  'ingestion POST /v1/suites': { kind: 'own-write', tier: 'operator', req: none },
  'ingestion GET /v1/suites': { kind: 'list', tier: 'viewer', req: get(() => '/v1/suites?limit=500'), shows: (s) => [s.ownSuite] },
  'ingestion GET /v1/suites/{key}': { kind: 'object', tier: 'viewer', req: get((s) => `/v1/suites/${s.ownSuite}`) },
  'ingestion GET /v1/suites/{key}/versions/{version}': { kind: 'object', tier: 'viewer', req: get((s) => `/v1/suites/${s.ownSuite}/versions/1`) },
  'ingestion POST /v1/runs': { kind: 'object', tier: 'operator', req: post(() => '/v1/runs', runBody) },
  'ingestion POST /v1/streamed-runs': { kind: 'object', tier: 'operator', req: post(() => '/v1/streamed-runs', (s) => ({ run_id: `matrix-streamed-${s.canaries[0]}`, suite_key: s.ownSuite, subject_kind: 'agent', subject_id: s.subjectId })) },
  'ingestion POST /v1/streamed-runs/{run_id}/outputs': { kind: 'object', tier: 'operator', req: post((s) => `/v1/streamed-runs/${s.streamedRunId}/outputs`, (s) => ({ outputs: outputsFor(s.caseIds.slice(0, 2), 2) })) },
  'ingestion POST /v1/streamed-runs/{run_id}/seal': { kind: 'object', tier: 'operator', req: post((s) => `/v1/streamed-runs/${s.streamedRunId}/seal`, () => ({})) },
  'ingestion POST /v1/gate': { kind: 'object', tier: 'operator', req: post(() => '/v1/gate', gateBody) },
  'ingestion GET /v1/gate/{id}': { kind: 'object', tier: 'viewer', req: get((s) => `/v1/gate/${s.gateId}`) },
  'ingestion POST /v1/gate/{id}/override': { kind: 'object', tier: 'admin', req: post((s) => `/v1/gate/${s.gateId}/override`, overrideBody) },
  'ingestion GET /v1/gates': { kind: 'list', tier: 'viewer', req: get(() => '/v1/gates'), shows: (s) => [s.gateId] },
  'ingestion GET /v1/budgets': { kind: 'list', tier: 'viewer', req: get(() => '/v1/budgets'), shows: (s) => [s.budgetScope] },
  // read model
  'read-model GET /v1/runs/{id}': { kind: 'object', tier: 'viewer', req: get((s) => `/v1/runs/${s.candRunId}?include=cases`) },
  'read-model GET /v1/runs/{id}/events': { kind: 'object', tier: 'viewer', req: get((s) => `/v1/runs/${s.candRunId}/events`) },
  'read-model GET /v1/runs/{id}/cases': { kind: 'object', tier: 'viewer', req: get((s) => `/v1/runs/${s.candRunId}/cases`) },
  'read-model GET /v1/scorecards': { kind: 'list', tier: 'viewer', req: get(() => '/v1/scorecards'), shows: (s) => [s.subjectId, s.ownSuite] },
  'read-model GET /v1/run-list': { kind: 'list', tier: 'viewer', req: get(() => '/v1/run-list?limit=200'), shows: (s) => [s.candRunId, s.baseRunId] },
  'read-model GET /v1/whoami': { kind: 'list', tier: 'viewer', req: get(() => '/v1/whoami') },
  'read-model GET /dashboard/upstream/ingestion/v1/gates': { kind: 'list', tier: 'viewer', req: get(() => '/dashboard/upstream/ingestion/v1/gates'), shows: (s) => [s.gateId] },
  'read-model GET /dashboard/upstream/ingestion/v1/gate/{id}': { kind: 'object', tier: 'viewer', req: get((s) => `/dashboard/upstream/ingestion/v1/gate/${s.gateId}`) },
  'read-model POST /dashboard/upstream/ingestion/v1/gate/{id}/override': { kind: 'object', tier: 'admin', req: post((s) => `/dashboard/upstream/ingestion/v1/gate/${s.gateId}/override`, overrideBody) },
  'read-model GET /dashboard/upstream/regression/v1/findings': { kind: 'list', tier: 'viewer', req: get(() => '/dashboard/upstream/regression/v1/findings'), shows: (s) => [s.findingId] },
  'read-model GET /dashboard/upstream/regression/v1/findings/{id}': { kind: 'object', tier: 'viewer', req: get((s) => `/dashboard/upstream/regression/v1/findings/${s.candRunId}`) },
  'read-model GET /dashboard/upstream/regression/v1/judges': { kind: 'list', tier: 'viewer', req: get(() => '/dashboard/upstream/regression/v1/judges'), shows: (s) => [sha256(s.rubric)] },
  // regression
  'regression POST /v1/baselines': { kind: 'object', tier: 'operator', req: post(() => '/v1/baselines', (s) => ({ suite_key: s.ownSuite, subject_kind: 'agent', subject_id: s.subjectId, run_id: s.baseRunId })) },
  'regression GET /v1/baselines': { kind: 'list', tier: 'viewer', req: get(() => '/v1/baselines'), shows: (s) => [s.baseRunId] },
  'regression GET /v1/findings': { kind: 'list', tier: 'viewer', req: get(() => '/v1/findings'), shows: (s) => [s.findingId, s.candRunId] },
  'regression GET /v1/findings/{id}': { kind: 'object', tier: 'viewer', req: get((s) => `/v1/findings/${s.candRunId}`) },
  'regression POST /v1/comparisons': {
    kind: 'object',
    tier: 'operator',
    req: post(() => '/v1/comparisons', (s) => ({ run_a: s.baseRunId, run_b: s.candRunId, outputs_a: outputsFor(s.caseIds.slice(0, 2), 2), outputs_b: outputsFor(s.caseIds.slice(0, 2), 1), rubric: s.rubric })),
  },
  'regression GET /v1/comparisons/{id}': { kind: 'object', tier: 'viewer', req: get((s) => `/v1/comparisons/${s.comparisonId}`) },
  'regression POST /v1/calibration-sets': {
    kind: 'object',
    tier: 'operator',
    req: post(() => '/v1/calibration-sets', (s) => ({ name: 'matrix-set', suite_key: s.ownSuite, rubric: s.rubric, items: [{ item_id: 'm1', case_id: s.caseIds[0], output_hash: sha256('x'), human_verdict: 'pass', output_chars: 1 }] })),
  },
  'regression GET /v1/calibration-sets/{id}': { kind: 'object', tier: 'viewer', req: get((s) => `/v1/calibration-sets/${s.setId}`) },
  'regression POST /v1/calibrations': { kind: 'object', tier: 'operator', req: post(() => '/v1/calibrations', (s) => ({ set_id: s.setId, outputs: [{ item_id: `item-${s.canaries[0]}-0`, output: 'x' }] })) },
  'regression GET /v1/calibrations/{id}': { kind: 'object', tier: 'viewer', req: get((s) => `/v1/calibrations/${s.reportId}`) },
  'regression GET /v1/judges/status': { kind: 'probe', tier: 'viewer', req: get((s) => `/v1/judges/status?model=${JUDGE_MODEL}&scope=rubric:${sha256(s.rubric)}`) },
  'regression GET /v1/judges': { kind: 'list', tier: 'viewer', req: get(() => '/v1/judges'), shows: (s) => [sha256(s.rubric)] },
};
/** Served by every app, or the dashboard's shell and files: public, and holding no evaluation data. */
const PUBLIC_PATHS = ['/health', '/metrics', '/openapi.json', '/docs', '/asyncapi.json', '/docs-json'];
const DASHBOARD_SHELL = /^\/(|runs|runs\/\{id\}|scorecards|findings|gates|gates\/\{id\}|judges|dashboard\/(?!upstream\/)[a-z./-]+)$/;

const TIER_RANK: Record<Tier, number> = { viewer: 0, operator: 1, admin: 2 };

/** The routes an app mapped at boot ("Mapped {/path, METHOD} route"), in OpenAPI's form. */
function mappedRoutes(proc: AppProcess): string[] {
  return fs
    .readFileSync(proc.logFile, 'utf8')
    .split('\n')
    .flatMap((line) => {
      try {
        const msg = (JSON.parse(line) as { msg?: unknown }).msg;
        const m = typeof msg === 'string' ? /^Mapped \{(\S*), (\w+)\}/.exec(msg) : null;
        return m ? [`${proc.name} ${m[2]} ${m[1]!.replace(/:([a-z_]+)/g, '{$1}')}`] : [];
      } catch {
        return [];
      }
    });
}

/** Drops what differs between two answers to the same question asked twice (times). */
function stable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stable);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).filter(([k]) => !/(_at|^as_of)$/.test(k)).map(([k, v]) => [k, stable(v)]));
  return value;
}

describe('e2e: issue 30 - every route, keys of two projects at each tier, every object kind of the other: 404, never its data', () => {
  let pc: ProjectsCluster;
  let a: ProjectKeys;
  let b: ProjectKeys;
  let seedA: SeededProject;
  let seedB: SeededProject;
  let peers: Peers;
  const sfx = uniqueSuffix().slice(0, 8);
  const projA = `team-a-${sfx}`;
  const projB = `team-b-${sfx}`;
  const tagA = `ta${uniqueSuffix().slice(0, 8)}`;
  const tagB = `tb${uniqueSuffix().slice(0, 8)}`;
  const shared = `shared-${sfx}`;
  let routes: string[] = [];
  /** What a missing object is: every name of A's replaced by one of the same form that names nothing. */
  let substitutions: Array<[string, string]> = [];

  beforeAll(async () => {
    pc = await startProjectsCluster('e2pa');
    a = await createProjectWithKeys(pc, projA);
    b = await createProjectWithKeys(pc, projB);
    seedA = await seedProject(pc, a, tagA, shared);
    seedB = await seedProject(pc, b, tagB, shared);
    const spare = await pc.call('ingestion', 'POST', '/v1/keys', { key: pc.platformKey, body: { name: 'spare', tier: 'viewer', project: projA } });
    expectStatus(spare, 201, 'the spare key of A');
    peers = { a, b, spareKeyId: spare.json.api_key.id };
    const tagM = `tm${uniqueSuffix().slice(0, 8)}`;
    const fresh = (v: string) => (/^[0-9a-f]{16}$/.test(v) ? randomBytes(8).toString('hex') : randomUUID());
    substitutions = [
      [tagA, tagM],
      [projA, `team-m-${sfx}`],
      [sha256(seedA.rubric), sha256(seedA.rubric.split(tagA).join(tagM))],
      ...[seedA.gateId, seedA.findingId, seedA.setId, seedA.reportId, seedA.comparisonId, peers.spareKeyId, ...Object.values(a.ids)].map((v): [string, string] => [v, fresh(v)]),
    ];
    for (const app of FOUR_APPS) {
      const doc = await pc.call(app, 'GET', '/openapi.json');
      if (doc.status !== 200) continue;
      for (const [p, ops] of Object.entries(doc.json.paths as Record<string, Record<string, unknown>>)) {
        for (const method of Object.keys(ops)) if (['get', 'post', 'put', 'patch', 'delete'].includes(method)) routes.push(`${app} ${method.toUpperCase()} ${p}`);
      }
    }
    routes = [...new Set([...routes, ...FOUR_APPS.flatMap((app) => mappedRoutes(pc.cluster.apps.get(app)!))])].sort();
  }, 480_000);

  afterAll(async () => {
    await pc?.stop();
  });

  const isPublic = (route: string) => {
    const [, , p] = route.split(' ');
    return PUBLIC_PATHS.includes(p!) || (route.startsWith('read-model GET ') && DASHBOARD_SHELL.test(p!));
  };
  const rowOf = (route: string): Row => (isPublic(route) ? { kind: 'public', tier: 'viewer', req: get(() => route.split(' ')[2]!.replace(/\{id\}/g, seedA.candRunId)) } : MATRIX[route]!);
  const appOf = (route: string) => route.split(' ')[0] as AppName;
  const methodOf = (route: string) => route.split(' ')[1]!;
  const missing = (text: string) => substitutions.reduce((t, [from, to]) => t.split(from).join(to), text);
  const unmissing = (text: string) => substitutions.reduce((t, [from, to]) => t.split(to).join(from), text);

  async function send(route: string, req: Req, key: string | undefined, project?: string): Promise<Reply> {
    return pc.call(appOf(route), methodOf(route), req.path, { ...(key ? { key } : {}), ...(project !== undefined ? { project } : {}), ...(req.body !== undefined ? { body: req.body } : {}), streamMs: 3_000 });
  }
  /** The same question about an object that does not exist, its answer read back with A's names. */
  async function sendMissing(route: string, req: Req, key: string, project?: string): Promise<Reply> {
    const r = await send(route, { path: missing(req.path), ...(req.body !== undefined ? { body: JSON.parse(missing(JSON.stringify(req.body))) } : {}) }, key, project);
    return { ...r, text: unmissing(r.text), json: r.json === undefined ? undefined : JSON.parse(unmissing(JSON.stringify(r.json))) };
  }
  /** A's canaries in an answer that the request did not itself send. */
  const leaks = (reply: Reply, req: Req) => leaked(reply.text, seedA.canaries.concat(projA)).filter((c) => !`${req.path} ${JSON.stringify(req.body ?? null)}`.includes(c));
  const answer = (r: Reply) => ({ status: r.status, body: r.json === undefined ? r.text.slice(0, 300) : stable(r.json) });

  it('seeds one object of every kind in each project (the comparison and the calibration report too)', () => {
    expect([...seedA.problems, ...seedB.problems]).toEqual([]);
    expect(routes.length).toBeGreaterThan(40);
  });

  it('every route the apps serve (OpenAPI documents and mapped routes) has a row in the matrix, and every row is served', () => {
    const unlisted = routes.filter((r) => !isPublic(r) && MATRIX[r] === undefined);
    expect(unlisted).toEqual([]); // served, without a row: add one (what it names, its tier)
    const unserved = Object.keys(MATRIX).filter((r) => !routes.includes(r));
    expect(unserved).toEqual([]); // a row for a route no app serves
  });

  it("B's keys at every tier: A's object answers exactly what a missing object answers (404 at the route's tier), never A's data", async () => {
    const problems: string[] = [];
    for (const route of routes) {
      const row = rowOf(route);
      if (row.kind !== 'object' && row.kind !== 'probe') continue;
      const req = row.req(seedA, peers);
      for (const tier of TIERS) {
        const got = await send(route, req, b[tier]);
        const none = await sendMissing(route, req, b[tier]);
        const where = `${route} as B ${tier}`;
        if (JSON.stringify(answer(got)) !== JSON.stringify(answer(none))) problems.push(`${where}: ${JSON.stringify(answer(got))} where a missing object answers ${JSON.stringify(answer(none))}`);
        const allowed = TIER_RANK[tier] >= TIER_RANK[row.tier];
        if (allowed && row.kind === 'object' && got.status !== 404) problems.push(`${where}: ${got.status}, not 404: ${got.text.slice(0, 200)}`);
        if (allowed && row.kind === 'probe' && got.status !== 200) problems.push(`${where}: ${got.status}, not 200: ${got.text.slice(0, 200)}`);
        if (!allowed && got.status !== 403) problems.push(`${where}: ${got.status} below the route's tier ${row.tier}, not 403`);
        const leak = leaks(got, req);
        if (leak.length > 0) problems.push(`${where}: the answer holds A's ${leak.join(', ')}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("B's keys on every list: 200, none of A's objects; A's keys see them", async () => {
    const problems: string[] = [];
    for (const route of routes) {
      const row = rowOf(route);
      if (row.kind !== 'list') continue;
      const req = row.req(seedA, peers);
      for (const tier of TIERS.filter((t) => TIER_RANK[t] >= TIER_RANK[row.tier])) {
        const got = await send(route, req, b[tier]);
        if (got.status !== 200) problems.push(`${route} as B ${tier}: ${got.status}: ${got.text.slice(0, 200)}`);
        const leak = leaks(got, req);
        if (leak.length > 0) problems.push(`${route} as B ${tier}: the list holds A's ${leak.join(', ')}`);
        const mine = await send(route, req, a[tier]);
        const absent = (row.shows?.(seedA, peers) ?? []).filter((s) => !mine.text.includes(s));
        if (mine.status !== 200 || absent.length > 0) problems.push(`${route} as A ${tier}: ${mine.status}, without A's ${absent.join(', ')}`);
        // And the other way round: A's list holds none of B's objects.
        const fromB = leaked(mine.text, seedB.canaries.concat(projB));
        if (fromB.length > 0) problems.push(`${route} as A ${tier}: the list holds B's ${fromB.join(', ')}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("A's keys at the route's tier get past it to A's objects: never 404, never 403", async () => {
    const problems: string[] = [];
    for (const route of routes) {
      const row = rowOf(route);
      if (row.kind !== 'object' && row.kind !== 'probe') continue;
      const req = row.req(seedA, peers);
      for (const tier of TIERS.filter((t) => TIER_RANK[t] >= TIER_RANK[row.tier])) {
        const got = await send(route, req, a[tier]);
        if ([401, 403, 404].includes(got.status) || got.status >= 500) problems.push(`${route} as A ${tier}: ${got.status}: ${got.text.slice(0, 300)}`);
        if (row.kind === 'probe') {
          const none = await sendMissing(route, req, a[tier]);
          if (JSON.stringify(answer(got)) === JSON.stringify(answer(none))) problems.push(`${route} as A ${tier}: the answer is the one for a scope nobody measured`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('the platform key reaches either project with X-Evals-Project; B, or no header (default), answers as for a missing object', async () => {
    const problems: string[] = [];
    for (const route of routes) {
      const row = rowOf(route);
      if (methodOf(route) !== 'GET' || (row.kind !== 'object' && row.kind !== 'list' && row.kind !== 'probe')) continue;
      // Projects and keys are the platform key's to manage across projects, whichever it acts in (checked below).
      if (route.startsWith('ingestion GET /v1/projects') || route === 'ingestion GET /v1/keys') continue;
      const req = row.req(seedA, peers);
      const inA = await send(route, req, pc.platformKey, projA);
      if ([401, 403, 404].includes(inA.status) || inA.status >= 500) problems.push(`${route} as platform in A: ${inA.status}: ${inA.text.slice(0, 200)}`);
      const absent = (row.shows?.(seedA, peers) ?? []).filter((s) => !inA.text.includes(s));
      if (row.kind === 'list' && absent.length > 0) problems.push(`${route} as platform in A: without A's ${absent.join(', ')}`);
      for (const project of [projB, undefined]) {
        const elsewhere = await send(route, req, pc.platformKey, project);
        const where = `${route} as platform in ${project ?? 'default'}`;
        const leak = leaks(elsewhere, req);
        if (leak.length > 0) problems.push(`${where}: the answer holds A's ${leak.join(', ')}`);
        if (row.kind === 'object' && elsewhere.status !== 404) problems.push(`${where}: ${elsewhere.status}, not 404`);
        if (row.kind === 'list' && elsewhere.status !== 200) problems.push(`${where}: ${elsewhere.status}, not 200`);
      }
      // In B, the platform key reads B's objects of the same kind.
      if (row.kind === 'object' || row.kind === 'list') {
        const inB = await send(route, row.req(seedB, peers), pc.platformKey, projB);
        const shown = row.kind === 'list' ? (row.shows?.(seedB, peers) ?? []).filter((s) => !s.includes(projA) && !Object.values(a.ids).includes(s)) : [];
        if (row.kind === 'object' && route.includes('/v1/keys') === false && inB.status === 404) problems.push(`${route} as platform in B on B's object: 404`);
        if (shown.some((s) => !inB.text.includes(s))) problems.push(`${route} as platform in B: without B's ${shown.join(', ')}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('a project key naming another project in X-Evals-Project: 404 PROJECT_NOT_FOUND on every route, as for a project that does not exist', async () => {
    const problems: string[] = [];
    for (const route of routes) {
      const row = rowOf(route);
      if (row.kind === 'public' || row.kind === 'own-write') continue;
      const req = row.req(seedB, peers);
      for (const tier of TIERS) {
        const other = await send(route, req, b[tier], projA);
        const unknown = await send(route, req, b[tier], `no-such-${sfx}`);
        const where = `${route} as B ${tier} naming A`;
        // Below the route's tier the guard may refuse the tier first; either way the answer is the one for a project that does not exist.
        const allowed = TIER_RANK[tier] >= TIER_RANK[row.tier];
        if ((allowed || other.status !== 403) && (other.status !== 404 || other.json?.code !== 'PROJECT_NOT_FOUND')) problems.push(`${where}: ${other.status} ${other.text.slice(0, 200)}`);
        const same = JSON.stringify(stable(other.json)).split(projA).join('<p>') === JSON.stringify(stable(unknown.json)).split(`no-such-${sfx}`).join('<p>');
        if (!same) problems.push(`${where}: ${other.text.slice(0, 200)} where a project that does not exist answers ${unknown.text.slice(0, 200)}`);
        if (leaks(other, { path: projA }).length > 0) problems.push(`${where}: the answer holds A's data`);
      }
      // Its own project named: as without the header.
      if (methodOf(route) === 'GET') {
        const own = await send(route, req, b.viewer, projB);
        if (own.status === 404 && own.json?.code === 'PROJECT_NOT_FOUND') problems.push(`${route} as B naming B: PROJECT_NOT_FOUND`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('project management needs a platform key: a project admin cannot make a project; a project key lists only its own', async () => {
    const row = MATRIX['ingestion POST /v1/projects']!;
    const req = row.req(seedA, peers);
    for (const tier of TIERS) {
      const r = await send('ingestion POST /v1/projects', req, b[tier]);
      expect([tier, r.status < 300, typeof r.json?.code]).toEqual([tier, false, 'string']);
    }
    const all = await pc.call('ingestion', 'GET', '/v1/projects', { key: pc.platformKey });
    expectStatus(all, 200);
    const ids = JSON.stringify(all.json);
    expect([ids.includes(projA), ids.includes(projB), ids.includes('"default"'), ids.includes((req.body as { id: string }).id)]).toEqual([true, true, true, false]);
    // The platform key reads any project, whichever it acts in; a project key only its own.
    for (const project of [projA, projB, undefined]) {
      const one = await pc.call('ingestion', 'GET', `/v1/projects/${projA}`, { key: pc.platformKey, ...(project ? { project } : {}) });
      expect([project, one.status, one.json?.id ?? one.json?.project?.id]).toEqual([project, 200, projA]);
    }
    const mine = await pc.call('ingestion', 'GET', '/v1/projects', { key: b.viewer });
    expect([mine.status, mine.text.includes(projB), mine.text.includes(projA), mine.text.includes('"default"')]).toEqual([200, true, false, false]);
    // A platform admin names the project of a key; a project admin cannot name another project's.
    const made = await pc.call('ingestion', 'POST', '/v1/keys', { key: pc.platformKey, body: { name: 'made-for-b', tier: 'viewer', project: projB } });
    expect([made.status, made.json?.api_key?.project]).toEqual([201, projB]);
    const own = await pc.call('ingestion', 'POST', '/v1/keys', { key: b.admin, body: { name: 'b-made', tier: 'viewer' } });
    expect([own.status, own.json?.api_key?.project]).toEqual([201, projB]);
  });

  it('public routes (health, metrics, documents, the dashboard shell) hold none of A\'s data for B\'s key', async () => {
    const problems: string[] = [];
    for (const route of routes.filter(isPublic)) {
      const req = rowOf(route).req(seedA, peers);
      const got = await send(route, req, b.viewer);
      const leak = leaks(got, req);
      if (got.status >= 500 || leak.length > 0) problems.push(`${route}: ${got.status}, holds ${leak.join(', ')}`);
    }
    expect(problems).toEqual([]);
  });

  it('hostile project ids in paths, headers and bodies: a clear 4xx with a code, nothing made, every app up', async () => {
    const hostile = ['x'.repeat(64), 'x'.repeat(4_000), 'Team-A', projA.toUpperCase(), '..', '../default', 'a:b', `${projA}:x`, 'ünï', 'a.b', '-lead', 'a/b', '%2e%2e', '*', '>', ' '];
    const problems: string[] = [];
    const refusedWithCode = (where: string, r: Reply, statuses: number[]) => {
      if (!statuses.includes(r.status) || typeof r.json?.code !== 'string') problems.push(`${where}: ${r.status} ${r.text.slice(0, 200)}`);
    };
    for (const id of hostile) {
      const where = JSON.stringify(id.slice(0, 40));
      // The header, with the platform key (which may name any project) and with a project key.
      for (const app of ['ingestion', 'read-model', 'regression'] as const) {
        const path = app === 'ingestion' ? '/v1/suites' : app === 'read-model' ? '/v1/run-list' : '/v1/findings';
        const asPlatform = await pc.call(app, 'GET', path, { key: pc.platformKey, project: id });
        if (!(asPlatform.status === 400 && asPlatform.json?.field === 'X-Evals-Project') && !(id.trim() === '' && asPlatform.status === 200)) problems.push(`${app} header ${where} as platform: ${asPlatform.status} ${asPlatform.text.slice(0, 200)}`);
        const asB = await pc.call(app, 'GET', path, { key: b.viewer, project: id });
        // A blank header is no header (HTTP trims it): the key's own project.
        if (id.trim() === '') {
          if (asB.status !== 200) problems.push(`${app} blank header as B: ${asB.status}`);
        } else refusedWithCode(`${app} header ${where} as B`, asB, [400, 404]);
      }
      // In a path and in bodies.
      refusedWithCode(`GET /v1/projects/${where}`, await pc.call('ingestion', 'GET', `/v1/projects/${encodeURIComponent(id)}`, { key: pc.platformKey }), [400, 404]);
      refusedWithCode(`POST /v1/projects ${where}`, await pc.call('ingestion', 'POST', '/v1/projects', { key: pc.platformKey, body: { id, name: 'hostile' } }), [400, 422]);
      refusedWithCode(`POST /v1/keys project ${where}`, await pc.call('ingestion', 'POST', '/v1/keys', { key: pc.platformKey, body: { name: 'hostile', tier: 'viewer', project: id } }), [400, 404, 422]);
    }
    for (const body of [{ id: 42, name: 'x' }, { id: null, name: 'x' }, { id: ['a'], name: 'x' }, { id: 'fine-id', name: '' }, { name: 'no id' }, { id: projA, name: 'taken' }]) {
      refusedWithCode(`POST /v1/projects ${JSON.stringify(body)}`, await pc.call('ingestion', 'POST', '/v1/projects', { key: pc.platformKey, body }), [400, 409, 422]);
    }
    expect(problems).toEqual([]);
    const listed = await pc.call('ingestion', 'GET', '/v1/projects', { key: pc.platformKey });
    expect((listed.json.projects as Array<{ id: string }>).map((p) => p.id).sort()).toEqual(['default', projA, projB].sort());
    for (const app of FOUR_APPS) expect((await pc.call(app, 'GET', '/health')).status).toBe(200);
  });

  it("a run id of A reused by B: 409 RUN_ID_CONFLICT with the answer of any conflict, nothing of A's run", async () => {
    const body = (runId: string) => ({ run_id: runId, suite_key: shared, subject_kind: 'agent', subject_id: `reuser-${tagB}`, outputs: outputsFor(seedB.sharedCaseIds, 4) });
    const reuse = await pc.call('ingestion', 'POST', '/v1/runs', { key: b.operator, body: body(seedA.sharedRunId) });
    // B's own run id with other outputs: a conflict inside B, the baseline of the answer.
    const ownConflict = await pc.call('ingestion', 'POST', '/v1/runs', { key: b.operator, body: body(seedB.sharedRunId) });
    expect([reuse.status, reuse.json?.code, reuse.json?.field]).toEqual([409, 'RUN_ID_CONFLICT', 'run_id']);
    expect(JSON.stringify(reuse.json).split(seedA.sharedRunId).join('<id>')).toBe(JSON.stringify(ownConflict.json).split(seedB.sharedRunId).join('<id>'));
    expect(leaks(reuse, { path: seedA.sharedRunId })).toEqual([]);
    // A's run is as it was.
    const run = await pc.call('read-model', 'GET', `/v1/runs/${seedA.sharedRunId}`, { key: a.viewer });
    expect([run.status, run.json?.run?.subject_id]).toEqual([200, seedA.subjectId]);
  });

  it("the same suite key in both projects: each reads its own cases; B pushing A's exact suite content under A's key makes B's version 1", async () => {
    for (const [keys, seed, other] of [[a, seedA, seedB], [b, seedB, seedA]] as const) {
      const s = await pc.call('ingestion', 'GET', `/v1/suites/${shared}`, { key: keys.viewer });
      expectStatus(s, 200);
      expect(s.json.suite.cases.map((c: { case_id: string }) => c.case_id)).toEqual(seed.sharedCaseIds);
      expect(leaked(s.text, other.canaries)).toEqual([]);
    }
    // Last: after this push B has a suite under A's own key (its own version 1, not A's).
    const pushed = await pc.call('ingestion', 'POST', '/v1/suites', { key: b.operator, body: exactSuite(seedA.ownSuite, seedA.caseIds, tagA) });
    expect([pushed.status, pushed.json?.created, pushed.json?.suite?.version, pushed.json?.same_content_as]).toEqual([201, true, 1, undefined]);
    const aSuite = await pc.call('ingestion', 'GET', `/v1/suites/${seedA.ownSuite}`, { key: a.viewer });
    expect([aSuite.status, aSuite.json?.suite?.version]).toEqual([200, 1]);
    const versions = await pc.call('ingestion', 'GET', '/v1/suites?limit=500', { key: a.viewer });
    expect(versions.json.items.find((i: { suite_key: string }) => i.suite_key === seedA.ownSuite)).toMatchObject({ latest_version: 1, versions: 1 });
  });
});
