import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import type { Page } from 'playwright-core';
import { startEmbeddedServe, type EmbeddedServe } from '../support/embedded-process';
import { completion, candidateOutputOf, startFakeOpenAI, verdictReply, type FakeOpenAI } from '../support/fake-openai';
import { uniqueSuffix } from '../support/isolation';
import { browserUnavailable, fieldText, launchBrowser, openPage, screenshot, waitReady, type Browser } from '../support/browser';

// Evaluated in the page, not in Node (this project compiles without the DOM library).
declare const document: any;
declare const window: any;

/**
 * The dashboard (issue 17, docs/dashboard.md) in headless Chromium against `evals serve` on the embedded
 * default (PGlite, the in-process bus, access control off on the loopback). A seeded history - a steady run,
 * a regression through the gate, an inconclusive drop, an uncalibrated and then a certified judge - is read
 * through the API and on every page, and what the page shows must equal what the API answers. A canary
 * submitted as a candidate output must appear on no page (D1). Screenshots: test/artifacts/dashboard/.
 *
 * The page's number formats (docs/dashboard.md) are written out again here: a rate with one decimal in %,
 * a difference in signed percentage points, a score with three decimals.
 */
const pct = (x: number | null) => (x === null ? 'n/a' : `${(x * 100).toFixed(1)}%`);
const pp = (x: number) => `${x > 0 ? '+' : ''}${(x * 100).toFixed(1)} pp`;
const interval = (lo: number, up: number) => `${pct(lo)}–${pct(up)}`;
const num3 = (x: number) => x.toFixed(3);

const unavailable = browserUnavailable();
const suite = unavailable ? describe.skip : describe;
if (unavailable) {
  // Said once, loudly: a skipped browser test is not a passed one.
  process.stderr.write(`dashboard browser tests SKIPPED: ${unavailable}\n`);
}

jest.setTimeout(240_000);

const CANARY = `DASH-CANARY-${uniqueSuffix()}`;
const MODEL = 'gpt-4o-2024-08-06';
const BIG = 10_000;
/** The server's public address (EVALS_PUBLIC_URL): pasteable links use it, navigation stays on this origin. */
const PUBLIC_URL = 'https://evals.example.test';
/** Cases of the run watched live: three work messages of at most 500. */
const LIVE = 1_500;

