import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { ApiKeyRepository, createDataSource, type ApiKeyTier } from '@evals/persistence';
import { startCluster, type AppCluster, type AppName } from './app-processes';
import { completion, pairwiseAnswersOf, pairwiseReply, candidateOutputOf, startFakeOpenAI, verdictReply, type FakeOpenAI } from './fake-openai';
import { createTestSchema, deleteTestStreams, testRedisPrefix, type TestSchema, uniqueSuffix } from './isolation';
import { testServers } from './servers';

/**
 * Issue 30 (docs/adr/0009-projects.md): the four apps on the real servers with access control on, a
 * platform admin key, projects made through `POST /v1/projects` and their keys through `POST /v1/keys`, and
 * one object of every kind seeded in a project - shared by the authorization matrix, the canary and the
 * two-teams tests, so each checks the same objects the same way.
 */
export const TIERS: readonly ApiKeyTier[] = ['viewer', 'operator', 'admin'];
export const FOUR_APPS: readonly AppName[] = ['ingestion', 'scoring-worker', 'read-model', 'regression'];
export const JUDGE_MODEL = 'gpt-4o-2024-08-06';

export interface Reply {
  readonly status: number;
  readonly text: string;
  readonly json: any;
  readonly headers: Headers;
}

export interface CallOptions {
  readonly key?: string;
  /** `X-Evals-Project`. */
  readonly project?: string;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  /** For an event stream that may stay open: read this long, then cancel (default: to its end). */
  readonly streamMs?: number;
}

export interface ProjectsCluster {
  readonly cluster: AppCluster;
  readonly schema: TestSchema;
  readonly ds: DataSource;
  readonly fake: FakeOpenAI;
  readonly streamPrefix: string;
  readonly subjectPrefix: string;
  readonly suffix: string;
  /** A platform admin key (api_keys.project NULL), as `npm run keys -- --platform` makes one. */
  readonly platformKey: string;
  call(app: AppName, method: string, path: string, options?: CallOptions): Promise<Reply>;
  stop(): Promise<void>;
}

/**
 * A judge for every request the seeds make: a pairwise request ties, a verdict request fails an output that
 * says FAIL and passes any other.
 */
function seedJudge() {
  return (request: Parameters<typeof candidateOutputOf>[0]) => {
    if (pairwiseAnswersOf(request)) return completion(pairwiseReply('tie'));
    const output = candidateOutputOf(request) ?? '';
    return completion(output.includes('FAIL') ? verdictReply('fail', 0.1) : verdictReply('pass', 0.9));
  };
}

export async function startProjectsCluster(label: string, env: Record<string, string> = {}): Promise<ProjectsCluster> {
  const suffix = uniqueSuffix();
  const streamPrefix = `${label.toUpperCase()}_${suffix}_`;
  const subjectPrefix = `${label}_${suffix}`;
  const pepper = `e2e-pepper-${suffix}`;
  const fake = await startFakeOpenAI(seedJudge());
  const schema = await createTestSchema(label);
  let started: AppCluster | undefined;
  try {
    started = await startCluster({
      schema: schema.schema,
      streamPrefix,
      subjectPrefix,
      apps: ['ingestion', 'scoring-worker', 'regression'],
      env: {
        EVALS_AUTH: 'required',
        EVALS_API_KEY_PEPPER: pepper,
        JUDGE_PROVIDER: 'openai',
        JUDGE_MODEL,
        JUDGE_BASE_URL: fake.baseUrl,
        JUDGE_API_KEY: 'test',
        JUDGE_MAX_RETRIES: '0',
        JUDGE_INPUT_USD_PER_MTOK: '2.5',
        JUDGE_OUTPUT_USD_PER_MTOK: '10',
        JUDGE_CACHE_PREFIX: testRedisPrefix(label),
        ...env,
      },
    });
    // The read model forwards the dashboard's gate, finding and judge requests to the other two apps (with the key and the project header).
    started.env.DASHBOARD_INGESTION_URL = started.url('ingestion', '');
    started.env.DASHBOARD_REGRESSION_URL = started.url('regression', '');
    await started.start('read-model');
  } catch (error) {
    await started?.stopAll();
    await fake.close();
    await deleteTestStreams(streamPrefix);
    await schema.drop();
    throw error;
  }
  const cluster = started;
  const ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize: 2 });
  await ds.initialize();
  const platformKey = (await new ApiKeyRepository({ pepper }).create(ds, { name: `platform-${label}`, tier: 'admin', project: null, createdBy: `${label}.e2e` })).key;
  const call = (app: AppName, method: string, path: string, options: CallOptions = {}) => request(cluster.url(app, path), method, options);
  return {
    cluster,
    schema,
    ds,
    fake,
    streamPrefix,
    subjectPrefix,
    suffix,
    platformKey,
    call,
    async stop() {
      await cluster.stopAll();
      await ds.destroy();
      await deleteTestStreams(streamPrefix);
      await schema.drop();
      await fake.close();
    },
  };
}

