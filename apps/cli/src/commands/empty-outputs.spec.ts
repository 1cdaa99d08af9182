import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { cli, fakeFetch } from '../cli.testing';
import { EXIT } from '../exit-codes';

/**
 * R7 at the CLI: an outputs file with no output is refused before anything is sent (exit 2), and a service
 * that refuses an empty run anyway (422 EMPTY_RUN) is a usage error too, never a failed evaluation.
 */
describe('unit: evals run / evals gate with an empty outputs file (R7, X5)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-cli-empty-'));
  const empty = path.join(dir, 'empty.outputs.jsonl');
  const blank = path.join(dir, 'blank.outputs.jsonl');
  fs.writeFileSync(empty, '');
  fs.writeFileSync(blank, '\n  \n\n');

  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['run', empty, ['run', '--suite', 's', '--subject-id', 'bot', '--outputs', empty]],
    ['run', blank, ['run', '--suite', 's', '--subject-id', 'bot', '--outputs', blank, '--run-id', 'ci-1']],
    ['gate', empty, ['gate', '--suite', 's', '--subject-id', 'bot', '--outputs', empty]],
    ['gate', blank, ['gate', '--suite', 's', '--subject-id', 'bot', '--outputs', blank, '--run-id', 'ci-1', '--sample-size', '5', '--seed', 'x']],
  ])('%s with an outputs file that has no output (%s): exit 2 "the outputs file is empty", no request', async (_name, file, args) => {
    const { fetch, calls } = fakeFetch(() => ({ status: 200, json: {} }));
    const r = await cli(args, { fetch });
    expect(r.code).toBe(EXIT.USAGE);
    expect(r.err).toContain(`the outputs file is empty: ${file}`);
    expect(calls).toHaveLength(0);
  });

  it('a relative path is resolved against the working directory in the message', async () => {
    const { fetch, calls } = fakeFetch(() => ({ status: 200, json: {} }));
    const r = await cli(['run', '--suite', 's', '--subject-id', 'bot', '--outputs', 'empty.outputs.jsonl'], { fetch, cwd: dir });
    expect(r.code).toBe(EXIT.USAGE);
    expect(r.err).toContain(`the outputs file is empty: ${empty}`);
    expect(calls).toHaveLength(0);
  });

  it.each([
    ['run', 'http://evals.test:3001/v1/runs'],
    ['gate', 'http://evals.test:3001/v1/gate'],
  ])('%s: the service answering 422 EMPTY_RUN anyway exits 2 with its code and message', async (command, route) => {
    const { fetch, calls } = fakeFetch((req) =>
      req.method === 'POST' && req.url === route
        ? { status: 422, json: { code: 'EMPTY_RUN', message: 'the outputs list is empty: a run needs at least one output', field: 'outputs' } }
        : undefined,
    );
    const r = await cli([command, '--suite', 'support-triage', '--subject-id', 'bot', '--outputs', 'examples/support-triage.good.outputs.jsonl'], { fetch });
    expect(r.code).toBe(EXIT.USAGE);
    expect(r.err).toContain('HTTP 422 EMPTY_RUN: the outputs list is empty');
    expect(calls.filter((c) => c.method === 'POST')).toHaveLength(1);
  });
});
