import * as fs from 'node:fs';
import type { DataSource } from 'typeorm';
import { ApiKeyRepository, createDataSource, type ApiKeyTier } from '@evals/persistence';
import { startCluster, stopProcess, type AppCluster, type AppName, type AppProcess } from '../support/app-processes';
import { createTestSchema, deleteTestStreams, type TestSchema, uniqueSuffix } from '../support/isolation';
import { testServers } from '../support/servers';

/**
 * Access control across the real apps (docs/security.md): every route of every app, with no key, an unknown
 * key, a revoked key and a key of each tier. The list of routes is hard-coded below AND compared with the
 * routes the apps actually map (Nest's "Mapped {path, METHOD} route" boot lines), so a new route without a
 * row here - and so without a tested tier - fails this test.
 */
type Access = ApiKeyTier | 'public';
interface RouteRow {
  readonly app: AppName;
  readonly method: 'GET' | 'POST' | 'DELETE';
  readonly path: string;
  readonly access: Access;
}

const OPS: Array<[AppName, RouteRow['method'], string, Access]> = [
  ['ingestion', 'POST', '/v1/runs', 'operator'],
  // A run streamed over HTTP in batches (issue 15): open, outputs, seal.
  ['ingestion', 'POST', '/v1/streamed-runs', 'operator'],
  ['ingestion', 'POST', '/v1/streamed-runs/:run_id/outputs', 'operator'],
  ['ingestion', 'POST', '/v1/streamed-runs/:run_id/seal', 'operator'],
  ['ingestion', 'POST', '/v1/suites', 'operator'],
  ['ingestion', 'GET', '/v1/suites', 'viewer'],
  ['ingestion', 'GET', '/v1/suites/:key', 'viewer'],
  ['ingestion', 'GET', '/v1/suites/:key/versions/:version', 'viewer'],
  ['ingestion', 'POST', '/v1/gate', 'operator'],
  ['ingestion', 'GET', '/v1/gate/:id', 'viewer'],
  ['ingestion', 'POST', '/v1/gate/:id/override', 'admin'],
  ['ingestion', 'POST', '/v1/keys', 'admin'],
  ['ingestion', 'GET', '/v1/keys', 'admin'],
  ['ingestion', 'DELETE', '/v1/keys/:id', 'admin'],
  ['ingestion', 'POST', '/v1/projects', 'admin'],
  ['ingestion', 'GET', '/v1/projects', 'viewer'],
  ['ingestion', 'GET', '/v1/projects/:id', 'viewer'],
  ['read-model', 'GET', '/v1/runs/:id', 'viewer'],
  ['read-model', 'GET', '/v1/runs/:id/events', 'viewer'],
  ['read-model', 'GET', '/v1/scorecards', 'viewer'],
  ['regression', 'POST', '/v1/baselines', 'operator'],
  ['regression', 'GET', '/v1/baselines', 'viewer'],
  ['regression', 'GET', '/v1/findings', 'viewer'],
  ['regression', 'GET', '/v1/findings/:id', 'viewer'],
  ['regression', 'POST', '/v1/comparisons', 'operator'],
  ['regression', 'GET', '/v1/comparisons/:id', 'viewer'],
  ['regression', 'POST', '/v1/calibration-sets', 'operator'],
  ['regression', 'GET', '/v1/calibration-sets/:id', 'viewer'],
  ['regression', 'POST', '/v1/calibrations', 'operator'],
  ['regression', 'GET', '/v1/calibrations/:id', 'viewer'],
  ['regression', 'GET', '/v1/judges/status', 'viewer'],
  // Judge budgets in money (GT4, issue 13).
  ['ingestion', 'GET', '/v1/budgets', 'viewer'],
  // The dashboard (issue 17, docs/dashboard.md): list views, and the forwarder of the four-app layout.
  ['ingestion', 'GET', '/v1/gates', 'viewer'],
  ['regression', 'GET', '/v1/judges', 'viewer'],
  ['read-model', 'GET', '/v1/run-list', 'viewer'],
  ['read-model', 'GET', '/v1/runs/:id/cases', 'viewer'],
  ['read-model', 'GET', '/v1/whoami', 'viewer'],
  ['read-model', 'GET', '/dashboard/upstream/ingestion/v1/gates', 'viewer'],
  ['read-model', 'GET', '/dashboard/upstream/ingestion/v1/gate/:id', 'viewer'],
  ['read-model', 'POST', '/dashboard/upstream/ingestion/v1/gate/:id/override', 'admin'],
  ['read-model', 'GET', '/dashboard/upstream/regression/v1/findings', 'viewer'],
  ['read-model', 'GET', '/dashboard/upstream/regression/v1/findings/:id', 'viewer'],
  ['read-model', 'GET', '/dashboard/upstream/regression/v1/judges', 'viewer'],
  // The dashboard's shell and files: public like /health - they hold no evaluation data.
  ...['/', '/runs', '/runs/:id', '/scorecards', '/findings', '/gates', '/gates/:id', '/judges', '/dashboard/config.json', '/dashboard/vendor/chart.umd.min.js']
    .concat(['app.js', 'api.js', 'views.js', 'charts.js', 'dom.js', 'style.css'].map((f) => `/dashboard/${f}`))
    .map((path): [AppName, 'GET', string, Access] => ['read-model', 'GET', path, 'public']),
];
const APPS: AppName[] = ['ingestion', 'scoring-worker', 'read-model', 'regression'];
const ROUTES: RouteRow[] = [
  ...APPS.flatMap((app) => [
    { app, method: 'GET' as const, path: '/health', access: 'public' as const },
    { app, method: 'GET' as const, path: '/metrics', access: 'public' as const },
  ]),
  ...OPS.map(([app, method, path, access]) => ({ app, method, path, access })),
];