export async function request(url: string, method: string, options: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.key) headers['authorization'] = `Bearer ${options.key}`;
  if (options.project !== undefined) headers['x-evals-project'] = options.project;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const controller = new AbortController();
  const res = await fetch(url, { method, headers, ...(body !== undefined ? { body } : {}), signal: controller.signal });
  let text = '';
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream') && options.streamMs !== undefined) {
    // A live stream: what it sent within the window is its answer.
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    const until = Date.now() + options.streamMs;
    for (;;) {
      const left = until - Date.now();
      if (left <= 0) break;
      const chunk = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), left))]);
      if (chunk === null || chunk.done) break;
      text += decoder.decode(chunk.value, { stream: true });
    }
    controller.abort();
  } else {
    text = await res.text();
  }
  let json: unknown = undefined;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json, headers: res.headers };
}

export function expectStatus(reply: Reply, status: number | readonly number[], what = ''): void {
  const ok = typeof status === 'number' ? [status] : status;
  if (!ok.includes(reply.status)) throw new Error(`${what ? `${what}: ` : ''}expected HTTP ${ok.join(' or ')}, got ${reply.status}: ${reply.text.slice(0, 1500)}`);
}

export interface ProjectKeys {
  readonly project: string;
  readonly viewer: string;
  readonly operator: string;
  readonly admin: string;
  /** The ids of the three keys (api_keys.id), for DELETE /v1/keys/:id. */
  readonly ids: Record<ApiKeyTier, string>;
}

/** Makes project `id` with the platform key, and a key of each tier in it (the platform key names the project). */
export async function createProjectWithKeys(pc: ProjectsCluster, id: string): Promise<ProjectKeys> {
  const made = await pc.call('ingestion', 'POST', '/v1/projects', { key: pc.platformKey, body: { id, name: `team ${id}` } });
  expectStatus(made, [200, 201], `POST /v1/projects ${id}`);
  const keys: Record<string, string> = {};
  const ids: Record<string, string> = {};
  for (const tier of TIERS) {
    const issued = await pc.call('ingestion', 'POST', '/v1/keys', { key: pc.platformKey, body: { name: `${id}-${tier}`, tier, project: id } });
    expectStatus(issued, 201, `POST /v1/keys ${id} ${tier}`);
    keys[tier] = issued.json.key;
    ids[tier] = issued.json.api_key.id;
  }
  return { project: id, viewer: keys.viewer!, operator: keys.operator!, admin: keys.admin!, ids: ids as Record<ApiKeyTier, string> };
}

export const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** An exact-match suite: case `i` of `caseIds` expects `yes`; its tags and description carry `marker`. */
export function exactSuite(key: string, caseIds: readonly string[], marker: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    key,
    description: `suite of ${marker}`,
    default_scorer: { type: 'exact' },
    pass_threshold: 0.6,
    regression_threshold: 0.1,
    cases: caseIds.map((id, i) => ({ id, input: `question ${i} of ${marker}`, expected: 'yes', tags: [`tag-${marker}`] })),
    ...over,
  };
}

/** `passing` of `caseIds` answered `yes` (the first ones), the rest `no`. */
export const outputsFor = (caseIds: readonly string[], passing: number, marker = '') => caseIds.map((case_id, i) => ({ case_id, output: i < passing ? 'yes' : `no ${marker}`.trim() }));

