/**
 * Writes the upgrade test's fixtures (issue 27, docs/testing.md "The upgrade test"): a database of a
 * previous release, populated by that release's own code the way users populate it, and every view its HTTP
 * API gave of it. Run by hand at each release, never by a test:
 *
 *   node -r @swc-node/register test/upgrade/upgrade-fixture.ts [<release commit>]   # default 8a3493e
 *
 * It checks the release out into a temporary detached worktree (its own `npm ci`; UPGRADE_OLD_CHECKOUT
 * names an existing checkout of it instead), migrates a fresh schema with that release's migration job,
 * starts its four apps as their roles on the local servers (a scripted OpenAI-compatible judge beside
 * them), drives them over HTTP (suites, runs, baselines, gates, an override, a calibration, a pairwise
 * comparison, session signals), captures its answers and `pg_dump`s the schema, then writes
 *   test/fixtures/upgrade/<release>.sql         the schema, DDL and rows (plain SQL, INSERTs)
 *   test/fixtures/upgrade/<release>.views.json  every answer captured, and every table's row count
 * test/e2e/upgrade.e2e-spec.ts restores the one, migrates it with the current code and compares the other.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Client } from 'pg';
import { eventually, startCluster, type AppCluster, type AppName } from '../support/app-processes';
import { candidateOutputOf, completion, pairwiseAnswersOf, pairwiseReply, startFakeOpenAI, verdictReply, type FakeScript } from '../support/fake-openai';
import { deleteTestStreams, testRedisPrefix, uniqueSuffix } from '../support/isolation';
import { testServers } from '../support/servers';
import { mediaType, UPGRADE_JUDGE, upgradeEnv, type CapturedView, type UpgradeFixture } from './upgrade-views';

const root = path.resolve(__dirname, '../..');
const release = process.argv[2] ?? '8a3493e';
const fixtureDir = path.join(root, 'test', 'fixtures', 'upgrade');
/** Fixed, so the dump names one schema the test rewrites; no other text of the dump contains it. */
const schema = `evals_upgrade_${release.toLowerCase().replace(/[^a-z0-9_]/g, '_')}`;
/** Every judged output carries it: the dump must not (D1). */
const CANARY = 'UPGRADE-OUTPUT-CANARY';

/** FAIL in an output fails it, anything else passes; a pairwise request prefers the answer with BETTER. */
const judge: FakeScript = (request) => {
  const pair = pairwiseAnswersOf(request);
  if (pair) return completion(pairwiseReply(pair.first.includes('BETTER') ? 'first' : pair.second.includes('BETTER') ? 'second' : 'tie'));
  const output = candidateOutputOf(request) ?? '';
  return completion(output.includes('FAIL') ? verdictReply('fail', 0.1) : verdictReply('pass', 0.9));
};

function checkout(): { dir: string; remove(): void } {
  if (process.env.UPGRADE_OLD_CHECKOUT) return { dir: process.env.UPGRADE_OLD_CHECKOUT, remove: () => undefined };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `evals-release-${release}-`));
  execFileSync('git', ['worktree', 'add', '--detach', dir, release], { cwd: root, stdio: 'inherit' });
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'inherit' });
  return { dir, remove: () => execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: root, stdio: 'inherit' }) };
}

async function admin<T>(fn: (db: Client) => Promise<T>): Promise<T> {
  const db = new Client({ connectionString: testServers.postgres.url, options: `-c search_path=${schema}` });
  await db.connect();
  try {
    return await fn(db);
  } finally {
    await db.end();
  }
}

