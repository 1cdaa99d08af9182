import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { eventually } from '../support/app-processes';
import { startEmbeddedServe, type EmbeddedServe } from '../support/embedded-process';

/**
 * R7 on the embedded default (`evals serve`: PGlite, the in-process bus): `POST /v1/runs` killed (SIGKILL)
 * while it publishes a 10 000-output run - opened, some outputs on the bus, not sealed - leaves nothing that a
 * retry of the same request cannot complete exactly once; the same run id with other outputs is 409
 * RUN_ID_CONFLICT after the restart too; and a run killed the same way that nobody retries expires after
 * `EVALS_RUN_TTL_SECONDS`: sealed `expired`, its unsent cases scored `missing_output` (docs/pipeline.md).
 */
const N = 10_000;
/** Outputs per `evals.work.score` message (apps/ingestion/src/work-publisher.ts): the forward of N outputs is N / CHUNK messages. */
const CHUNK = 500;
const SUITE = 'recovery';

const suite = {
  key: SUITE,
  default_scorer: { type: 'exact' },
  pass_threshold: 0.5,
  regression_threshold: 0.1,
  cases: Array.from({ length: N }, (_, i) => ({ id: `c${i}`, input: `q${i}`, expected: `a${i}` })),
};
/** Every fourth output wrong; `variant` changes one output, so the request's content (hash) changes too. */
const outputs = (variant = '') => Array.from({ length: N }, (_, i) => ({ case_id: `c${i}`, output: i % 4 === 0 ? `wrong${i}${i === 0 ? variant : ''}` : `a${i}` }));
const PASSED = N - N / 4;
const runRequest = (runId: string, variant = '') => ({ run_id: runId, suite_key: SUITE, subject_kind: 'agent', subject_id: 'recovery-bot', source: 'ci', outputs: outputs(variant) });

async function api(base: string, method: string, route: string, body?: unknown): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${base}${route}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(100_000),
  });
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** The state letter of every thread of `pid` (`/proc/<pid>/task/<tid>/stat`, the field after the command). */
function threadStates(pid: number): string[] {
  const dir = `/proc/${pid}/task`;
  return fs.readdirSync(dir).map((tid) => {
    const stat = fs.readFileSync(path.join(dir, tid, 'stat'), 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  });
}

/**
 * The ids of the work messages of `runId` that the bus has stored (journalled) so far, from the in-process bus's
 * journal of EVALS_WORK (docs/embedded.md: one JSON record per line; `pub` a message, `dup` the id of one
 * deleted but still inside the duplicate window). A torn last line is not a message.
 */
function journalledWork(dataDir: string, runId: string): { score: Set<string>; seal: boolean } {
  const file = path.join(dataDir, 'bus', 'EVALS_WORK.journal');
  const score = new Set<string>();
  let seal = false;
  let text = '';
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return { score, seal };
  }
  const prefix = `"id":"${runId}:`;
  for (const line of text.split('\n')) {
    if (!line.includes(prefix)) continue;
    let record: { k?: string; id?: string };
    try {
      record = JSON.parse(line);
    } catch {
      continue;
    }
    if ((record.k !== 'pub' && record.k !== 'dup') || typeof record.id !== 'string' || !record.id.startsWith(`${runId}:`)) continue;
    if (/:score:\d+$/.test(record.id)) score.add(record.id);
    else if (record.id.endsWith(':seal')) seal = true;
  }
  return { score, seal };
}

/**
 * Sends `POST /v1/runs` and SIGKILLs the server while the request is half done: as soon as the first of the
 * run's work messages is in the bus journal (so `run.opened` is appended) the process is frozen (SIGSTOP,
 * every thread stopped), the journal read - fewer than all N / CHUNK output messages and no seal there means
 * `run.sealed` was not appended yet, since the intake appends it only after the last output message is
 * stored - and then killed. Returns how many output messages the bus had stored, and what the client got.
 */