/** Every object of one project the matrix and the canary look for, by kind. */
export interface SeededProject {
  readonly project: string;
  /** A suite key only this project has. */
  readonly ownSuite: string;
  /** A suite key the other project has too (each with its own cases). */
  readonly sharedSuite: string;
  readonly caseIds: readonly string[];
  readonly sharedCaseIds: readonly string[];
  readonly subjectId: string;
  readonly baseRunId: string;
  /** Regressed against the base run: it has a finding. */
  readonly candRunId: string;
  readonly sharedRunId: string;
  /** Opened with POST /v1/streamed-runs and never sealed by the seed. */
  readonly streamedRunId: string;
  readonly gateId: string;
  readonly findingId: string;
  readonly setId: string;
  readonly reportId: string;
  readonly comparisonId: string;
  readonly rubric: string;
  readonly budgetScope: string;
  /** The seed's steps that failed (each object kind stands in with an id that names nothing). */
  readonly problems: readonly string[];
  /**
   * Strings unique to this project's objects (ids, case ids, tags, subject, rubric hash): none may appear in
   * any answer to another project's key.
   */
  readonly canaries: readonly string[];
}

/**
 * Seeds one object of every kind in `keys.project`: two suites, a base run and a regressed candidate (a
 * finding, a scorecard, an automatic baseline), a run of the shared suite key, a pinned baseline, a failed
 * gate with an override, an open streamed run, a calibration set with its report, a comparison and a budget.
 * `tag` makes every id and label of the project unique (the canaries).
 */