suite('e2e: the dashboard in a browser against `evals serve` (issue 17)', () => {
  let server: EmbeddedServe;
  let fake: FakeOpenAI;
  let browser: Browser;
  let dir: string;
  /** Every page's HTML as the browser rendered it, for the canary check. */
  const rendered: string[] = [];
  const measured: Record<string, number> = {};

  const api = async (method: string, route: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const r = await fetch(`${server.url}${route}`, { method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : null };
  };
  const pushSuite = async (key: string, n: number, threshold = 0.8) => {
    const cases = Array.from({ length: n }, (_, i) => ({ id: `c${String(i).padStart(5, '0')}`, input: `question ${i}`, expected: 'yes' }));
    const res = await api('POST', '/v1/suites', { key, default_scorer: { type: 'exact' }, pass_threshold: threshold, regression_threshold: 0.1, cases });
    expect([200, 201]).toContain(res.status);
  };
  /** n outputs, the first `failing` of them wrong (the canary, never stored - D1). */
  const outputs = (n: number, failing: number) => Array.from({ length: n }, (_, i) => ({ case_id: `c${String(i).padStart(5, '0')}`, output: i < failing ? `no ${CANARY}` : 'yes' }));
  const run = async (body: Record<string, unknown>) => {
    const res = await api('POST', '/v1/runs', { subject_kind: 'agent', subject_id: 'dash-bot', ...body });
    expect(res.status).toBe(200);
    return res.body;
  };

  const visit = async (page: Page, route: string, shot?: string): Promise<number> => {
    const ms = await openPage(page, `${server.url}${route}`);
    rendered.push(await page.content());
    if (shot) await screenshot(page, shot);
    return ms;
  };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-dashboard-'));
    // The judge: passes an output that says JUDGE-PASS, fails anything else; takes its time over a SLOW one.
    fake = await startFakeOpenAI((request) => {
      const output = candidateOutputOf(request) ?? '';
      return { ...completion(verdictReply(output.includes('JUDGE-PASS') ? 'pass' : 'fail', 0.9)), ...(output.includes('SLOW') ? { delayMs: 20 } : {}) };
    });
    server = await startEmbeddedServe({
      dataDir: path.join(dir, 'data'),
      // One work message (up to 500 cases) per scoring transaction, four judge calls at a time: the judged
      // run's evidence lands 500 cases at a time over seconds, long enough to watch.
      env: { WORKER_MAX_BATCH: '1', JUDGE_CONCURRENCY: '4', JUDGE_PROVIDER: 'openai', JUDGE_MODEL: MODEL, JUDGE_BASE_URL: fake.baseUrl, JUDGE_API_KEY: 'test', JUDGE_MAX_RETRIES: '0', JUDGE_INPUT_USD_PER_MTOK: '2.5', JUDGE_OUTPUT_USD_PER_MTOK: '10', EVALS_PUBLIC_URL: `${PUBLIC_URL}/` },
    });
    await pushSuite('dash-triage', 40);
    await pushSuite('dash-small', 10);
    await run({ suite_key: 'dash-triage', run_id: 'dash-base', outputs: outputs(40, 0) });
    await run({ suite_key: 'dash-triage', run_id: 'dash-steady', outputs: outputs(40, 1) });
    await run({ suite_key: 'dash-triage', run_id: 'dash-steady-2', outputs: outputs(40, 2) });
    // The regression, through the gate (it fails and is recorded; an admin overrides it below).
    const gate = await api('POST', '/v1/gate', { suite_key: 'dash-triage', subject_kind: 'agent', subject_id: 'dash-bot', variant: 'v2', run_id: 'dash-regressed', baseline_run_id: 'dash-base', outputs: outputs(40, 16) });
    expect(gate.status).toBe(200);
    expect(gate.body.recorded_verdict).toBe('fail');
    // An inconclusive drop: 2 of 10 cases lost, more than the threshold, an interval that reaches zero.
    await run({ suite_key: 'dash-small', run_id: 'small-base', outputs: outputs(10, 0) });
    // The suite changes between the baseline and the candidate (a new description is a new version, V1), so
    // "what changed since the baseline" has a real change to show: suite version 1 -> 2.
    const cases10 = Array.from({ length: 10 }, (_, i) => ({ id: `c${String(i).padStart(5, '0')}`, input: `question ${i}`, expected: 'yes' }));
    const v2 = await api('POST', '/v1/suites', { key: 'dash-small', description: 'Reworded after the baseline run.', default_scorer: { type: 'exact' }, pass_threshold: 0.8, regression_threshold: 0.1, cases: cases10 });
    expect(v2.status).toBe(201);
    await run({ suite_key: 'dash-small', run_id: 'small-cand', baseline_run_id: 'small-base', outputs: outputs(10, 2) });
    browser = await launchBrowser();
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await fake?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    if (Object.keys(measured).length) process.stderr.write(`dashboard timings (ms): ${JSON.stringify(measured)}\n`);
  });

  it('the seeded history is what the test expects of the API (a regression, an inconclusive drop, a steady run)', async () => {
    expect((await api('GET', '/v1/runs/dash-regressed')).body.regression.verdict).toBe('regressed');
    expect((await api('GET', '/v1/runs/small-cand')).body.regression.verdict).toBe('inconclusive_noise');
    expect((await api('GET', '/v1/runs/dash-steady')).body.regression.verdict).toBe('no_regression');
  });

  it('runs: each row shows the API run list - pass rate, denominator, 95% interval, verdict and gate status; filters narrow it', async () => {
    const page = await browser.page();
    measured.runs = await visit(page, '/', 'runs');
    const list = (await api('GET', '/v1/run-list?limit=50')).body;
    const gates = (await api('GET', '/v1/gates')).body.items as Array<{ run_id: string; effective_verdict: string }>;
    expect(list.total).toBe(6);
    expect(await page.locator('main tbody tr').count()).toBe(list.items.length);
    for (const r of list.items) {
      const row = `main tr[data-key="${r.run_id}"]`;
      expect(await fieldText(page, 'pass_rate', row)).toBe(pct(r.summary.pass_rate));
      expect(await fieldText(page, 'passed_n', row)).toBe(`${r.summary.passed}/${r.summary.n}`);
      expect(await fieldText(page, 'ci', row)).toBe(interval(r.summary.pass_rate_ci.lower, r.summary.pass_rate_ci.upper));
      expect(await fieldText(page, 'verdict', row)).toBe((r.verdict ?? 'undecided').replace(/_/g, ' '));
      const gate = gates.find((g) => g.run_id === r.run_id);
      expect(await fieldText(page, 'gate', row)).toBe(gate ? gate.effective_verdict : 'not gated');
    }
    // A filter by URL (pasteable) and by the form give the API's filtered list.
    await visit(page, '/?verdict=regressed');
    expect(await page.locator('main tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-key')))).toEqual(['dash-regressed']);
    await visit(page, '/');
    await page.selectOption('select[name="verdict"]', 'inconclusive_noise');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/verdict=inconclusive_noise/);
    await waitReady(page);
    expect(await page.locator('main tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-key')))).toEqual(['small-cand']);
    await visit(page, '/?variant=v2');
    expect(await page.locator('main tbody tr').count()).toBe(1);
    await page.close();
  });

  it('a run: summary, the comparison drawn as the interval of the difference against zero, the finding and the cases, as the API has them', async () => {
    const page = await browser.page();
    measured.run = await visit(page, '/runs/dash-regressed', 'run-regressed');
    const view = (await api('GET', '/v1/runs/dash-regressed')).body;
    const s = view.run.summary;
    expect(await fieldText(page, 'pass_rate')).toBe(pct(s.pass_rate));
    expect(await fieldText(page, 'passed_n')).toBe(`${s.passed}/${s.n}`);
    expect(await fieldText(page, 'ci')).toBe(interval(s.pass_rate_ci.lower, s.pass_rate_ci.upper));
    expect(await fieldText(page, 'score')).toBe(num3(s.score));
    const c = view.regression.comparison;
    const deciding = c.decided_by === 'paired' ? c.paired_diff : c.pass_rate_diff;
    expect(await fieldText(page, 'verdict')).toBe('regressed');
    expect(await fieldText(page, 'baseline')).toBe('dash-base');
    expect(await fieldText(page, 'denominators')).toBe(`run ${c.run.passed}/${c.run.n} vs baseline ${c.baseline.passed}/${c.baseline.n}`);
    expect(await fieldText(page, 'difference')).toBe(`${pp(deciding.diff)} (95% CI ${pp(deciding.lower)} to ${pp(deciding.upper)})`);
    expect(await fieldText(page, 'method')).toBe(deciding.method === 'newcombe_paired_10' ? 'Newcombe paired method 10' : 'Newcombe hybrid score');
    expect(await fieldText(page, 'score_drop')).toBe(`${num3(c.score_drop)} / ${num3(c.regression_threshold)}`);
    // The link to paste into a CI summary is under EVALS_PUBLIC_URL - the same one the CLI's Markdown summary
    // builds - while the page's own navigation stays relative to the address this tab reached.
    expect(await fieldText(page, 'share_url')).toBe(`${PUBLIC_URL}/runs/dash-regressed`);
    expect(await page.locator('[data-field="share_url"] a').getAttribute('href')).toBe(`${PUBLIC_URL}/runs/dash-regressed`);
    expect(await page.locator('[data-field="baseline"] a').getAttribute('href')).toBe('/runs/dash-base');
    // The chart is drawn by Chart.js on a canvas (not hand-made SVG), and says what it shows.
    const chart = page.locator('[data-chart="difference"] canvas');
    expect(await chart.getAttribute('aria-label')).toContain(`95% interval ${pp(deciding.lower)} to ${pp(deciding.upper)}`);
    expect(await page.evaluate(() => Boolean((window as any).Chart?.getChart(document.querySelector('[data-chart="difference"] canvas'))))).toBe(true);
    // The finding, as GET /v1/findings/:id has it.
    const finding = (await api('GET', '/v1/findings/dash-regressed')).body;
    expect(await fieldText(page, 'finding_id')).toBe(finding.finding_id);
    expect(await fieldText(page, 'finding_denominators')).toBe(`run ${finding.run.passed}/${finding.run.n} vs baseline ${finding.baseline.passed}/${finding.baseline.n}`);
    // The cases: the first page equals the API's page, labels only.
    const cases = (await api('GET', '/v1/runs/dash-regressed/cases?limit=50')).body;
    expect(await page.locator('section[aria-labelledby="cases-h"] tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-key')))).toEqual(cases.items.map((x: any) => x.case_id));
    for (const x of cases.items.slice(0, 20)) {
      const row = `tr[data-key="${x.case_id}"]`;
      expect([await fieldText(page, 'scorer', row), await fieldText(page, 'passed', row), await fieldText(page, 'score', row), await fieldText(page, 'label', row)]).toEqual([x.scorer, x.passed ? 'pass' : 'fail', num3(x.score), x.label]);
    }
    // Failed only: the API's count.
    await page.selectOption('select[name="passed"]', 'false');
    await page.waitForFunction(() => document.querySelector('[data-field="page-range"]')?.textContent?.startsWith('1–16 of 16'));
    await page.close();
  });

  it('an inconclusive run: its verdict and the interval that reaches zero, and no finding', async () => {
    const page = await browser.page();
    await visit(page, '/runs/small-cand', 'run-inconclusive');
    const c = (await api('GET', '/v1/runs/small-cand')).body.regression.comparison;
    const deciding = c.decided_by === 'paired' ? c.paired_diff : c.pass_rate_diff;
    expect(deciding.lower).toBeLessThan(0);
    expect(deciding.upper).toBeGreaterThanOrEqual(0);
    expect(await fieldText(page, 'verdict')).toBe('inconclusive noise');
    expect(await fieldText(page, 'difference')).toBe(`${pp(deciding.diff)} (95% CI ${pp(deciding.lower)} to ${pp(deciding.upper)})`);
    expect(await fieldText(page, 'finding')).toMatch(/^No finding/);
    // The baseline ran on suite version 1, the candidate on 2: the API's change report, seen on the page.
    expect(c.changes).toMatchObject({ anything_changed: true, suite_version: { baseline: 1, run: 2 } });
    expect((await api('GET', '/v1/runs/small-cand')).body.run.suite_version).toBe(2);
    expect(await fieldText(page, 'changes')).toBe('suite version 1 → 2');
    // An unchanged comparison says so.
    await visit(page, '/runs/dash-steady');
    expect(await fieldText(page, 'changes')).toBe('nothing (same suite version, judge and scorers)');
    await page.close();
  });

  it('scorecards: pass rate per run with its band and the trend line, mean score, latest verdict, and the export links', async () => {
    const page = await browser.page();
    measured.scorecards = await visit(page, '/scorecards', 'scorecards');
    const cards = (await api('GET', '/v1/scorecards')).body.scorecards;
    expect(cards.length).toBe(2);
    for (const card of cards) {
      const scope = `section[data-key="${card.suite_key}|${card.subject_kind}|${card.subject_id}"]`;
      const l = card.latest_pass_rate;
      expect(await fieldText(page, 'latest_pass_rate', scope)).toBe(`${pct(l.rate)} (${l.passed}/${l.n}, 95% CI ${interval(l.lower, l.upper)})`);
      const o = card.overall_pass_rate;
      expect(await fieldText(page, 'overall_pass_rate', scope)).toBe(`${pct(o.rate)} (${o.passed}/${o.n}, 95% CI ${interval(o.lower, o.upper)})`);
      expect(await fieldText(page, 'mean_score', scope)).toBe(num3(card.mean_score));
      expect(await fieldText(page, 'latest_verdict', scope)).toBe(card.latest_verdict.replace(/_/g, ' '));
      expect(await fieldText(page, 'trend', scope)).toContain(card.trend.direction.replace(/_/g, ' '));
      // The chart: one point per decided run, the band, and the trend line over the runs it was fitted on.
      const datasets = await page.evaluate((sel) => {
        const chart = (window as any).Chart.getChart(document.querySelector(`${sel} canvas`));
        return chart.data.datasets.map((d: any) => ({ label: d.label, n: d.data.filter((v: unknown) => v !== null).length }));
      }, scope);
      expect(datasets.map((d: { label: string }) => d.label)).toEqual(['95% lower', '95% band', 'pass rate', 'trend']);
      expect(datasets[2].n).toBe(card.runs);
      if (card.trend.slope_per_run !== null) expect(datasets[3].n).toBe(card.trend.runs);
    }
    const triage = cards.find((c: any) => c.suite_key === 'dash-triage');
    expect(triage.trend.slope_per_run).not.toBeNull(); // complete runs only: three runs without a judge case
    expect(await page.locator('[data-field="export_csv"]').getAttribute('href')).toBe('/v1/scorecards?format=csv');
    expect(await page.locator('[data-field="export_json"]').getAttribute('href')).toBe('/v1/scorecards?format=json');
    expect(await fieldText(page, 'share_url')).toBe(`${PUBLIC_URL}/scorecards`);
    const csv = await fetch(`${server.url}/v1/scorecards?format=csv`);
    expect(csv.headers.get('content-type')).toMatch(/text\/csv/);
    await page.close();
  });

  it('findings: every finding with its interval, method and both denominators', async () => {
    const page = await browser.page();
    await visit(page, '/findings', 'findings');
    const findings = (await api('GET', '/v1/findings?limit=100')).body.findings;
    expect(findings.map((f: any) => f.run_id)).toEqual(['dash-regressed']);
    for (const f of findings) {
      const row = `tr[data-key="${f.run_id}"]`;
      const d = f.pass_rate_diff;
      expect(await fieldText(page, 'difference', row)).toBe(`${pp(d.diff)} (${pp(d.lower)} to ${pp(d.upper)})`);
      expect(await fieldText(page, 'denominators', row)).toBe(`${f.run.passed}/${f.run.n} vs ${f.baseline.passed}/${f.baseline.n}`);
      expect(await fieldText(page, 'score_drop', row)).toBe(num3(f.score_drop));
    }
    await page.close();
  });

  it('gates: reasons, recorded and effective verdict; the override from the page (reason required) is audited and the recorded verdict stays', async () => {
    const page = await browser.page();
    await visit(page, '/gates', 'gates');
    const gates = (await api('GET', '/v1/gates')).body.items;
    expect(gates).toHaveLength(1);
    const g = gates[0];
    expect(await fieldText(page, 'reasons', `tr[data-key="${g.gate_id}"]`)).toBe(g.reasons.join(', '));
    await page.locator(`tr[data-key="${g.gate_id}"] a[href="/gates/${g.gate_id}"]`).click();
    await page.waitForURL(new RegExp(`/gates/${g.gate_id}$`));
    await waitReady(page);
    const before = (await api('GET', `/v1/gate/${g.gate_id}`)).body;
    for (const r of before.reasons) expect(await page.locator(`[data-field="reasons"] li[data-code="${r.code}"]`).innerText()).toBe(`${r.code}: ${r.message}`);
    expect(await fieldText(page, 'recorded_verdict')).toBe('fail');
    expect(await fieldText(page, 'effective_verdict')).toBe('fail');
    expect(await fieldText(page, 'share_url')).toBe(`${PUBLIC_URL}/gates/${g.gate_id}`);
    // Access control is off on the loopback: the page is served as the admin, and offers the override.
    const submit = page.getByRole('button', { name: 'Override to pass' });
    await submit.click();
    expect(await page.locator('form[data-form="override"] [role="status"]').innerText()).toBe('A reason is required.');
    expect((await api('GET', `/v1/gate/${g.gate_id}`)).body.overrides).toEqual([]);
    const reason = 'Known flaky upstream; accepted by the release owner for this hotfix.';
    await page.getByLabel('Reason (required, audited)').fill(reason);
    await submit.click();
    await page.waitForFunction(() => document.querySelector('[data-field="effective_verdict"]')?.textContent === 'pass');
    await waitReady(page);
    rendered.push(await page.content());
    await screenshot(page, 'gate-overridden');
    const after = (await api('GET', `/v1/gate/${g.gate_id}`)).body;
    expect(after).toMatchObject({ recorded_verdict: 'fail', effective_verdict: 'pass' });
    expect(after.overrides).toHaveLength(1);
    const o = after.overrides[0];
    expect(o).toMatchObject({ reason, before: 'fail', after: 'pass' });
    expect(await fieldText(page, 'recorded_verdict')).toBe('fail');
    expect([await fieldText(page, 'who'), await fieldText(page, 'why'), await fieldText(page, 'before'), await fieldText(page, 'after')]).toEqual([`${o.actor_name} (${o.actor_key_id})`, reason, 'fail', 'pass']);
    // The gate now passes: no button.
    expect(await page.getByRole('button', { name: 'Override to pass' }).count()).toBe(0);
    // The runs list shows the effective verdict, marked overridden.
    await visit(page, '/');
    expect(await fieldText(page, 'gate', 'tr[data-key="dash-regressed"]')).toBe('pass (overridden)');
    await page.close();
  });

  it('judges: the configured judge uncalibrated, then one row per calibrated scope - two rubrics of one pin, each with its own status, agreement against its target, kappa, sensitivity and specificity with denominators (J4)', async () => {
    const page = await browser.page();
    await visit(page, '/judges', 'judges-uncalibrated');
    const unmeasured = `tr[data-key="${MODEL}|judge-v1|"]`;
    expect(await fieldText(page, 'status', unmeasured)).toBe('uncalibrated');
    expect(await fieldText(page, 'reasons', unmeasured)).toBe('never_calibrated');
    expect(await fieldText(page, 'scope', unmeasured)).toBe('none measured');
    const sha = (t: string) => createHash('sha256').update(t, 'utf8').digest('hex');
    /** 60 items, 30 passed by humans; the judge passes the items `judgePasses` picks. */
    const calibrate = async (name: string, rubric: string, judgePasses: (i: number) => boolean) => {
      const items = Array.from({ length: 60 }, (_, i) => {
        const human = i < 30 ? 'pass' : 'fail';
        const output = `${judgePasses(i) ? 'JUDGE-PASS' : 'meh'} answer ${i} ${CANARY}`;
        return { item_id: `i${i}`, human, output };
      });
      const set = await api('POST', '/v1/calibration-sets', { name, rubric, items: items.map((i) => ({ item_id: i.item_id, output_hash: sha(i.output), human_verdict: i.human, output_chars: i.output.length })) });
      expect(set.status).toBe(201);
      const cal = await api('POST', '/v1/calibrations', { set_id: set.body.set.id, outputs: items.map((i) => ({ item_id: i.item_id, output: i.output })) });
      expect(cal.status).toBe(201);
      return cal.body;
    };
    // Rubric A: the judge disagrees on 3 items, agreement 57/60 - certified.
    expect((await calibrate('dash', 'Answers the question.', (i) => i < 28 || i === 59)).status).toBe('certified');
    // Rubric B, the same pin: it disagrees on 15 (10 human passes failed, 5 human fails passed), 45/60 - not certified.
    expect((await calibrate('dash-tone', 'Replies politely.', (i) => i < 20 || i >= 55)).status).toBe('not_certified');
    await visit(page, '/judges', 'judges');
    const listed = (await api('GET', '/v1/judges')).body.judges.filter((x: any) => x.judge_model === MODEL);
    const scopeA = `rubric:${sha('Answers the question.')}`;
    const scopeB = `rubric:${sha('Replies politely.')}`;
    // Two scopes of one pin: two rows, and no longer an unmeasured one.
    expect(listed.map((x: any) => x.scope).sort()).toEqual([scopeA, scopeB].sort());
    expect(await page.locator(unmeasured).count()).toBe(0);
    expect(await page.locator(`main tbody tr[data-key^="${MODEL}|judge-v1|"]`).count()).toBe(2);
    const rate = (r: any) => `${pct(r.value)} (${r.numerator}/${r.denominator}, 95% CI ${interval(r.lower, r.upper)})`;
    const expected: Record<string, { status: string; agreed: number; set: string }> = {
      [scopeA]: { status: 'certified', agreed: 57, set: 'dash' },
      [scopeB]: { status: 'not_certified', agreed: 45, set: 'dash-tone' },
    };
    for (const j of listed) {
      const key = `tr[data-key="${MODEL}|judge-v1|${j.scope}"]`;
      const want = expected[j.scope]!;
      expect(j.status).toBe(want.status);
      expect(j.agreement).toMatchObject({ numerator: want.agreed, denominator: 60 });
      expect(await fieldText(page, 'status', key)).toBe(want.status.replace(/_/g, ' '));
      expect(await fieldText(page, 'reasons', key)).toBe(j.reasons.length ? j.reasons.join(', ') : 'meets every target');
      expect(await fieldText(page, 'scope', key)).toBe(`rubric ${j.scope.slice('rubric:'.length, 'rubric:'.length + 12)}…`);
      expect(await fieldText(page, 'set_name', key)).toBe(want.set);
      expect(await fieldText(page, 'agreement', key)).toBe(rate(j.agreement));
      expect(await fieldText(page, 'kappa', key)).toBe(num3(j.kappa));
      expect(await fieldText(page, 'sensitivity', key)).toBe(rate(j.sensitivity));
      expect(await fieldText(page, 'specificity', key)).toBe(rate(j.specificity));
      expect(await fieldText(page, 'target', key)).toBe(`agreement ${pct(j.targets.agreement)}, kappa ${num3(j.targets.kappa)}`);
    }
    expect(listed.find((x: any) => x.scope === scopeB).reasons.length).toBeGreaterThan(0);
    // The chart: one interval per scope, each against its own target.
    const chart = await page.evaluate(() => {
      const c = (window as any).Chart.getChart(document.querySelector('[data-chart="agreement"] canvas'));
      return { labels: c.data.labels, datasets: c.data.datasets.map((d: any) => ({ label: d.label, data: d.data })) };
    });
    const mine = chart.labels.map((l: string, i: number) => ({ l, i })).filter(({ l }: { l: string }) => l.startsWith(`${MODEL} · judge-v1 · `));
    expect(mine).toHaveLength(2);
    for (const { l, i } of mine) {
      const j = listed.find((x: any) => l.endsWith(`rubric ${x.scope.slice('rubric:'.length, 'rubric:'.length + 12)}…`));
      expect(chart.datasets[0].data[i]).toEqual([j.agreement.lower * 100, j.agreement.upper * 100]);
      expect(chart.datasets[2]).toMatchObject({ label: 'target' });
      expect(chart.datasets[2].data[i].x).toBeCloseTo(j.targets.agreement * 100, 10);
    }
    await page.close();
  });

  it('a run fills in live through the SSE endpoint while its judge answers, then shows its summary', async () => {
    // LIVE cases graded by the (slow) judge, 500 per work message: the page polls the run's SSE replay.
    const cases = Array.from({ length: LIVE }, (_, i) => ({ id: `j${String(i).padStart(4, '0')}`, input: `ticket ${i}`, expected: null }));
    expect((await api('POST', '/v1/suites', { key: 'dash-live', default_scorer: { type: 'llm_judge', rubric: 'Answers the question.' }, pass_threshold: 0.8, regression_threshold: 0.1, cases })).status).toBeLessThan(300);
    const page = await browser.page();
    const pending = api('POST', '/v1/runs', {
      suite_key: 'dash-live',
      subject_kind: 'agent',
      subject_id: 'dash-live-bot',
      run_id: 'live-run',
      outputs: cases.map((c, i) => ({ case_id: c.id, output: `${i < LIVE - 100 ? 'JUDGE-PASS' : 'meh'} SLOW answer ${i} ${CANARY}` })),
    });
    let found = false;
    for (let i = 0; i < 600 && !found; i++) {
      found = (await api('GET', '/v1/runs/live-run')).status === 200;
      if (!found) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(found).toBe(true);
    await page.goto(`${server.url}/runs/live-run`);
    // Every "scored" count the page shows while the run is in flight, sampled in the page.
    await page.evaluate(() => {
      window.__scored = [];
      window.__sampler = setInterval(() => {
        const text = document.querySelector('[data-field="scored"]')?.textContent;
        if (text && window.__scored[window.__scored.length - 1] !== text) window.__scored.push(text);
      }, 50);
    });
    await page.waitForFunction(() => /^● live/.test(document.querySelector('[data-field="live"]')?.textContent ?? ''), null, { timeout: 30_000 });
    await screenshot(page, 'run-live');
    rendered.push(await page.content());
    expect((await pending).status).toBe(200);
    await page.waitForFunction(() => document.querySelector('[data-field="status"]')?.textContent === 'completed', null, { timeout: 120_000 });
    await waitReady(page);
    const seen: string[] = await page.evaluate(() => (clearInterval(window.__sampler), window.__scored));
    const counts = seen.map((t) => Number(new RegExp(`^(\\d+) of ${LIVE}$`).exec(t)?.[1]));
    // It filled in: several counts, never going back, one of them strictly between none and all.
    expect(counts.length).toBeGreaterThanOrEqual(2);
    expect(counts.every((n, i) => Number.isInteger(n) && (i === 0 || n >= counts[i - 1]!))).toBe(true);
    expect(counts.some((n) => n > 0 && n < LIVE)).toBe(true);
    const view = (await api('GET', '/v1/runs/live-run')).body;
    expect(view.run.summary).toMatchObject({ n: LIVE, passed: LIVE - 100 });
    expect(await fieldText(page, 'passed_n')).toBe(`${LIVE - 100}/${LIVE}`);
    expect(await fieldText(page, 'ci')).toBe(interval(view.run.summary.pass_rate_ci.lower, view.run.summary.pass_rate_ci.upper));
    rendered.push(await page.content());
    await page.close();
  });

  it(`a run of ${BIG} cases: its page shows the first page of cases, pages by keyboard, and loads fast`, async () => {
    await pushSuite('dash-big', BIG);
    const created = await run({ suite_key: 'dash-big', subject_id: 'dash-big-bot', run_id: 'big-run', outputs: outputs(BIG, 500) });
    expect(created.run.summary).toMatchObject({ n: BIG, passed: BIG - 500 });
    const page = await browser.page();
    await visit(page, '/runs/big-run');
    // A fresh load of the completed 10 000-case run: the first page of cases, not all of them.
    measured.big_run = await visit(page, '/runs/big-run', 'run-big');
    expect(await fieldText(page, 'passed_n')).toBe(`${BIG - 500}/${BIG}`);
    expect(await fieldText(page, 'page-range', 'section[aria-labelledby="cases-h"]')).toBe(`1–50 of ${BIG}`);
    expect(await page.locator('section[aria-labelledby="cases-h"] tbody tr').count()).toBe(50);
    expect(measured.big_run).toBeLessThan(3_000); // the target is 1 s (docs/dashboard.md); slack for a loaded CI machine
    // Keyboard: the pager is reachable and works without a mouse.
    await page.getByRole('button', { name: 'Next →' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForFunction((n: number) => document.querySelector('section[aria-labelledby="cases-h"] [data-field="page-range"]')?.textContent === `51–100 of ${n}`, BIG);
    await page.close();
  });

  it('keyboard: the skip link and the navigation reach every page; the current page is marked', async () => {
    const page = await browser.page();
    await visit(page, '/');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Runs');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/scorecards$/);
    await waitReady(page);
    expect(await page.locator('nav a[aria-current="page"]').innerText()).toBe('Scorecards');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');
    await page.close();
  });

  it('D1: the canary output appears on no page, in no API answer the pages read, and no page logged an error', async () => {
    expect(rendered.length).toBeGreaterThanOrEqual(10);
    for (const html of rendered) expect(html).not.toContain(CANARY);
    for (const route of ['/v1/run-list?limit=200', '/v1/runs/dash-regressed?include=cases', '/v1/runs/dash-regressed/cases?limit=500', '/v1/gates', '/v1/findings', '/v1/judges', '/v1/scorecards']) {
      expect(JSON.stringify((await api('GET', route)).body)).not.toContain(CANARY);
    }
    // A run without a finding answers 404 FINDING_NOT_FOUND (the API's documented answer); nothing else may fail.
    expect(browser.errors.filter((e) => !/status of 404 .*\/v1\/findings\/(small-cand|dash-steady|live-run|big-run)\)$/.test(e))).toEqual([]);
  });
});