async function killWhilePublishing(server: EmbeddedServe, dataDir: string, runId: string, body: unknown): Promise<{ stored: number; sealed: boolean; answer: string }> {
  const pid = server.child.pid!;
  const request = fetch(`${server.url}/v1/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(100_000) }).then(
    (res) => `status ${res.status}`,
    (error: unknown) => `failed: ${error instanceof Error ? error.message : String(error)}`,
  );
  let answered: string | undefined;
  void request.then((a) => (answered = a));
  const deadline = Date.now() + 60_000;
  // A tight poll (not a sleep): the window between the first output message and the seal is short.
  while (journalledWork(dataDir, runId).score.size === 0) {
    if (answered !== undefined) throw new Error(`the request answered (${answered}) before any output of ${runId} reached the bus`);
    if (Date.now() > deadline) throw new Error(`no output of ${runId} reached the bus in 60 s:\n${server.stderr().slice(-2000)}`);
    await new Promise((r) => setImmediate(r));
  }
  server.child.kill('SIGSTOP');
  let work: ReturnType<typeof journalledWork>;
  try {
    await eventually(async () => (threadStates(pid).every((s) => s === 'T') ? true : undefined), 10_000, `every thread of ${pid} stopped`);
    work = journalledWork(dataDir, runId);
  } finally {
    await server.stop('SIGKILL');
  }
  return { stored: work.score.size, sealed: work.seal, answer: await request };
}

/** The run view once the run is completed and its regression decision projected. */
function completedRun(base: string, runId: string, timeoutMs = 90_000) {
  return eventually(
    async () => {
      const view = await api(base, 'GET', `/v1/runs/${runId}`);
      return view.status === 200 && view.body.run.status === 'completed' && view.body.eval_result && view.body.regression ? view.body : undefined;
    },
    timeoutMs,
    `run ${runId} completed`,
  );
}

describe('e2e: POST /v1/runs killed part way on the embedded default: retry and expiry (R7)', () => {
  let dataDir: string;
  let server: EmbeddedServe | undefined;

  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-recovery-'));
  });

  afterAll(async () => {
    await server?.stop('SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** The server on the data directory, started when none runs; the suite pushed (the same content is the same version). */
  async function serve(env?: Record<string, string>): Promise<EmbeddedServe> {
    if (server && server.child.exitCode === null && server.child.signalCode === null && env === undefined) return server;
    await server?.stop();
    server = await startEmbeddedServe({ dataDir, env });
    const pushed = await api(server.url, 'POST', '/v1/suites', suite);
    expect([200, 201]).toContain(pushed.status);
    return server;
  }

  it('a run killed after run.opened and before run.sealed: the same request after a restart completes it with exactly 10 000 evidence rows; other outputs under its id are 409', async () => {
    const runId = 'run-a';
    let s = await serve();
    const killed = await killWhilePublishing(s, dataDir, runId, runRequest(runId));
    // The kill landed part way: opened, some outputs stored by the bus, not all of them, no seal; no 200.
    expect(killed.answer).not.toBe('status 200');
    expect(killed.stored).toBeGreaterThan(0);
    expect(killed.stored).toBeLessThan(N / CHUNK);
    expect(killed.sealed).toBe(false);

    server = undefined;
    s = await serve();
    // Other outputs under the id of the half-done run are refused before anything is published for them.
    const early = await api(s.url, 'POST', '/v1/runs', runRequest(runId, '-other'));
    expect(early.status).toBe(409);
    expect(early.body.code).toBe('RUN_ID_CONFLICT');

    const retry = await api(s.url, 'POST', '/v1/runs', runRequest(runId));
    expect(retry.status).toBe(200);
    expect(retry.body.run).toMatchObject({ run_id: runId, status: 'completed', missing_outputs: 0 });
    expect(retry.body.run.summary).toMatchObject({ n: N, passed: PASSED });
    expect(retry.body.eval_result.metrics).toMatchObject({ n: N, passed: PASSED, missing_outputs: 0 });
    expect(retry.body.eval_result.metrics.expired).toBeUndefined();
    expect(retry.body.regression.completeness).toBe('complete');

    // Exactly one evidence row per case: the outputs stored before the kill were not scored twice.
    const view = await api(s.url, 'GET', `/v1/runs/${runId}?include=cases`);
    expect(view.status).toBe(200);
    expect(view.body.run.summary.n).toBe(N);
    expect(view.body.cases).toHaveLength(N);
    expect(new Set(view.body.cases.map((c: { case_id: string }) => c.case_id)).size).toBe(N);
    expect(view.body.cases.filter((c: { passed: boolean }) => c.passed)).toHaveLength(PASSED);
    expect(view.body.cases.some((c: { label: string }) => c.label === 'missing_output')).toBe(false);

    // The same request once more is the same run.
    const again = await api(s.url, 'POST', '/v1/runs', runRequest(runId));
    expect(again.status).toBe(200);
    expect(again.body.eval_result).toEqual(retry.body.eval_result);

    // The same run id with one output changed is another run's content.
    const conflict = await api(s.url, 'POST', '/v1/runs', runRequest(runId, '-changed'));
    expect(conflict.status).toBe(409);
    expect(conflict.body.code).toBe('RUN_ID_CONFLICT');
    expect((await api(s.url, 'GET', `/v1/runs/${runId}?include=cases`)).body.cases).toHaveLength(N);
  }, 120_000);

  it('a run killed the same way and never retried expires after EVALS_RUN_TTL_SECONDS: completeness expired, its unsent cases missing_output', async () => {
    const runId = 'run-b';
    let s = await serve();
    const killed = await killWhilePublishing(s, dataDir, runId, runRequest(runId));
    expect(killed.answer).not.toBe('status 200');
    expect(killed.stored).toBeGreaterThan(0);
    expect(killed.stored).toBeLessThan(N / CHUNK);
    expect(killed.sealed).toBe(false);
    const sent = killed.stored * CHUNK;

    server = undefined;
    s = await serve({ EVALS_RUN_TTL_SECONDS: '2' });
    const view = await completedRun(s.url, runId);
    expect(view.regression.completeness).toBe('expired');
    expect(view.regression).toMatchObject({ baseline_eligible: false, baseline_ineligible_reason: 'expired' });
    expect(view.run).toMatchObject({ status: 'completed', case_count: N, expired: true });
    expect(view.run.summary.n).toBe(N);
    const metrics = view.eval_result.metrics;
    expect(metrics).toMatchObject({ n: N, expired: true });
    // Every output the bus had stored before the kill was scored (at least once, in evidence exactly once), the rest are missing.
    expect(metrics.missing_outputs).toBe(N - sent);
    const cases = (await api(s.url, 'GET', `/v1/runs/${runId}?include=cases`)).body.cases as Array<{ case_id: string; label: string }>;
    expect(cases).toHaveLength(N);
    expect(new Set(cases.map((c) => c.case_id)).size).toBe(N);
    const scored = cases.filter((c) => c.label !== 'missing_output').length;
    expect(scored).toBe(sent);
    expect(metrics.missing_outputs + scored).toBe(N);

    // The completed run A is untouched by the sweep.
    const a = await api(s.url, 'GET', '/v1/runs/run-a');
    expect(a.body.regression.completeness).toBe('complete');
    expect(a.body.eval_result.metrics.expired).toBeUndefined();
    expect(await s.stop()).toBe(0);
    server = undefined;
  }, 120_000);
});
