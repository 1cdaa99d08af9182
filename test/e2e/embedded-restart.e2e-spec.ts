import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runEvals } from '../../apps/cli/src/e2e.testing';
import { startEmbeddedServe, type EmbeddedServe } from '../support/embedded-process';

/**
 * `evals serve` on the embedded default (issue 7, docs/embedded.md): the data directory survives a restart
 * with runs and baselines intact; other commands find the running server through the directory; a second
 * server on the same directory is refused; and no candidate output reaches any file of the directory, the
 * logs or an answer (D1).
 */
const CANARY = 'CANARY-embedded-0b5e1d7a-never-stored';
const N = 20;

function suite(key: string) {
  return { key, default_scorer: { type: 'exact' }, pass_threshold: 0.8, regression_threshold: 0.1, cases: Array.from({ length: N }, (_, i) => ({ id: `c${i}`, input: `q${i}`, expected: 'yes' })) };
}

function outputs(passing: number, filler = 'no') {
  return Array.from({ length: N }, (_, i) => ({ case_id: `c${i}`, output: i < passing ? 'yes' : filler }));
}

async function api(base: string, method: string, route: string, body?: unknown): Promise<{ status: number; body: any; text: string }> {
  const res = await fetch(`${base}${route}`, { method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  return { status: res.status, body: parsed, text };
}

/**
 * Whether `bytes` hold the canary: as it is, or base64-encoded in a bus journal record's payload (`d`),
 * which a plain byte search would never see.
 */
function holdsCanary(bytes: Buffer): boolean {
  if (bytes.includes(Buffer.from(CANARY))) return true;
  for (const line of bytes.toString('utf8').split('\n')) {
    try {
      const record = JSON.parse(line) as { d?: unknown };
      if (typeof record.d === 'string' && Buffer.from(record.d, 'base64').includes(Buffer.from(CANARY))) return true;
    } catch {
      // not a JSON line
    }
  }
  return false;
}

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

describe('e2e: evals serve keeps its data across a restart (issue 7)', () => {
  let dataDir: string;
  let work: string;
  let server: EmbeddedServe | undefined;
  const logs: string[] = [];

  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-serve-'));
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-serve-work-'));
  });

  afterAll(async () => {
    await server?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('runs, a pinned baseline and the suite are there after SIGTERM and a new start; the next run compares against the pin', async () => {
    server = await startEmbeddedServe({ dataDir });
    expect(server.stdout()).toContain('database: pglite, bus: in-process');
    const key = 'restart-suite';
    expect((await api(server.url, 'POST', '/v1/suites', suite(key))).status).toBe(201);
    const base = await api(server.url, 'POST', '/v1/runs', { run_id: 'r-base', suite_key: key, subject_kind: 'agent', subject_id: 'bot', source: 'ci', outputs: outputs(19, CANARY) });
    expect(base.status).toBe(200);
    expect(base.body.run.status).toBe('completed');
    const pin = await api(server.url, 'POST', '/v1/baselines', { suite_key: key, subject_kind: 'agent', subject_id: 'bot', run_id: 'r-base' });
    expect(pin.status).toBe(201);
    const second = await api(server.url, 'POST', '/v1/runs', { run_id: 'r-second', suite_key: key, subject_kind: 'agent', subject_id: 'bot', source: 'ci', outputs: outputs(18, CANARY) });
    expect(second.body.regression.baseline_run_id).toBe('r-base');
    const before = (await api(server.url, 'GET', '/v1/runs/r-base')).body;

    logs.push(server.stdout(), server.stderr());
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(fs.existsSync(path.join(dataDir, 'owner.json'))).toBe(false);

    server = await startEmbeddedServe({ dataDir });
    const after = await api(server.url, 'GET', '/v1/runs/r-base');
    expect(after.status).toBe(200);
    expect(after.body.eval_result).toEqual(before.eval_result);
    expect(after.body.run).toEqual(before.run);
    const pins = await api(server.url, 'GET', `/v1/baselines?suite_key=${key}`);
    expect(pins.body.pins).toEqual([expect.objectContaining({ suite_key: key, subject_id: 'bot', run_id: 'r-base' })]);
    const version = await api(server.url, 'GET', `/v1/suites/${key}`);
    expect(version.body.suite).toMatchObject({ suite_key: key, version: 1 });
    // The same content pushed again is the same version, not a new one (V2), after the restart too.
    const again = await api(server.url, 'POST', '/v1/suites', suite(key));
    expect(again.body).toMatchObject({ created: false, suite: { version: 1 } });

    const candidate = await api(server.url, 'POST', '/v1/runs', { run_id: 'r-cand', suite_key: key, subject_kind: 'agent', subject_id: 'bot', source: 'ci', outputs: outputs(8, CANARY) });
    expect(candidate.status).toBe(200);
    expect(candidate.body.regression).toMatchObject({ verdict: 'regressed', baseline_run_id: 'r-base', chosen_by: 'pinned' });
    const finding = await api(server.url, 'GET', '/v1/findings/r-cand');
    expect(finding.body).toMatchObject({ run_id: 'r-cand', baseline_run_id: 'r-base', run: { passed: 8, n: N }, baseline: { passed: 19, n: N } });
    for (const answer of [base, second, candidate, after, finding]) expect(answer.text).not.toContain(CANARY);
  }, 180_000);

  it('another command without --server uses the running server (through owner.json), and a second server on the directory is refused', async () => {
    expect(server).toBeDefined();
    const owner = JSON.parse(fs.readFileSync(path.join(dataDir, 'owner.json'), 'utf8'));
    expect(owner).toEqual({ pid: server!.child.pid, mode: 'serve', url: server!.url });

    const env = { EVALS_DATA_DIR: dataDir, EVALS_NO_PROGRESS: '1' };
    const list = await runEvals(['baseline', 'list', '--json'], env, work);
    expect(list.code).toBe(0);
    expect(list.stderr).not.toContain('started for this command');
    expect(JSON.parse(list.stdout).pins).toEqual([expect.objectContaining({ run_id: 'r-base' })]);

    const file = path.join(work, 'out.jsonl');
    fs.writeFileSync(file, outputs(20, CANARY).map((o) => JSON.stringify(o)).join('\n'));
    const run = await runEvals(['run', '--suite', 'restart-suite', '--outputs', file, '--subject-id', 'bot', '--run-id', 'r-cli', '--json'], env, work);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ run: { run_id: 'r-cli', status: 'completed' } });
    expect(run.stdout + run.stderr).not.toContain(CANARY);

    const second = await runEvals(['serve', '--port', '0', '--data-dir', dataDir], {}, work);
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(`is open in process ${server!.child.pid}`);
  }, 120_000);

  it('no candidate output is in any file of the data directory or in the logs once the server stopped (D1)', async () => {
    logs.push(server!.stdout(), server!.stderr());
    expect(await server!.stop('SIGTERM')).toBe(0);
    server = undefined;
    const files = filesUnder(dataDir);
    expect(files.some((f) => f.includes(`${path.sep}postgres${path.sep}`))).toBe(true);
    expect(files.some((f) => f.includes(`${path.sep}bus${path.sep}`))).toBe(true);
    // The scan itself can see a journalled payload: a record as the bus writes it.
    expect(holdsCanary(Buffer.from(`${JSON.stringify({ k: 'pub', seq: 1, d: Buffer.from(`{"output":"${CANARY}"}`).toString('base64') })}\n`))).toBe(true);
    const leaks = files.filter((f) => holdsCanary(fs.readFileSync(f)));
    expect(leaks).toEqual([]);
    expect(logs.join('\n')).not.toContain(CANARY);
    expect(logs.join('\n').length).toBeGreaterThan(0);
  }, 60_000);
});

