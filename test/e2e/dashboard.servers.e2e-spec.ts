import type { DataSource } from 'typeorm';
import { ApiKeyRepository, createDataSource, type ApiKeyTier } from '@evals/persistence';
import { startCluster, type AppCluster } from '../support/app-processes';
import { browserUnavailable, fieldText, launchBrowser, openPage, screenshot, waitReady, type Browser } from '../support/browser';
import { createTestSchema, deleteTestStreams, type TestSchema, uniqueSuffix } from '../support/isolation';
import { testServers } from '../support/servers';

// Evaluated in the page, not in Node (this project compiles without the DOM library).
declare const document: any;
declare const window: any;

/**
 * The dashboard in the four-app deployment (docs/dashboard.md), with access control on (EVALS_AUTH=required):
 * the read model serves the page and forwards its gate, finding and judge requests to the ingestion and
 * regression apps (DASHBOARD_INGESTION_URL, DASHBOARD_REGRESSION_URL) with the caller's key. A viewer is
 * asked for a key, sees the same values as the API and no override button; an admin overrides from the page.
 */
const pct = (x: number | null) => (x === null ? 'n/a' : `${(x * 100).toFixed(1)}%`);
const interval = (lo: number, up: number) => `${pct(lo)}–${pct(up)}`;

const unavailable = browserUnavailable();
const suite = unavailable ? describe.skip : describe;
if (unavailable) process.stderr.write(`dashboard browser tests SKIPPED: ${unavailable}\n`);

jest.setTimeout(180_000);

const CANARY = `DASH4-CANARY-${uniqueSuffix()}`;

