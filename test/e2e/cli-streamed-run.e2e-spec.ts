import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MAX_INLINE_OUTPUTS } from '@evals/contracts';
import { startEmbeddedServe, type EmbeddedServe } from '../support/embedded-process';

/**
 * Issue 15.1: `evals run` above the inline cap streams. 25 000 outputs (2.5x MAX_INLINE_OUTPUTS) through
 * `evals run` against `evals serve` on the embedded default: the run is opened, fed in batches and sealed
 * (POST /v1/streamed-runs), completes with the aggregate the pure core computes locally from the same files
 * (`evals score`), and the client's peak RSS stays under 200 MB (its memory holds a batch, not the file).
 * The same code runs above the message size limit (fewer, larger outputs); streamed-run.ts decides.
 */
const root = path.resolve(__dirname, '../..');
const N = 25_000;

function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string; maxRssKb: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-r', path.join(root, 'test/support/report-max-rss.js'), path.join(root, 'bin/evals.js'), ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir(), NO_COLOR: '1', EVALS_NO_PROGRESS: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, maxRssKb: Number(/MAXRSS_KB (\d+)/.exec(stderr)?.[1] ?? NaN) }));
  });
}

describe('e2e: evals run streams a run above the inline cap (issue 15.1, R5)', () => {
  let dir: string;
  let serve: EmbeddedServe;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-streamed-run-'));
    serve = await startEmbeddedServe({ dataDir: path.join(dir, 'data') });
  }, 120_000);

  afterAll(async () => {
    await serve?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it(`${N} outputs: the same aggregate as scored locally, the client under 200 MB`, async () => {
    expect(N).toBeGreaterThan(MAX_INLINE_OUTPUTS);
    // A quarter exact, a quarter contains; the rest exact with a wrong answer for every third case.
    const suite = ['key: streamed-run', 'default_scorer:', '  type: exact', 'pass_threshold: 0.5', 'regression_threshold: 0.1', 'cases:'];
    const outputs: string[] = [];
    for (let i = 0; i < N; i++) {
      const contains = i % 4 === 1;
      suite.push(`  - id: c${i}`, `    input: "question ${i}"`, `    expected: "answer-${i}"`);
      if (contains) suite.push('    scorer: {type: contains, value: "needle"}');
      const output = contains ? (i % 8 === 1 ? `a needle ${i}` : `no match ${i}`) : i % 3 === 0 ? `wrong-${i}` : `answer-${i}`;
      // Every tenth output left out: missing at the seal (R1), as the local scorer counts it.
      if (i % 10 !== 7) outputs.push(JSON.stringify({ case_id: `c${i}`, output }));
    }
    const suiteFile = path.join(dir, 'streamed.suite.yaml');
    const outputsFile = path.join(dir, 'streamed.outputs.jsonl');
    fs.writeFileSync(suiteFile, suite.join('\n') + '\n');
    fs.writeFileSync(outputsFile, outputs.join('\n') + '\n');

    const env = { EVALS_DATA_DIR: path.join(dir, 'data') };
    const local = await cli(['score', '--suite', suiteFile, '--outputs', outputsFile, '--json'], env);
    expect(local.stderr).not.toContain('error');
    const expected = JSON.parse(local.stdout).run as { n: number; passed: number; score: number };
    expect(expected.n).toBe(N);

    // The suite pushed on its own: its push (a 25 000-case YAML parsed in memory) is issue 15.2's, not this client's.
    const push = await cli(['suite', 'push', suiteFile], env);
    expect(push.code).toBe(0);
    const run = await cli(['run', '--suite', 'streamed-run', '--outputs', outputsFile, '--subject-id', 'streamed-bot', '--run-id', 'streamed-run-1', '--json', '--timeout', '600'], env);
    expect(run.stderr).not.toMatch(/refused|error/i);
    expect([0, 1]).toContain(run.code);
    const view = JSON.parse(run.stdout) as { run: { run_id: string; status: string }; eval_result: { score: number; metrics: { n: number; passed: number; missing_outputs: number } } };
    expect(view.run.run_id).toBe('streamed-run-1');
    expect(view.run.status).toBe('completed');
    expect(view.eval_result.metrics.n).toBe(expected.n);
    expect(view.eval_result.metrics.passed).toBe(expected.passed);
    expect(view.eval_result.metrics.missing_outputs).toBe(N - outputs.length);
    expect(view.eval_result.score).toBeCloseTo(expected.score, 9);
    expect(run.maxRssKb).toBeLessThan(200 * 1024);

    // The HTTP edge of a streamed run: a sealed run takes no more outputs, the seal again is the same run,
    // an unknown run and a bad output are refused with their codes (docs/pipeline.md).
    const post = async (route: string, body: unknown) => {
      const res = await fetch(`${serve.url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.status, json: (await res.json()) as Record<string, any> };
    };
    expect(await post('/v1/streamed-runs/streamed-run-1/outputs', { outputs: [{ case_id: 'c7', output: 'late' }] })).toMatchObject({ status: 409, json: { code: 'RUN_SEALED' } });
    const again = await post('/v1/streamed-runs/streamed-run-1/seal', {});
    expect(again.status).toBe(200);
    expect(again.json.eval_result.metrics.passed).toBe(expected.passed);
    expect(await post('/v1/streamed-runs/no-such-run/outputs', { outputs: [{ case_id: 'c1', output: 'x' }] })).toMatchObject({ status: 404, json: { code: 'UNKNOWN_RUN' } });
    const opened = await post('/v1/streamed-runs', { run_id: 'streamed-run-2', suite_key: 'streamed-run', subject_kind: 'agent', subject_id: 'streamed-bot' });
    expect(opened).toMatchObject({ status: 200, json: { run_id: 'streamed-run-2', case_count: N, created: true, phase: 'open' } });
    expect(await post('/v1/streamed-runs', { run_id: 'streamed-run-2', suite_key: 'streamed-run', subject_kind: 'agent', subject_id: 'another-bot' })).toMatchObject({ status: 409, json: { code: 'RUN_ID_CONFLICT' } });
    expect(await post('/v1/streamed-runs/streamed-run-2/outputs', { outputs: [{ case_id: 'nope', output: 'x' }] })).toMatchObject({ status: 422, json: { code: 'UNKNOWN_CASE', field: 'outputs[0].case_id' } });
    expect(await post('/v1/streamed-runs/streamed-run-2/outputs', { outputs: [{ case_id: 'c1', output: 'x'.repeat(600 * 1024) }] })).toMatchObject({ status: 413, json: { code: 'OUTPUT_TOO_LARGE' } });
    expect(await post('/v1/streamed-runs/streamed-run-2/seal', {})).toMatchObject({ status: 422, json: { code: 'EMPTY_RUN' } });
  }, 600_000);
});