describe('e2e: evals serve after a crash (SIGKILL) (issue 7)', () => {
  let dataDir: string;

  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-serve-crash-'));
  });

  afterAll(() => {
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('takes over the dead owner and its socket, recovers PGlite, and has every completed run and pin', async () => {
    let server = await startEmbeddedServe({ dataDir });
    expect((await api(server.url, 'POST', '/v1/suites', suite('crash-suite'))).status).toBe(201);
    const run = await api(server.url, 'POST', '/v1/runs', { run_id: 'r-crash', suite_key: 'crash-suite', subject_kind: 'agent', subject_id: 'bot', source: 'ci', outputs: outputs(15) });
    expect(run.body.run.status).toBe('completed');
    expect((await api(server.url, 'POST', '/v1/baselines', { suite_key: 'crash-suite', subject_kind: 'agent', subject_id: 'bot', run_id: 'r-crash' })).status).toBe(201);
    await server.stop('SIGKILL');
    // What a crash leaves behind: the dead process's claim (and PGlite's socket file).
    expect(JSON.parse(fs.readFileSync(path.join(dataDir, 'owner.json'), 'utf8')).pid).toBe(server.child.pid);

    server = await startEmbeddedServe({ dataDir });
    try {
      const after = await api(server.url, 'GET', '/v1/runs/r-crash');
      expect(after.body.eval_result).toEqual(run.body.eval_result);
      expect((await api(server.url, 'GET', '/v1/baselines?suite_key=crash-suite')).body.pins).toEqual([expect.objectContaining({ run_id: 'r-crash' })]);
      const next = await api(server.url, 'POST', '/v1/runs', { run_id: 'r-after', suite_key: 'crash-suite', subject_kind: 'agent', subject_id: 'bot', source: 'ci', outputs: outputs(14) });
      expect(next.body.regression).toMatchObject({ baseline_run_id: 'r-crash', chosen_by: 'pinned' });
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 180_000);
});

describe('e2e: evals serve refuses a bad start with a usage or start-up exit code, never the gate-failed one (X5)', () => {
  let dataDir: string;

  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-serve-bad-'));
  });

  afterAll(() => {
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('DATABASE_URL without NATS_URL is refused (exit 2): a private bus would drain a shared outbox', async () => {
    const r = await runEvals(['serve', '--port', '0', '--data-dir', dataDir], { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres' }, os.tmpdir());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('NATS_URL: set both DATABASE_URL and NATS_URL');
    expect(fs.existsSync(path.join(dataDir, 'owner.json'))).toBe(false);
  }, 60_000);

  it('a start-up that fails inside the application (the bus directory is a file) exits 3, releases the directory and closes PGlite', async () => {
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(path.join(dataDir, 'bus'), 'not a directory');
    const r = await runEvals(['serve', '--port', '0', '--data-dir', dataDir], {}, os.tmpdir());
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('evals serve: could not start');
    expect(fs.existsSync(path.join(dataDir, 'owner.json'))).toBe(false);
    // The directory opens again once the cause is gone: PGlite was closed, not left half-open.
    fs.rmSync(path.join(dataDir, 'bus'));
    const serve = await startEmbeddedServe({ dataDir });
    expect((await api(serve.url, 'GET', '/health')).body).toMatchObject({ status: 'ok' });
    expect(await serve.stop()).toBe(0);
  }, 120_000);
});
