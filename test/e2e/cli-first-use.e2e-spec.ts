import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { runEvals } from '../../apps/cli/src/e2e.testing';
import { startEmbeddedServe, type EmbeddedServe } from '../support/embedded-process';

/**
 * Issue 16 part 5: the real `evals` CLI (`node bin/evals.js`) as a new user meets it, on the embedded
 * default and a fresh data directory - `--suite` given a file, a mistyped key, a 1 MB output, outputs
 * files in other JSON shapes, `evals serve`'s banner and log file, and the README's follow-up right after
 * `npm run demo`. docs/cli.md.
 */
const root = path.resolve(__dirname, '../..');
const SUITE_FILE = 'examples/support-triage.suite.yaml';
const GOOD = 'examples/support-triage.good.outputs.jsonl';

describe('e2e: the evals CLI on first use (issue 16)', () => {
  let dir: string;
  let env: Record<string, string>;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-cli-first-'));
    env = { EVALS_DATA_DIR: path.join(dir, 'data'), EVALS_NO_PROGRESS: '1' };
  });

  afterAll(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('`evals run --suite examples/support-triage.suite.yaml` on a fresh data directory pushes the file, says the version and uses it', async () => {
    const first = await runEvals(['run', '--suite', SUITE_FILE, '--outputs', GOOD, '--subject-id', 'bot'], env);
    if (first.code !== 0) throw new Error(`exit ${first.code}\n${first.stdout}\n${first.stderr}`);
    expect(first.stderr).toContain(`evals run: suite file ${SUITE_FILE} is support-triage v1, pushed as a new version; using support-triage v1`);
    expect(first.stdout).toMatch(/run cli-[0-9a-f-]+: PASS/);
    expect(first.stdout).toContain('suite support-triage v1');
    // Idempotent: the same file again is the same version.
    const again = await runEvals(['run', '--suite', SUITE_FILE, '--outputs', GOOD, '--subject-id', 'bot', '--json'], env);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('is support-triage v1, already stored (identical content); using support-triage v1');
    expect(JSON.parse(again.stdout).run).toMatchObject({ suite_key: 'support-triage', suite_version: 1 });
  }, 300_000);

  it('an outputs file as a pretty-printed JSON array with a BOM is the same run as its JSON Lines', async () => {
    const rows = fs
      .readFileSync(path.join(root, GOOD), 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l));
    const file = path.join(dir, 'good.json');
    fs.writeFileSync(file, `\uFEFF${JSON.stringify(rows, null, 2)}\n`);
    const r = await runEvals(['run', '--suite', 'support-triage', '--outputs', file, '--subject-id', 'bot', '--json'], env);
    if (r.code !== 0) throw new Error(`exit ${r.code}\n${r.stdout}\n${r.stderr}`);
    expect(JSON.parse(r.stdout).run.summary).toMatchObject({ n: rows.length });
    // A bad object is named by the line of the file it starts on, not by its index in the array.
    const lines = JSON.stringify(rows, null, 2).split('\n');
    lines[7] = lines[7].replace('"output"', '"outptu"'); // the second object: lines 6 to 9
    fs.writeFileSync(file, lines.join('\n'));
    const bad = await runEvals(['run', '--suite', 'support-triage', '--outputs', file, '--subject-id', 'bot'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`${file}:6: needs a string case_id and a string output`);
    expect(bad.stderr).not.toContain('usage:');
  }, 300_000);

  it('a mistyped key lists the close matches and the known suites', async () => {
    const r = await runEvals(['run', '--suite', 'support-traige', '--outputs', GOOD, '--subject-id', 'bot'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('HTTP 404 SUITE_NOT_FOUND');
    expect(r.stderr).toMatch(/no suite support-traige on http:\/\/127\.0\.0\.1:\d+; did you mean support-triage\?/);
    expect(r.stderr).toMatch(/known suites: extraction-json \(file examples\/extraction-json\.suite\.yaml, not pushed\), reply-tone \(file examples\/reply-tone\.suite\.yaml, not pushed\), support-triage\n/);
    expect(r.stderr).not.toContain('usage:');
  }, 300_000);

  it('a 1 MB output is refused before anything is sent, naming its limit and case id', async () => {
    const requests: string[] = [];
    const server = http.createServer((req, res) => {
      requests.push(`${req.method} ${req.url}`);
      res.writeHead(500).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const file = path.join(dir, 'big.jsonl');
      fs.writeFileSync(file, [JSON.stringify({ case_id: 'route-double-charge', output: 'billing' }), JSON.stringify({ case_id: 'route-app-crash', output: 'z'.repeat(1024 * 1024) })].join('\n'));
      const serverEnv = { EVALS_SERVER: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
      for (const suite of ['support-triage', SUITE_FILE]) {
        const r = await runEvals(['run', '--suite', suite, '--outputs', file, '--subject-id', 'bot'], serverEnv);
        expect(r.code).toBe(2);
        expect(r.stderr).toContain(`${file}:2: the output of case route-app-crash is 1,048,576 bytes (1 MiB); the limit is 524,288 bytes (512 KiB) per output (OUTPUT_TOO_LARGE`);
        expect(r.stderr).not.toContain('zzzz');
      }
      expect(requests).toEqual([]);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  }, 60_000);

  it("the README's follow-up gate, right after `npm run demo`, compares with the demo's baseline", async () => {
    const dataDir = path.join(dir, 'demo-data');
    const demoEnv = { EVALS_DATA_DIR: dataDir, EVALS_NO_PROGRESS: '1' };
    const demo = await runEvals(['demo'], demoEnv);
    if (demo.code !== 0) throw new Error(`demo exit ${demo.code}\n${demo.stdout}\n${demo.stderr}`);
    // The command as the README prints it, so the README and this test cannot drift apart.
    const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
    const line = /^npx evals gate (.*)$/m.exec(readme.slice(readme.indexOf('npm run demo')));
    expect(line).not.toBeNull();
    const args = line![1].split(/\s+/).filter(Boolean);
    expect(args).toEqual(expect.arrayContaining(['--subject-id', 'demo-support-bot']));
    const gate = await runEvals(['gate', ...args], demoEnv);
    expect(gate.code).toBe(1);
    expect(gate.stdout).toMatch(/regression: REGRESSED against demo-[0-9a-f]{8}-baseline \(pinned\)/);
    expect(gate.stdout).not.toContain('no_baseline');
    expect(gate.stdout).toContain('- regressed: the score dropped');
  }, 400_000);
});

describe('e2e: evals serve prints its banner first and logs to a file in the data directory (issue 16)', () => {
  let dir: string;
  let server: EmbeddedServe | undefined;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-serve-banner-'));
  });

  afterAll(async () => {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the first stdout line is the banner; the JSON log lines are in <data-dir>/serve.log', async () => {
    const dataDir = path.join(dir, 'data');
    server = await startEmbeddedServe({ dataDir });
    const first = server.stdout().split('\n')[0];
    expect(first).toMatch(/^evals serve: http:\/\/127\.0\.0\.1:\d+ {2}\(database: pglite, bus: in-process, data: /);
    expect(server.stdout()).toContain(`logs: ${path.join(dataDir, 'serve.log')}`);
    expect(server.stdout()).not.toContain('{"time"');
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    expect(await server.stop('SIGTERM')).toBe(0);
    server = undefined;
    const log = fs.readFileSync(path.join(dataDir, 'serve.log'), 'utf8').trim().split('\n');
    expect(log.length).toBeGreaterThan(5);
    for (const l of log) expect(JSON.parse(l)).toMatchObject({ app: 'evals', level: expect.any(String) });
    expect(log.some((l) => JSON.parse(l).msg === 'all-in-one listening')).toBe(true);
    expect((fs.statSync(path.join(dataDir, 'serve.log')).mode & 0o777).toString(8)).toBe('600');
  }, 300_000);

  it('--log-file - puts the log lines on stdout after the banner; --log-level warn keeps the info lines out', async () => {
    server = await startEmbeddedServe({ dataDir: path.join(dir, 'data'), args: ['--log-file', '-'] });
    expect(await server.stop('SIGTERM')).toBe(0);
    const lines = server.stdout().trim().split('\n');
    expect(lines[0]).toMatch(/^evals serve: http:\/\/127\.0\.0\.1:\d+ /);
    expect(lines.filter((l) => l.startsWith('{"time"')).length).toBeGreaterThan(5);
    expect(lines[lines.length - 1]).toBe('evals serve: stopped');
    server = await startEmbeddedServe({ dataDir: path.join(dir, 'quiet'), args: ['--log-file', '-', '--log-level', 'warn'] });
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(server.stdout()).not.toContain('"level":"info"');
    server = undefined;
  }, 400_000);
});