async function main(): Promise<void> {
  const old = checkout();
  const suffix = uniqueSuffix();
  const streamPrefix = `UPG_${suffix}_`;
  const fake = await startFakeOpenAI(judge);
  await admin((db) => db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
  let cluster: AppCluster | undefined;
  try {
    cluster = await startCluster({
      root: old.dir,
      schema,
      streamPrefix,
      subjectPrefix: `upg_${suffix}`,
      apps: ['ingestion', 'scoring-worker', 'read-model', 'regression'],
      env: upgradeEnv(fake.baseUrl, testRedisPrefix('upg')),
    });
    const made = await populate(cluster, `upg_${suffix}`, old.dir);
    createKey(old.dir);
    await settle();
    const views = await capture(cluster, made);
    await cluster.stopAll();
    cluster = undefined;
    const rows = await admin(rowCounts);
    const dump = dumpSchema();
    if (dump.includes(CANARY) || JSON.stringify(views).includes(CANARY)) throw new Error('the dump or an answer holds a candidate output (D1)');
    fs.mkdirSync(fixtureDir, { recursive: true });
    fs.writeFileSync(path.join(fixtureDir, `${release}.sql`), dump);
    const fixture: UpgradeFixture = { release, schema, rows, views };
    fs.writeFileSync(path.join(fixtureDir, `${release}.views.json`), `${JSON.stringify(fixture, null, 1)}\n`);
    process.stdout.write(`wrote ${release}.sql (${dump.length} bytes) and ${release}.views.json (${views.length} views) in ${path.relative(root, fixtureDir)}\n`);
  } finally {
    if (cluster) await cluster.stopAll();
    await deleteTestStreams(streamPrefix);
    await admin((db) => db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
    await fake.close();
    old.remove();
  }
}

async function call(cluster: AppCluster, app: AppName, method: string, route: string, body?: unknown): Promise<any> {
  const res = await fetch(cluster.url(app, route), { method, ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${route}: ${res.status} ${text.slice(0, 2000)}`);
  return text ? JSON.parse(text) : null;
}

const TRIAGE_V1 = [
  { id: 'route-billing', input: 'I was charged twice.', expected: 'billing' },
  { id: 'route-refund', input: 'Where is my refund?', expected: 'billing' },
  { id: 'route-crash', input: 'The app crashes on start.', expected: 'technical' },
  { id: 'route-timeouts', input: 'Your API answers 504.', expected: 'technical' },
  { id: 'route-password', input: 'The reset e-mail never arrives.', expected: 'account' },
  { id: 'route-delete', input: 'Delete my account.', expected: 'account' },
  { id: 'route-legal', input: 'My lawyer will call you.', expected: 'legal' },
  { id: 'reply-refund', input: { task: 'draft_reply', ticket: 'No refund yet.' }, scorer: { type: 'contains', value: ['refund', 'order'], ignore_case: true } },
  { id: 'reply-greets', input: { task: 'draft_reply', ticket: 'hello' }, scorer: { type: 'regex', pattern: '^(hi|hello|dear)\\b', flags: 'i' } },
  { id: 'reply-no-card', input: { task: 'draft_reply', ticket: 'My card 4111 was declined' }, scorer: { type: 'not_contains', value: ['4111'] } },
];
const TRIAGE_V2 = [
  ...TRIAGE_V1,
  { id: 'route-invoice', input: 'Send me the March invoice.', expected: 'billing' },
  { id: 'reply-json', input: { task: 'classify_json' }, scorer: { type: 'json_valid' } },
];
const GOOD: Record<string, string> = { 'reply-refund': 'Your refund for the order is on its way.', 'reply-greets': 'Hello, thanks for writing.', 'reply-no-card': 'The card was declined by the bank.', 'reply-json': '{"queue": "billing"}' };
const good = (c: { id: string; expected?: string }) => GOOD[c.id] ?? c.expected!;

/** The first `passing` cases answered well, the others wrongly; `missing` case ids get no output. */
function triageOutputs(cases: typeof TRIAGE_V2, passing: number, missing: string[] = []): Array<{ case_id: string; output: string }> {
  return cases.filter((c) => !missing.includes(c.id)).map((c, i) => ({ case_id: c.id, output: i < passing ? good(c) : 'wrong: 4111 goodbye' }));
}

const TONE_CASES = [
  ...['t1', 't2', 't3', 't4', 't5', 't6'].map((id) => ({ id, input: `Route ticket ${id}`, expected: 'billing' })),
  ...['j1', 'j2', 'j3', 'j4'].map((id) => ({ id, input: `Reply to ticket ${id}`, scorer: { type: 'llm_judge', rubric: UPGRADE_JUDGE.rubric } })),
];
function toneOutputs(tag: string, judgedFailing: number): Array<{ case_id: string; output: string }> {
  return TONE_CASES.map((c, i) => ({ case_id: c.id, output: c.id.startsWith('t') ? 'billing' : `${i - 6 < judgedFailing ? 'FAIL' : 'Kind'} reply ${c.id} ${tag} ${CANARY}` }));
}

/** What populate made that no list names: the views open them by id. */
interface Made {
  readonly setId: string;
  readonly reportId: string;
  readonly comparisonId: string;
}

async function populate(cluster: AppCluster, subjectPrefix: string, oldRoot: string): Promise<Made> {
  const ingest = (method: string, route: string, body?: unknown) => call(cluster, 'ingestion', method, route, body);
  const regression = (method: string, route: string, body?: unknown) => call(cluster, 'regression', method, route, body);
  const suite = (key: string, cases: unknown[], over: Record<string, unknown> = {}) =>
    ingest('POST', '/v1/suites', { key, description: `${key} (upgrade fixture)`, default_scorer: { type: 'exact', trim: true, ignore_case: true }, pass_threshold: 0.7, regression_threshold: 0.1, cases, ...over });
  const run = (body: Record<string, unknown>) => ingest('POST', '/v1/runs', { subject_kind: 'agent', ...body });
  const gate = (body: Record<string, unknown>) => ingest('POST', '/v1/gate', { subject_kind: 'agent', ...body });
  const pin = (suiteKey: string, subjectId: string, runId: string) => regression('POST', '/v1/baselines', { suite_key: suiteKey, subject_kind: 'agent', subject_id: subjectId, run_id: runId });

  // The README's flow: the example suite pushed as its YAML file (twice: the second push finds its source), a good and a regressed run.
  const yaml = await fetch(cluster.url('ingestion', '/v1/suites'), { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: fs.readFileSync(path.join(oldRoot, 'examples', 'support-triage.suite.yaml')) });
  if (yaml.status !== 201) throw new Error(`YAML push: ${yaml.status} ${await yaml.text()}`);
  await fetch(cluster.url('ingestion', '/v1/suites'), { method: 'POST', headers: { 'content-type': 'application/yaml' }, body: fs.readFileSync(path.join(oldRoot, 'examples', 'support-triage.suite.yaml')) });
  const exampleOutputs = (name: string) => fs.readFileSync(path.join(oldRoot, 'examples', `support-triage.${name}.outputs.jsonl`), 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
  await run({ run_id: 'demo-good', suite_key: 'support-triage', subject_id: 'bot-a', outputs: exampleOutputs('good') });
  await run({ run_id: 'demo-regressed', suite_key: 'support-triage', subject_id: 'bot-a', outputs: exampleOutputs('regressed') });

  // The triage suite, two versions; bot-a's baseline on each, then a regressed gate (finding) and its override.
  await suite('triage', TRIAGE_V1);
  await run({ run_id: 'tri-a-1', suite_key: 'triage', subject_id: 'bot-a', outputs: triageOutputs(TRIAGE_V1, 10) });
  await pin('triage', 'bot-a', 'tri-a-1');
  await suite('triage', TRIAGE_V2, { description: 'triage, with an invoice and a JSON case' });
  await run({ run_id: 'tri-a-2', suite_key: 'triage', subject_id: 'bot-a', outputs: triageOutputs(TRIAGE_V2, 12) });
  await pin('triage', 'bot-a', 'tri-a-2');
  const regressed = await gate({ run_id: 'tri-a-3', suite_key: 'triage', subject_id: 'bot-a', outputs: triageOutputs(TRIAGE_V2, 3) });
  if (regressed.recorded_verdict !== 'fail') throw new Error(`tri-a-3 gated ${regressed.recorded_verdict}`);
  await ingest('POST', `/v1/gate/${regressed.gate_id}/override`, { reason: 'Known upstream outage; the release is approved by the incident commander' });
  // bot-b: one output missing, a variant, an automatic baseline, a passing gate.
  await run({ run_id: 'tri-b-1', suite_key: 'triage', subject_id: 'bot-b', outputs: triageOutputs(TRIAGE_V2, 12, ['reply-json']) });
  await run({ run_id: 'tri-b-canary', suite_key: 'triage', subject_id: 'bot-b', variant: 'canary', outputs: triageOutputs(TRIAGE_V2, 9) });
  await gate({ run_id: 'tri-b-2', suite_key: 'triage', subject_id: 'bot-b', outputs: triageOutputs(TRIAGE_V2, 11) });
  // A sampled gate (GT3), a streamed run as the CLI sends a large outputs file (two batches, then the seal), a gate of two suites under Holm's correction (GT7).
  await gate({ run_id: 'tri-b-3', suite_key: 'triage', subject_id: 'bot-b', outputs: triageOutputs(TRIAGE_V2, 12), sample: { size: 6, seed: 'fixture-1' } });
  const streamed = triageOutputs(TRIAGE_V2, 10);
  await ingest('POST', '/v1/streamed-runs', { run_id: 'tri-b-streamed', suite_key: 'triage', subject_kind: 'agent', subject_id: 'bot-b' });
  await ingest('POST', '/v1/streamed-runs/tri-b-streamed/outputs', { outputs: streamed.slice(0, 6) });
  await ingest('POST', '/v1/streamed-runs/tri-b-streamed/outputs', { outputs: streamed.slice(6) });
  await ingest('POST', '/v1/streamed-runs/tri-b-streamed/seal', {});
  await gate({
    subject_id: 'bot-a',
    suites: [
      { suite_key: 'triage', run_id: 'fam-triage', outputs: triageOutputs(TRIAGE_V2, 12) },
      { suite_key: 'support-triage', run_id: 'fam-support', outputs: exampleOutputs('good') },
    ],
  });

  // The judge certified for the tone rubric (J4): 50 labelled items, 15 failing, on which it agrees with the humans.
  const items = Array.from({ length: 50 }, (_, i) => ({ item_id: `k${i}`, human: i < 15 ? 'fail' : 'pass', output: `calibration item ${i} ${i < 15 ? 'FAIL' : 'fine'} ${CANARY}` }));
  const set = await regression('POST', '/v1/calibration-sets', {
    name: 'tone labels',
    rubric: UPGRADE_JUDGE.rubric,
    items: items.map((i) => ({ item_id: i.item_id, output_hash: createHash('sha256').update(i.output, 'utf8').digest('hex'), human_verdict: i.human, output_chars: i.output.length })),
  });
  const report = await regression('POST', '/v1/calibrations', { set_id: set.set.id, outputs: items.map((i) => ({ item_id: i.item_id, output: i.output })) });
  if (report.status !== 'certified') throw new Error(`calibration ${report.status}`);
  // A budget as the FinOps module writes it (docs/judge.md: no API writes budgets); `total`, so its window never moves.
  await admin((db) => db.query(`INSERT INTO budgets (scope, limit_usd, spent_usd, mode, period) VALUES ('judge', 5, 0, 'allow', 'total')`));

  // The tone suite: deterministic and judged cases, both subjects, a gate with the judge, a pairwise comparison.
  await suite('tone', TONE_CASES, { pass_threshold: 0.6 });
  await run({ run_id: 'tone-a-1', suite_key: 'tone', subject_id: 'bot-a', outputs: toneOutputs('a1', 0) });
  await pin('tone', 'bot-a', 'tone-a-1');
  await run({ run_id: 'tone-b-1', suite_key: 'tone', subject_id: 'bot-b', outputs: toneOutputs('b1', 2) });
  const judged = await gate({ run_id: 'tone-a-2', suite_key: 'tone', subject_id: 'bot-a', outputs: toneOutputs('a2', 1) });
  if (!judged.judge?.used) throw new Error('the tone gate did not use the judge');
  const pairOutputs = (tag: string, better: boolean) => ['j1', 'j2', 'j3', 'j4'].map((id, i) => ({ case_id: id, output: `${better && i < 2 ? 'BETTER ' : ''}answer ${id} ${tag} ${CANARY}` }));
  const comparison = await regression('POST', '/v1/comparisons', { run_a: 'tone-a-1', run_b: 'tone-b-1', outputs_a: pairOutputs('a', true), outputs_b: pairOutputs('b', false) });

  // The session monitor (D3): three signals in one window, and one refused (a dead letter).
  await suite('guard', [
    { id: 'cost', input: { signal_field: 'cost_usd' }, scorer: { type: 'numeric_range', max: 0.05 } },
    { id: 'state', input: { signal_field: 'state' }, expected: 'completed', scorer: { type: 'exact' } },
    { id: 'severity', input: { signal_field: 'max_severity' }, scorer: { type: 'not_contains', value: ['high', 'critical'] } },
  ]);
  const nc = await connect({ servers: testServers.nats.url });
  try {
    const js = jetstream(nc);
    const occurredAt = new Date().toISOString();
    const publish = async (data: Record<string, unknown>) => {
      const id = randomUUID();
      await js.publish(`${subjectPrefix}.evals.session.signal`, JSON.stringify({ schema: 'evals.session.signal.v1', type: 'evals.session.signal', version: 1, data, metadata: { message_id: id, occurred_at: occurredAt } }), { msgID: id });
    };
    const base = { subject_kind: 'agent', subject_id: 'bot-a', occurred_at: occurredAt, finding_count: 0, tokens_in: 100, tokens_out: 20 };
    await publish({ ...base, session_id: 's1', state: 'completed', max_severity: 'none', cost_usd: 0.01 });
    await publish({ ...base, session_id: 's2', state: 'failed', max_severity: 'high', cost_usd: 0.08 });
    await publish({ ...base, session_id: 's3', state: 'completed', max_severity: 'none', cost_usd: 0.02 });
    await publish({ ...base, session_id: 's4', state: 'completed', max_severity: 'none', cost_usd: 0, transcript: `refused ${CANARY}` });
  } finally {
    await nc.close();
  }
  await eventually(async () => ((await admin((db) => db.query(`SELECT 1 FROM eval_results WHERE run_id LIKE 'monitor.guard.%'`))).rowCount ? true : undefined), 60_000, 'the monitor window closed');
  return { setId: set.set.id, reportId: report.report_id, comparisonId: comparison.comparison_id };
}

/** Until every run is projected and decided, the outbox is relayed and the read model has read the whole log. */
async function settle(): Promise<void> {
  await eventually(
    () =>
      admin(async (db) => {
        const { rows } = await db.query(`SELECT
          (SELECT count(*)::int FROM outbox WHERE published_at IS NULL) AS unpublished,
          (SELECT count(*)::int FROM runs WHERE status NOT IN ('completed', 'expired')) AS open,
          (SELECT COALESCE(max(position), 0) FROM events) AS head,
          (SELECT COALESCE(min(position), 0) FROM projection_checkpoints) AS read`);
        const r = rows[0];
        return r.unpublished === 0 && r.open === 0 && String(r.head) === String(r.read) ? true : undefined;
      }),
    60_000,
    'a quiet service',
  );
}

/** Every view a user sees, each list followed by the items it names, in the order the test replays them. */
async function capture(cluster: AppCluster, made: Made): Promise<CapturedView[]> {
  const views: CapturedView[] = [];
  const get = async (app: AppName, route: string): Promise<any> => {
    const res = await fetch(cluster.url(app, route));
    const text = await res.text();
    const type = mediaType(res);
    const json = type === 'application/json';
    if (res.status !== 200) throw new Error(`GET ${route}: ${res.status} ${text.slice(0, 1000)}`);
    views.push({ app, route, status: res.status, type, ...(json ? { json: JSON.parse(text) } : { text }) });
    return json ? JSON.parse(text) : text;
  };
  const suites = await get('ingestion', '/v1/suites?limit=500');
  for (const s of suites.items) {
    await get('ingestion', `/v1/suites/${s.suite_key}`);
    for (let v = 1; v <= s.latest_version; v++) await get('ingestion', `/v1/suites/${s.suite_key}/versions/${v}`);
  }
  const gates = await get('ingestion', '/v1/gates?limit=500');
  for (const g of gates.items) await get('ingestion', `/v1/gate/${g.gate_id}`);
  await get('ingestion', `/v1/gates?run_id=tri-a-3,tone-a-2`);
  await get('ingestion', '/v1/budgets');
  await get('ingestion', '/v1/keys?include_revoked=true');

  const runs = await get('read-model', '/v1/run-list?limit=200');
  for (const r of runs.items) {
    await get('read-model', `/v1/runs/${r.run_id}`);
    await get('read-model', `/v1/runs/${r.run_id}?include=cases`);
    await get('read-model', `/v1/runs/${r.run_id}/cases?limit=500`);
    await get('read-model', `/v1/runs/${r.run_id}/cases?passed=false&limit=500`);
    await get('read-model', `/v1/runs/${r.run_id}/events`);
  }
  for (const filter of ['suite_key=tone', 'subject_kind=agent&subject_id=bot-a', 'variant=canary', 'verdict=regressed', 'verdict=undecided', 'status=completed', 'offset=2&limit=3']) await get('read-model', `/v1/run-list?${filter}`);
  for (const query of ['', '?suite_key=triage', '?subject_kind=agent&subject_id=bot-b', '?window=2', '?format=csv', '?suite_key=tone&format=csv']) await get('read-model', `/v1/scorecards${query}`);

  await get('regression', '/v1/baselines');
  await get('regression', '/v1/baselines?suite_key=triage&subject_id=bot-a');
  const findings = await get('regression', '/v1/findings?limit=500');
  for (const f of findings.findings) await get('regression', `/v1/findings/${f.run_id}`);
  await get('regression', '/v1/findings?suite_key=triage&subject_id=bot-a');
  const judges = await get('regression', '/v1/judges');
  for (const j of judges.judges) {
    if (j.scope === null) continue;
    const pin = `model=${encodeURIComponent(j.judge_model)}&prompt_version=${encodeURIComponent(j.prompt_version)}&scope=${encodeURIComponent(j.scope)}`;
    await get('regression', `/v1/judges/status?${pin}`);
    await get('regression', `/v1/judges/status?${pin}&passed=3&n=4`);
  }
  await get('regression', `/v1/calibration-sets/${made.setId}`);
  await get('regression', `/v1/calibrations/${made.reportId}`);
  await get('regression', `/v1/comparisons/${made.comparisonId}`);
  return views;
}

/** An API key, by the release's own `npm run keys` (only its hash is stored). */
function createKey(oldRoot: string): void {
  execFileSync(process.execPath, ['-r', '@swc-node/register', path.join(oldRoot, 'libs', 'platform', 'src', 'auth', 'create-key.ts'), '--tier', 'viewer', '--name', 'fixture-viewer', '--created-by', 'upgrade-fixture'], {
    cwd: oldRoot,
    env: { ...process.env, DATABASE_URL: testServers.postgres.url, DATABASE_SCHEMA: schema },
    stdio: 'pipe',
  });
}

async function rowCounts(db: Client): Promise<Record<string, number>> {
  const { rows } = await db.query(`SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY 1`, [schema]);
  const counts: Record<string, number> = {};
  for (const { tablename } of rows) counts[tablename] = (await db.query(`SELECT count(*)::int AS n FROM "${schema}"."${tablename}"`)).rows[0].n;
  return counts;
}

/** Plain SQL, rows as INSERTs (a node client can run it: no COPY, no psql meta-commands), no owner or grants (the migrations grant). */
function dumpSchema(): string {
  const sql = execFileSync('pg_dump', ['--schema', schema, '--inserts', '--no-owner', '--no-privileges', '--no-comments', testServers.postgres.url], { maxBuffer: 256 * 1024 * 1024 }).toString();
  return sql
    .split('\n')
    .filter((line) => !line.startsWith('\\'))
    .join('\n');
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`upgrade-fixture: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