export async function seedProject(pc: ProjectsCluster, keys: ProjectKeys, tag: string, sharedSuite: string): Promise<SeededProject> {
  const project = keys.project;
  const as = (key: string) => ({ key });
  const ownSuite = `own-${tag}`;
  const caseIds = Array.from({ length: 10 }, (_, i) => `case-${tag}-${i}`);
  const sharedCaseIds = Array.from({ length: 6 }, (_, i) => `shared-${tag}-${i}`);
  const subjectId = `bot-${tag}`;
  const runId = (what: string) => `${what}-${tag}`;
  // A step that fails (a feature not there yet) is recorded and the seed goes on, so one missing object
  // fails the checks of its kind and the seed test, not every check of the file.
  const problems: string[] = [];
  const step = async <T>(what: string, fn: () => Promise<T>, fallback: T): Promise<T> => {
    try {
      return await fn();
    } catch (error) {
      problems.push(`${what}: ${(error as Error).message.slice(0, 500)}`);
      return fallback;
    }
  };
  const post = async (app: AppName, path: string, body: unknown, key = keys.operator, status: number | number[] = [200, 201]) => {
    const r = await pc.call(app, 'POST', path, { ...as(key), body });
    expectStatus(r, status, `${project}: POST ${path}`);
    return r.json;
  };
  await step('own suite', () => post('ingestion', '/v1/suites', exactSuite(ownSuite, caseIds, tag), keys.operator, 201), null);
  await step('shared suite', () => post('ingestion', '/v1/suites', exactSuite(sharedSuite, sharedCaseIds, tag), keys.operator, 201), null);
  const run = (id: string, suite: string, ids: readonly string[], passing: number) =>
    post('ingestion', '/v1/runs', { run_id: id, suite_key: suite, subject_kind: 'agent', subject_id: subjectId, source: 'ci', outputs: outputsFor(ids, passing, tag) }, keys.operator, 200);
  const baseRunId = runId('base');
  const candRunId = runId('cand');
  const sharedRunId = runId('shared');
  await step('base run', () => run(baseRunId, ownSuite, caseIds, 10), null);
  await step('regressed run', async () => {
    const cand = await run(candRunId, ownSuite, caseIds, 3);
    if (cand.regression?.verdict !== 'regressed') throw new Error(`the candidate did not regress: ${JSON.stringify(cand.regression)}`);
  }, undefined);
  await step('shared run', () => run(sharedRunId, sharedSuite, sharedCaseIds, 5), null);
  await step('baseline pin', () => post('regression', '/v1/baselines', { suite_key: ownSuite, subject_kind: 'agent', subject_id: subjectId, run_id: baseRunId }, keys.operator, 201), null);
  const gateId = await step('gate and override', async () => {
    const gate = await post('ingestion', '/v1/gate', { suite_key: ownSuite, subject_kind: 'agent', subject_id: subjectId, outputs: outputsFor(caseIds, 2, tag) }, keys.operator, 200);
    if (gate.recorded_verdict !== 'fail') throw new Error(`the seeded gate did not fail: ${JSON.stringify(gate).slice(0, 500)}`);
    await post('ingestion', `/v1/gate/${gate.gate_id}/override`, { reason: `accepted for ${tag} by the on-call lead` }, keys.admin, 200);
    return gate.gate_id as string;
  }, randomUUID());
  const streamedRunId = runId('streamed');
  await step('streamed run', () => post('ingestion', '/v1/streamed-runs', { run_id: streamedRunId, suite_key: ownSuite, subject_kind: 'agent', subject_id: subjectId }, keys.operator, 200), null);
  const findingId = await step('finding', async () => {
    const finding = await pc.call('regression', 'GET', `/v1/findings/${candRunId}`, as(keys.viewer));
    expectStatus(finding, 200, `${project}: the candidate's finding`);
    return finding.json.finding_id as string;
  }, randomUUID());

  const rubric = `The answer resolves the request of ${tag}.`;
  // 60 items, 12 of them human fails, on which the judge agrees: the judge is certified for the rubric in this project (J4).
  const items = Array.from({ length: 60 }, (_, i) => {
    const human = i < 12 ? 'fail' : 'pass';
    return { item_id: `item-${tag}-${i}`, human, output: `labelled answer ${i} ${human === 'fail' ? 'FAIL' : 'fine'} ${tag}` };
  });
  const setId = await step('calibration set', async () => {
    const set = await post('regression', '/v1/calibration-sets', {
      name: `set-${tag}`,
      rubric,
      items: items.map((i) => ({ item_id: i.item_id, output_hash: sha256(i.output), human_verdict: i.human, output_chars: i.output.length })),
    });
    return set.set.id as string;
  }, randomUUID());
  const reportId = await step('calibration report', async () => {
    const report = await post('regression', '/v1/calibrations', { set_id: setId, outputs: items.map((i) => ({ item_id: i.item_id, output: i.output })) });
    if (report.status !== 'certified') throw new Error(`the judge was not certified: ${JSON.stringify(report).slice(0, 300)}`);
    return report.report_id as string;
  }, randomUUID());
  const comparisonId = await step('comparison', async () => {
    const comparison = await post('regression', '/v1/comparisons', { run_a: baseRunId, run_b: candRunId, outputs_a: outputsFor(caseIds.slice(0, 3), 3, tag), outputs_b: outputsFor(caseIds.slice(0, 3), 1, tag), rubric });
    return comparison.comparison_id as string;
  }, randomUUID());
  const budgetScope = `suite:${ownSuite}`;
  await step('budget', () => pc.ds.query(`INSERT INTO budgets (project, scope, limit_usd, spent_usd, mode, period) VALUES ($1, $2, 7.25, 0, 'block', 'month')`, [project, budgetScope]), null);

  return {
    project,
    ownSuite,
    sharedSuite,
    caseIds,
    sharedCaseIds,
    subjectId,
    baseRunId,
    candRunId,
    sharedRunId,
    streamedRunId,
    gateId,
    findingId,
    setId,
    reportId,
    comparisonId,
    rubric,
    budgetScope,
    problems,
    canaries: [tag, sha256(rubric), gateId, findingId, setId, reportId, comparisonId, ...Object.values(keys.ids)],
  };
}

/** Strings of `canaries` that `text` contains. */
export function leaked(text: string, canaries: readonly string[]): string[] {
  return canaries.filter((c) => text.includes(c));
}

/** A well-formed id of the same form as `value` that names nothing (a UUID for a UUID, 16 hex digits for a key id). */
export function missingLike(value: string, tag: string, other: string): string {
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) return randomUUID();
  if (/^[0-9a-f]{16}$/.test(value)) return randomBytes(8).toString('hex');
  if (value.includes(tag)) return value.split(tag).join(other);
  return `${value.slice(0, -4)}${randomBytes(2).toString('hex')}`;
}
