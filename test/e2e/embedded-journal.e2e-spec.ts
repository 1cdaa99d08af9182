import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startEmbeddedServe, type EmbeddedServe } from '../support/embedded-process';

/**
 * Issue 18 part 2, through the command a user runs: `evals serve` refuses to start on a damaged bus journal
 * (a flipped byte in a record, a deleted journal whose state file records it) with exit 3 and a message that
 * names the file and says what to do; `evals serve --repair` says what it keeps and drops, and starts.
 */
const N = 10;
const root = path.resolve(__dirname, '../..');

function suite(key: string) {
  return { key, default_scorer: { type: 'exact' }, pass_threshold: 0.5, regression_threshold: 0.1, cases: Array.from({ length: N }, (_, i) => ({ id: `c${i}`, input: `q${i}`, expected: 'yes' })) };
}

async function api(base: string, method: string, route: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${route}`, { method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** `evals serve` expected to refuse: its exit code and everything it printed. */
function serveRefused(dataDir: string): Promise<{ code: number | null; output: string }> {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1' };
  for (const name of ['DATABASE_URL', 'DATABASE_SCHEMA', 'NATS_URL', 'REDIS_URL']) delete env[name];
  const child = spawn(process.execPath, [path.join(root, 'bin', 'evals.js'), 'serve', '--port', '0', '--data-dir', dataDir], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (output += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (output += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    }),
  );
}

/** The journal of the stream that keeps messages after a stop (a limits stream): the one with the most records. */
function fullestJournal(busDir: string): string {
  const journals = fs.readdirSync(busDir).filter((f) => f.endsWith('.journal'));
  const lines = (f: string) => fs.readFileSync(path.join(busDir, f), 'utf8').split('\n').filter((l) => l.includes('"k":"pub"')).length;
  const best = journals.sort((a, b) => lines(b) - lines(a))[0];
  expect(lines(best)).toBeGreaterThan(0);
  return path.join(busDir, best);
}

describe('e2e: evals serve refuses a damaged bus journal (exit 3) and --repair says what it drops', () => {
  let dataDir: string;
  let server: EmbeddedServe | undefined;

  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-journal-e2e-'));
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses a flipped byte, then a deleted journal, naming the file; --repair starts and the runs are still there', async () => {
    server = await startEmbeddedServe({ dataDir });
    expect((await api(server.url, 'POST', '/v1/suites', suite('journal-suite'))).status).toBe(201);
    const run = await api(server.url, 'POST', '/v1/runs', {
      run_id: 'r-journal',
      suite_key: 'journal-suite',
      subject_kind: 'agent',
      subject_id: 'bot',
      source: 'ci',
      outputs: Array.from({ length: N }, (_, i) => ({ case_id: `c${i}`, output: i < 7 ? 'yes' : 'no' })),
    });
    expect(run.status).toBe(200);
    expect(await server.stop('SIGTERM')).toBe(0);
    server = undefined;

    // One byte flipped inside a message's payload: before, this was read as a different message.
    const busDir = path.join(dataDir, 'bus');
    const file = fullestJournal(busDir);
    const bytes = fs.readFileSync(file);
    const at = bytes.indexOf('"d":"', bytes.indexOf('"k":"pub"')) + 10;
    bytes[at] ^= 0x04;
    fs.writeFileSync(file, bytes);
    const flipped = await serveRefused(dataDir);
    expect(flipped.code).toBe(3);
    expect(flipped.output).toContain(file);
    expect(flipped.output).toMatch(/is damaged at line \d+ \(byte \d+\): its checksum does not match/);
    expect(flipped.output).toContain('evals serve --repair');

    // --repair: lists what it found, kept and dropped, then serves; the run (in PostgreSQL) is intact.
    server = await startEmbeddedServe({ dataDir, args: ['--repair'] });
    const said = server.stderr() + server.stdout();
    expect(said).toMatch(new RegExp(`${path.basename(file)}: repaired`));
    expect(said).toMatch(/dropped: line \d+ \(byte \d+, \d+ bytes\): its checksum does not match/);
    expect(said).toMatch(/kept: \d+ intact records/);
    expect((await api(server.url, 'GET', '/v1/runs/r-journal')).body.eval_result).toMatchObject({ run_id: 'r-journal', metrics: { n: N, passed: 7 } });
    expect(await server.stop('SIGTERM')).toBe(0);
    server = undefined;

    // A deleted journal whose state file records it: refused the same way (before, an empty stream).
    const work = path.join(busDir, 'EVALS_WORK.journal');
    fs.rmSync(work);
    const deleted = await serveRefused(dataDir);
    expect(deleted.code).toBe(3);
    expect(deleted.output).toContain(work);
    expect(deleted.output).toMatch(/is missing, though its state file EVALS_WORK\.state records generation \d+/);
  }, 300_000);
});
