import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { cli, fakeFetch, networkFailure, runView } from './cli.testing';
import { EXIT } from './exit-codes';

/**
 * Issue 15 (V2): a large suite file is POSTed first and validated locally only when the POST fails, so a
 * valid one is parsed once (by the service, or not at all when it knows the bytes); an invalid one still
 * gets the local message (file, line, case, field) and exit 2. A small file is still checked first.
 */
describe('unit: suite files are pushed first, validated locally when the push fails (issue 15)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-push-order-'));
  const GOOD_OUTPUTS = 'examples/support-triage.good.outputs.jsonl';

  /** A suite file of `cases` cases (3 lines each after 5 lines of header); `duplicateAt` repeats c0's id there. */
  function suiteFile(name: string, cases: number, duplicateAt?: number): string {
    const lines = ['key: big-suite', 'default_scorer: {type: exact}', 'pass_threshold: 0.8', 'regression_threshold: 0.1', 'cases:'];
    for (let i = 0; i < cases; i++) lines.push(`  - id: ${i === duplicateAt ? 'c0' : `c${i}`}`, `    input: question number ${i}`, `    expected: answer ${i}`);
    const file = path.join(dir, name);
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    return file;
  }

  const pushed = { created: false, suite: { suite_key: 'big-suite', version: 4, content_hash: 'sha256:abc', case_count: 3000 } };
  const refused = { status: 422, json: { code: 'SUITE_INVALID', message: 'the suite is invalid: 1 problem(s)', field: 'cases[2000].id' } };

  it('a large invalid file: the POST is refused, and the message is the local one (file, line, case, field), exit 2', async () => {
    const file = suiteFile('dup.suite.yaml', 3000, 2000);
    expect(fs.statSync(file).size).toBeGreaterThan(64 * 1024);
    const { fetch, calls } = fakeFetch(() => refused);
    const r = await cli(['suite', 'push', file], { fetch });
    expect(r.code).toBe(EXIT.USAGE);
    expect(r.err).toContain(`${file}:${6 + 3 * 2000}`);
    expect(r.err).toContain('case c0');
    expect(r.err).toContain('cases[2000].id');
    expect(r.err).not.toContain('HTTP 422');
    expect(calls.map((c) => `${c.method} ${c.url}`)).toEqual(['POST http://evals.test:3001/v1/suites']);

    // The same for `evals run --suite FILE`.
    const again = fakeFetch(() => refused);
    const run = await cli(['run', '--suite', file, '--outputs', GOOD_OUTPUTS, '--subject-id', 'bot'], { fetch: again.fetch });
    expect(run.code).toBe(EXIT.USAGE);
    expect(run.err).toContain(`${file}:${6 + 3 * 2000}`);
    expect(again.calls).toHaveLength(1);
  });

  it('a large file and a service that cannot be reached: that is the answer, and the file is not parsed', async () => {
    // Locally refused (a duplicate id), but nothing answered: the client says so rather than parse the file -
    // which is also what the embedded default's dry run before its start sees (cli.ts, checkLocally), so a
    // large valid file is not parsed by the client at all.
    const file = suiteFile('unreached.suite.yaml', 3000, 2000);
    const down = fakeFetch(() => networkFailure('ECONNREFUSED'));
    const run = await cli(['run', '--suite', file, '--outputs', GOOD_OUTPUTS, '--subject-id', 'bot'], { fetch: down.fetch });
    expect(run.code).toBe(EXIT.UNREACHABLE);
    expect(run.err).toContain('cannot reach http://evals.test:3001: connection refused');
    expect(run.err).not.toContain(`${file}:`);
    expect(down.calls).toHaveLength(1);
  });

  it('a large file the service accepts is not parsed by the client: its answer is used as it is', async () => {
    // Locally refused (a duplicate id), yet answered by the service: the client never looked.
    const file = suiteFile('known.suite.yaml', 3000, 2000);
    const { fetch, calls } = fakeFetch((req) =>
      req.url === 'http://evals.test:3001/v1/suites' ? { status: 200, json: pushed } : req.url === 'http://evals.test:3001/v1/runs' ? { status: 201, json: runView({ n: 3, passed: 3 }) } : undefined,
    );
    const r = await cli(['suite', 'push', file], { fetch });
    expect(r.code).toBe(0);
    expect(r.out).toContain('big-suite v4: existing (identical content, nothing changed)');
    expect(calls[0].body).toBe(fs.readFileSync(file, 'utf8'));
    const run = await cli(['run', '--suite', file, '--outputs', GOOD_OUTPUTS, '--subject-id', 'bot', '--json'], { fetch });
    expect(run.err).toContain(`is big-suite v4, already stored (identical content); using big-suite v4`);
    expect(JSON.parse(calls[2].body ?? '{}')).toMatchObject({ suite_key: 'big-suite', suite_version: 4 });
  });

  it('a large valid file whose push fails: the failure of the POST, as before', async () => {
    const file = suiteFile('valid.suite.yaml', 3000);
    const down = fakeFetch(() => networkFailure('ECONNREFUSED'));
    const r = await cli(['suite', 'push', file], { fetch: down.fetch });
    expect(r.code).toBe(EXIT.UNREACHABLE);
    expect(r.err).toContain('cannot reach http://evals.test:3001: connection refused');
    const { fetch } = fakeFetch(() => refused);
    const bad = await cli(['suite', 'push', file], { fetch });
    expect(bad.code).toBe(EXIT.USAGE);
    expect(bad.err).toContain('HTTP 422 SUITE_INVALID: the suite is invalid: 1 problem(s) (field: cases[2000].id)');
  });

  it('a small invalid file is refused locally before any request', async () => {
    const file = suiteFile('small.suite.yaml', 20, 10);
    const { fetch, calls } = fakeFetch(() => ({ status: 200, json: pushed }));
    const r = await cli(['suite', 'push', file], { fetch });
    expect(r.code).toBe(EXIT.USAGE);
    expect(r.err).toContain(`${file}:${6 + 3 * 10}`);
    expect(calls).toHaveLength(0);
  });
});