suite('e2e: the dashboard on the four apps, access control on (issue 17)', () => {
  let schema: TestSchema;
  let cluster: AppCluster;
  let ds: DataSource;
  let browser: Browser;
  const suffix = uniqueSuffix();
  const streamPrefix = `E2D_${suffix}_`;
  const pepper = `e2e-pepper-${suffix}`;
  const keys = {} as Record<ApiKeyTier, string>;
  let gateId = '';
  const rendered: string[] = [];

  const call = async (app: 'ingestion' | 'read-model' | 'regression', method: string, route: string, key: string, body?: unknown) => {
    const r = await fetch(cluster.url(app, route), { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : null };
  };
  const outputs = (n: number, failing: number) => Array.from({ length: n }, (_, i) => ({ case_id: `c${i}`, output: i < failing ? `no ${CANARY}` : 'yes' }));

  /** Opens a tab and gives the dashboard a key through its form, as a person would. */
  const signIn = async (key: string, route: string) => {
    const page = await browser.page();
    await openPage(page, cluster.url('read-model', route));
    expect(await page.locator('form[data-form="key"]').count()).toBe(1);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Open the dashboard' }).click();
    await page.waitForFunction(() => document.querySelector('main')?.dataset.ready !== 'key');
    await waitReady(page);
    return page;
  };

  beforeAll(async () => {
    schema = await createTestSchema('e2d');
    cluster = await startCluster({
      schema: schema.schema,
      streamPrefix,
      subjectPrefix: `e2d_${suffix}`,
      apps: ['ingestion', 'scoring-worker', 'regression'],
      env: { EVALS_AUTH: 'required', EVALS_API_KEY_PEPPER: pepper },
    });
    // The read model forwards the page's gate, finding and judge requests to the other two apps.
    cluster.env.DASHBOARD_INGESTION_URL = cluster.url('ingestion', '');
    cluster.env.DASHBOARD_REGRESSION_URL = cluster.url('regression', '');
    await cluster.start('read-model');
    ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize: 2 });
    await ds.initialize();
    const repo = new ApiKeyRepository({ pepper });
    for (const tier of ['viewer', 'operator', 'admin'] as const) keys[tier] = (await repo.create(ds, { name: `dash-${tier}`, tier, createdBy: 'dashboard.e2e' })).key;

    const cases = Array.from({ length: 20 }, (_, i) => ({ id: `c${i}`, input: `q${i}`, expected: 'yes' }));
    expect((await call('ingestion', 'POST', '/v1/suites', keys.operator, { key: 'dash4', default_scorer: { type: 'exact' }, pass_threshold: 0.8, regression_threshold: 0.1, cases })).status).toBeLessThan(300);
    expect((await call('ingestion', 'POST', '/v1/runs', keys.operator, { suite_key: 'dash4', subject_kind: 'agent', subject_id: 'bot', run_id: 'd4-base', outputs: outputs(20, 0) })).status).toBe(200);
    const gate = await call('ingestion', 'POST', '/v1/gate', keys.operator, { suite_key: 'dash4', subject_kind: 'agent', subject_id: 'bot', run_id: 'd4-regressed', baseline_run_id: 'd4-base', outputs: outputs(20, 10) });
    expect(gate.status).toBe(200);
    expect(gate.body.recorded_verdict).toBe('fail');
    gateId = gate.body.gate_id;
    // The read model decides nothing itself: wait until it has projected the regression app's verdict.
    for (let i = 0; i < 200; i++) {
      const r = await call('read-model', 'GET', '/v1/runs/d4-regressed', keys.viewer);
      if (r.status === 200 && r.body.regression) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    browser = await launchBrowser();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await cluster?.stopAll();
    await ds?.destroy();
    await deleteTestStreams(streamPrefix);
    await schema?.drop();
  });

  it('a viewer: asked for a key, then the runs with their gate (through the read model) as the APIs have them; no override button', async () => {
    const page = await signIn(keys.viewer, '/');
    expect(await page.locator('#who').innerText()).toContain('dash-viewer · viewer');
    const list = (await call('read-model', 'GET', '/v1/run-list', keys.viewer)).body;
    expect(list.items.map((r: any) => r.run_id)).toEqual(['d4-regressed', 'd4-base']);
    for (const r of list.items) {
      const row = `tr[data-key="${r.run_id}"]`;
      expect(await fieldText(page, 'pass_rate', row)).toBe(pct(r.summary.pass_rate));
      expect(await fieldText(page, 'ci', row)).toBe(interval(r.summary.pass_rate_ci.lower, r.summary.pass_rate_ci.upper));
      expect(await fieldText(page, 'verdict', row)).toBe((r.verdict ?? 'undecided').replace(/_/g, ' '));
    }
    // The gate lives in the ingestion app: the read model forwarded the request with the viewer's key.
    expect(await fieldText(page, 'gate', 'tr[data-key="d4-regressed"]')).toBe('fail');
    await screenshot(page, 'servers-runs-viewer');
    rendered.push(await page.content());

    await openPage(page, cluster.url('read-model', `/gates/${gateId}`));
    expect(await fieldText(page, 'effective_verdict')).toBe('fail');
    expect(await page.getByRole('button', { name: 'Override to pass' }).count()).toBe(0);
    expect(await page.locator('form[data-form="override"]').count()).toBe(0);
    await screenshot(page, 'servers-gate-viewer');
    rendered.push(await page.content());

    // The finding (regression app) on the run page, through the forwarder.
    await openPage(page, cluster.url('read-model', '/runs/d4-regressed'));
    const finding = (await call('regression', 'GET', '/v1/findings/d4-regressed', keys.viewer)).body;
    expect(await fieldText(page, 'finding_id')).toBe(finding.finding_id);
    rendered.push(await page.content());
    await openPage(page, cluster.url('read-model', '/judges'));
    expect(await page.locator('main').innerText()).toContain('No judge is configured on this service.');
    rendered.push(await page.content());
    // And the forwarder itself refuses a viewer's override (the ingestion app would too).
    const refused = await call('read-model', 'POST', `/dashboard/upstream/ingestion/v1/gate/${gateId}/override`, keys.viewer, { reason: 'a viewer trying to pass the gate' });
    expect([refused.status, refused.body.code]).toEqual([403, 'FORBIDDEN']);
    await page.close();
  });

  it('an admin overrides from the page, through the read model, and the ingestion app records it', async () => {
    const page = await signIn(keys.admin, `/gates/${gateId}`);
    expect(await page.locator('#who').innerText()).toContain('dash-admin · admin');
    const reason = 'Accepted by the release owner: the drop is a known labelling change.';
    await page.getByLabel('Reason (required, audited)').fill(reason);
    await page.getByRole('button', { name: 'Override to pass' }).click();
    await page.waitForFunction(() => document.querySelector('[data-field="effective_verdict"]')?.textContent === 'pass');
    await waitReady(page);
    await screenshot(page, 'servers-gate-overridden');
    rendered.push(await page.content());
    const stored = (await call('ingestion', 'GET', `/v1/gate/${gateId}`, keys.viewer)).body;
    expect(stored).toMatchObject({ recorded_verdict: 'fail', effective_verdict: 'pass' });
    expect(stored.overrides).toEqual([expect.objectContaining({ actor_name: 'dash-admin', reason, before: 'fail', after: 'pass' })]);
    expect(await fieldText(page, 'who')).toBe(`dash-admin (${stored.overrides[0].actor_key_id})`);
    await page.close();
  });

  it('D1: the canary output appears on no page; no page logged an error', () => {
    expect(rendered.length).toBeGreaterThanOrEqual(5);
    for (const html of rendered) expect(html).not.toContain(CANARY);
    expect(browser.errors.filter((e) => !/401 \(Unauthorized\)/.test(e))).toEqual([]);
  });
});
