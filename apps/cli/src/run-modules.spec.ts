import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { MAX_INLINE_OUTPUTS } from '@evals/limits';
import { repoRoot } from './cli.testing';

/**
 * Issue 15: what `evals run` loads for a suite key and an outputs file above the inline cap (the streamed
 * run), in a real `node bin/evals.js` process against a loopback stand-in of the streamed-run API. The client
 * needs the limits and id formats, not the DTO classes: @evals/contracts would bring class-validator,
 * validator and libphonenumber-js (about 60% of the module loading and 30 MB of RSS). And its requests go
 * over node:http, not the global fetch (undici: its WebAssembly parser costs about 40 MB of peak RSS and
 * half a second at exit; http-transport.ts).
 */
const REPORT = `process.on('exit', () => process.stderr.write('\\nMODULES ' + JSON.stringify({ files: Object.keys(require.cache), builtins: process.moduleLoadList }) + '\\n'));\n`;

interface Loaded {
  readonly files: string[];
  readonly builtins: string[];
}

describe('unit: the modules `evals run` loads for a streamed run (issue 15, the CLI under 200 MB)', () => {
  let dir: string;
  let server: http.Server;
  let base: string;
  const received = { outputs: 0, batches: 0, sealed: 0 };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-run-modules-'));
    server = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (d: string) => (body += d));
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        const url = req.url ?? '';
        if (url === '/v1/streamed-runs') return res.end(JSON.stringify({ run_id: 'modules-run', case_count: MAX_INLINE_OUTPUTS + 1, created: true, phase: 'open' }));
        if (url.endsWith('/outputs')) {
          received.batches++;
          received.outputs += (JSON.parse(body) as { outputs: unknown[] }).outputs.length;
          return res.end(JSON.stringify({ accepted: 0 }));
        }
        if (url.endsWith('/seal')) {
          received.sealed++;
          const summary = { n: MAX_INLINE_OUTPUTS + 1, passed: MAX_INLINE_OUTPUTS + 1, score: 1, run_passed: true };
          const run = { run_id: 'modules-run', status: 'completed', suite_key: 'modules-suite', suite_version: 1, subject_kind: 'agent', subject_id: 'bot', pass_threshold: 0.5, summary };
          return res.end(JSON.stringify({ run, eval_result: {}, regression: { verdict: 'no_baseline' } }));
        }
        res.statusCode = 404;
        res.end(JSON.stringify({ code: 'NOT_FOUND', message: url }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function run(args: string[]): Promise<{ code: number | null; stdout: string; loaded: Loaded }> {
    const preload = path.join(dir, 'report-modules.js');
    fs.writeFileSync(preload, REPORT);
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['-r', preload, path.join(repoRoot, 'bin/evals.js'), ...args], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir(), NO_COLOR: '1', EVALS_NO_PROGRESS: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => {
        const line = /^MODULES (.*)$/m.exec(stderr);
        if (!line) return reject(new Error(`no module list from the child (exit ${code}): ${stderr.slice(0, 2000)}`));
        resolve({ code, stdout, loaded: JSON.parse(line[1]) as Loaded });
      });
    });
  }

  it('a suite key and more outputs than the inline cap: streamed, without class-validator, libphonenumber-js or undici', async () => {
    const outputs = path.join(dir, 'outputs.jsonl');
    const lines: string[] = [];
    for (let i = 0; i <= MAX_INLINE_OUTPUTS; i++) lines.push(JSON.stringify({ case_id: `c${i}`, output: `answer-${i}` }));
    fs.writeFileSync(outputs, lines.join('\n') + '\n');

    const { code, stdout, loaded } = await run(['run', '--server', base, '--suite', 'modules-suite', '--outputs', outputs, '--subject-id', 'bot', '--run-id', 'modules-run', '--json']);

    expect(code).toBe(0);
    expect(JSON.parse(stdout).run.run_id).toBe('modules-run');
    // The streamed path was taken: every output sent in batches, the run sealed.
    expect(received).toEqual({ outputs: MAX_INLINE_OUTPUTS + 1, batches: expect.any(Number), sealed: 1 });
    expect(received.batches).toBeGreaterThan(1);
    const files = loaded.files.map((f) => path.relative(repoRoot, f).split(path.sep).join('/'));
    expect(files).toContain('apps/cli/src/streamed-run.ts');
    expect(files).toContain('libs/limits/src/index.ts');
    const heavy = files.filter((f) => /node_modules\/(class-validator|class-transformer|validator|libphonenumber-js)\/|^libs\/(contracts|domain|scorers)\//.test(f));
    expect(heavy).toEqual([]);
    expect(loaded.builtins.filter((m) => /undici/.test(m))).toEqual([]);
  }, 60_000);
});