const TIERS: ApiKeyTier[] = ['viewer', 'operator', 'admin'];
const routeId = (r: { app: string; method: string; path: string }) => `${r.app} ${r.method} ${r.path}`;

/** Concrete values for path parameters: well-formed, naming nothing that exists. */
function concrete(path: string): string {
  return path.replace(/:version/g, '1').replace(/:id/g, path.startsWith('/v1/keys') ? 'ffffffffffffffff' : 'access-probe').replace(/:key/g, 'access-probe').replace(/:run_id/g, 'access-probe');
}

/** The routes an app mapped at boot, from its log (Nest logs one "Mapped {path, METHOD} route" line per route). */
function mappedRoutes(proc: AppProcess): string[] {
  return fs
    .readFileSync(proc.logFile, 'utf8')
    .split('\n')
    .flatMap((line) => {
      try {
        const msg = (JSON.parse(line) as { msg?: unknown }).msg;
        const m = typeof msg === 'string' ? /^Mapped \{(\S*), (\w+)\}/.exec(msg) : null;
        return m ? [`${proc.name} ${m[2]} ${m[1]}`] : [];
      } catch {
        return [];
      }
    });
}

describe('e2e: access tiers on every route of every app (EVALS_AUTH=required)', () => {
  let schema: TestSchema;
  let cluster: AppCluster;
  let ds: DataSource;
  const extra: AppProcess[] = [];
  const suffix = uniqueSuffix();
  const streamPrefix = `E2A_${suffix}_`;
  const pepper = `e2e-pepper-${suffix}`;
  const repo = new ApiKeyRepository({ pepper });
  const keys = {} as Record<ApiKeyTier | 'revoked' | 'unknown', string>;
  let exposed: string[] = [];

  beforeAll(async () => {
    schema = await createTestSchema('e2a');
    cluster = await startCluster({
      schema: schema.schema,
      streamPrefix,
      subjectPrefix: `e2a_${suffix}`,
      apps: APPS,
      env: { EVALS_AUTH: 'required', EVALS_API_KEY_PEPPER: pepper },
    });
    ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize: 2 });
    await ds.initialize();
    for (const tier of TIERS) keys[tier] = (await repo.create(ds, { name: `e2e-${tier}`, tier, createdBy: 'access.e2e' })).key;
    const revoked = await repo.create(ds, { name: 'e2e-revoked', tier: 'admin' });
    await repo.revoke(ds, revoked.record.id);
    keys.revoked = revoked.key;
    // Well formed, the id of a real key, a secret that is not its secret.
    keys.unknown = `${keys.admin.slice(0, 21)}${'A'.repeat(43)}`;
    exposed = APPS.flatMap((app) => mappedRoutes(cluster.apps.get(app)!)).sort();
  }, 180_000);

  afterAll(async () => {
    for (const p of extra) await stopProcess(p.child, 'SIGTERM');
    await cluster?.stopAll();
    await ds?.destroy();
    await deleteTestStreams(streamPrefix);
    await schema?.drop();
  });

  async function call(app: AppName, route: RouteRow, key?: string, target: AppCluster | AppProcess = cluster): Promise<{ status: number; body: any; headers: Headers }> {
    const path = concrete(route.path);
    const url = 'url' in target ? target.url(app, path) : `http://127.0.0.1:${target.port}${path}`;
    const res = await fetch(url, {
      method: route.method,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(route.method === 'POST' ? { 'content-type': 'application/json' } : {}) },
      ...(route.method === 'POST' ? { body: '{}' } : {}),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // metrics, SSE: not JSON
    }
    return { status: res.status, body, headers: res.headers };
  }

  it('the hard-coded route list is exactly what the four apps map (no route without a tested tier)', () => {
    expect(exposed.length).toBeGreaterThan(0);
    const listed = ROUTES.map(routeId);
    expect(exposed.filter((r) => !listed.includes(r))).toEqual([]); // served, but not in ROUTES: add a row with its tier
    expect(listed.filter((r) => !exposed.includes(r))).toEqual([]); // in ROUTES, but not served
    expect(new Set(exposed).size).toBe(exposed.length);
  });

  it('public routes (/health, /metrics) answer without a key', async () => {
    for (const route of ROUTES.filter((r) => r.access === 'public')) {
      const res = await call(route.app, route);
      expect([routeId(route), res.status]).toEqual([routeId(route), 200]);
    }
  });

  it('every non-public route: 401 without a key, with an unknown key and with a revoked key', async () => {
    const served = ROUTES.filter((r) => r.access !== 'public');
    for (const route of served) {
      for (const [what, key] of [['no key', undefined], ['unknown key', keys.unknown], ['revoked key', keys.revoked], ['malformed', 'evk_nonsense']] as const) {
        const res = await call(route.app, route, key);
        expect([routeId(route), what, res.status, res.body?.code]).toEqual([routeId(route), what, 401, 'UNAUTHENTICATED']);
        expect(res.headers.get('www-authenticate')).toBe('Bearer realm="evals"');
      }
    }
  }, 60_000);

  it('every non-public route: 403 naming the required tier below it, past access control at or above it', async () => {
    const served = ROUTES.filter((r) => r.access !== 'public');
    const outcomes: string[] = [];
    for (const route of served) {
      for (const tier of TIERS) {
        const res = await call(route.app, route, keys[tier]);
        const allowed = TIERS.indexOf(tier) >= TIERS.indexOf(route.access as ApiKeyTier);
        outcomes.push(`${routeId(route)} as ${tier}: ${res.status}`);
        if (allowed) {
          // Past the guard: the handler answers (often 400/404/422 for the probe's empty body or unknown id).
          expect([routeId(route), tier, [401, 403, 429].includes(res.status), res.status < 500]).toEqual([routeId(route), tier, false, true]);
        } else {
          expect([routeId(route), tier, res.status, res.body]).toEqual([
            routeId(route),
            tier,
            403,
            { code: 'FORBIDDEN', message: expect.stringContaining(route.access), required_tier: route.access },
          ]);
        }
      }
    }
    expect(outcomes.length).toBe(served.length * 3);
  }, 60_000);

  it('counts refusals in /metrics and never logs a key', async () => {
    const metrics = await fetch(cluster.url('ingestion', '/metrics'));
    const text = await metrics.text();
    expect(text).toMatch(/evals_http_access_denied_total\{code="UNAUTHENTICATED"\} [1-9]/);
    expect(text).toMatch(/evals_http_access_denied_total\{code="FORBIDDEN"\} [1-9]/);
    const logs = cluster.logs();
    for (const key of Object.values(keys)) expect(logs.includes(key.slice(21))).toBe(false);
    expect(logs).toMatch(/"msg":"request refused"/);
  });

  it('429 with Retry-After after EVALS_RATE_LIMIT_PER_MINUTE writes of one key, counted across two replicas in Redis', async () => {
    const limited = await startCluster({
      schema: schema.schema,
      streamPrefix,
      subjectPrefix: `e2a_${suffix}`,
      apps: ['regression'],
      env: { EVALS_AUTH: 'required', EVALS_API_KEY_PEPPER: pepper, EVALS_RATE_LIMIT_PER_MINUTE: '5' },
    });
    try {
      extra.push(limited.apps.get('regression')!);
      const second = await limited.start('regression', '-b');
      extra.push(second);
      const key = (await repo.create(ds, { name: 'e2e-rate', tier: 'operator' })).key;
      const post: RouteRow = { app: 'regression', method: 'POST', path: '/v1/baselines', access: 'operator' };
      const statuses: number[] = [];
      let refused: { status: number; body: any; headers: Headers } | undefined;
      for (let i = 0; i < 6; i++) {
        const res = await call('regression', post, key, i % 2 === 0 ? limited : second);
        statuses.push(res.status);
        if (res.status === 429) refused = res;
      }
      expect(statuses).toEqual([400, 400, 400, 400, 400, 429]); // past the guard: the empty body is invalid
      expect(refused!.body).toEqual({ code: 'RATE_LIMITED', message: expect.any(String), retry_after_seconds: expect.any(Number) });
      expect(refused!.body.retry_after_seconds).toBeGreaterThanOrEqual(1);
      expect(refused!.headers.get('retry-after')).toBe(String(refused!.body.retry_after_seconds));
      // Reads are not limited; another key has its own bucket.
      expect((await call('regression', { ...post, method: 'GET' }, key, limited)).status).toBe(200);
      expect((await call('regression', post, keys.operator, second)).status).toBe(400);
    } finally {
      for (const p of extra.splice(0)) await stopProcess(p.child, 'SIGTERM');
    }
  }, 120_000);
});
