import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { parseJunit, runEvals } from '../../apps/cli/src/e2e.testing';
import { assignIds } from '../../apps/cli/src/import/suite-file';
import { installPromptfoo, promptfooEnv } from '../support/promptfoo';
import { AGREEMENT_TYPES, DEFAULT_TEST, agreementTests } from './promptfoo-agreement.fixture';

/**
 * Issue 29 part 3: the same verdicts as promptfoo. promptfoo 0.120.0 (installed as bench/peer installs it)
 * runs a config using every mapped deterministic assertion type, with the echo provider so each test's output
 * is its `output` var; `evals import promptfoo` imports the same config; `evals run` (embedded default, a
 * fresh data directory) scores the same outputs; every case's pass/fail must equal promptfoo's.
 * The set and what is kept out of it: ./promptfoo-agreement.fixture.ts and docs/suites.md, "Importing".
 */
interface PromptfooResult {
  readonly testIdx: number;
  readonly success: boolean;
  readonly vars: { readonly output: string };
  readonly response: { readonly output: string };
  readonly testCase: { readonly description?: string; readonly assert?: readonly { type: string }[] };
}

function run(bin: string, args: string[], cwd: string, env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    execFile(bin, args, { cwd, env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 }, (error, _stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stderr });
    });
  });
}

describe('e2e: evals import promptfoo gives the same verdicts as promptfoo 0.120.0 (issue 29)', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-promptfoo-agreement-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('N of N cases agree, N >= 200, every mapped type present', async () => {
    const promptfoo = installPromptfoo((line) => process.stdout.write(`${line}\n`));
    const tests = agreementTests();
    fs.writeFileSync(path.join(dir, 'tests.json'), JSON.stringify(tests.json));
    fs.writeFileSync(path.join(dir, 'more.csv'), tests.csv);
    fs.writeFileSync(
      path.join(dir, 'promptfooconfig.yaml'),
      ['description: promptfoo agreement', 'prompts:', "  - '{{output}}'", 'providers:', '  - echo', `defaultTest: ${JSON.stringify(DEFAULT_TEST)}`, 'tests:', '  - file://tests.json', '  - file://more.csv', ''].join('\n'),
    );

    // promptfoo exits 100 when some test fails, which most of these are meant to.
    const pf = await run(promptfoo, ['eval', '-c', 'promptfooconfig.yaml', '--no-cache', '--no-table', '--no-progress-bar', '-o', 'out.json', '-j', '8'], dir, promptfooEnv(path.join(dir, '.pf')));
    if (pf.code !== 0 && pf.code !== 100) throw new Error(`promptfoo exit ${pf.code}\n${pf.stderr}`);
    const results = (JSON.parse(fs.readFileSync(path.join(dir, 'out.json'), 'utf8')) as { results: { results: PromptfooResult[] } }).results.results;
    const n = tests.json.length + tests.csvOutputs.length;
    expect(results).toHaveLength(n);
    // The echo provider gave each test its `output` var: the outputs both tools score are the same.
    for (const r of results) expect(r.response.output).toBe(r.vars.output);

    const imported = await runEvals(['import', 'promptfoo', 'promptfooconfig.yaml', '--out', 'suite.yaml'], {}, dir);
    if (imported.code !== 0) throw new Error(`import exit ${imported.code}\n${imported.stdout}\n${imported.stderr}`);
    const suite = parse(fs.readFileSync(path.join(dir, 'suite.yaml'), 'utf8')) as { cases: { id: string }[] };
    const byIndex = [...results].sort((a, b) => a.testIdx - b.testIdx);
    const ids = assignIds(byIndex.map((r) => r.testCase.description), 'test');
    expect(suite.cases.map((c) => c.id)).toEqual(ids);

    const outputs = byIndex.map((r, i) => JSON.stringify({ case_id: ids[i], output: r.response.output })).join('\n');
    fs.writeFileSync(path.join(dir, 'outputs.jsonl'), `${outputs}\n`);
    const env = { EVALS_DATA_DIR: path.join(dir, 'data'), EVALS_NO_PROGRESS: '1' };
    const scored = await runEvals(['run', '--suite', 'suite.yaml', '--outputs', 'outputs.jsonl', '--subject-id', 'promptfoo-agreement', '--junit', 'junit.xml'], env, dir);
    // Exit 1: the run is below the suite's pass threshold, as promptfoo's eval fails.
    if (scored.code !== 0 && scored.code !== 1) throw new Error(`evals run exit ${scored.code}\n${scored.stdout}\n${scored.stderr}`);
    const junit = parseJunit(path.join(dir, 'junit.xml'));
    const ours = new Map<string, boolean | 'skipped'>();
    for (const suiteNode of junit.testsuites.testsuite) {
      for (const tc of suiteNode.testcase ?? []) ours.set(tc.name, tc.skipped?.length > 0 ? 'skipped' : !(tc.failure?.length > 0 || tc.error?.length > 0));
    }

    const disagreements = byIndex
      .map((r, i) => ({ id: ids[i], output: r.response.output, assert: r.testCase.assert?.map((a) => a.type), promptfoo: r.success, evals: ours.get(ids[i]) }))
      .filter((c) => c.evals !== c.promptfoo);
    const agree = n - disagreements.length;
    process.stdout.write(`promptfoo agreement: ${agree} of ${n} cases agree (${byIndex.filter((r) => r.success).length} pass, ${byIndex.filter((r) => !r.success).length} fail in promptfoo)\n`);
    expect(disagreements).toEqual([]);
    expect(n).toBeGreaterThanOrEqual(200);
    expect(ids.filter((id) => !ours.has(id))).toEqual([]);
    const present = new Set(byIndex.flatMap((r) => (r.testCase.assert ?? []).map((a) => a.type)));
    expect(AGREEMENT_TYPES.filter((t) => !present.has(t))).toEqual([]);
    // Both verdicts occur for every type: each is tried on outputs that pass and that fail it.
    for (const type of AGREEMENT_TYPES) {
      const verdicts = new Set(byIndex.filter((r) => r.testCase.assert?.length === 2 && r.testCase.assert[1].type === type).map((r) => r.success));
      expect({ type, verdicts: [...verdicts].sort() }).toEqual({ type, verdicts: [false, true] });
    }
  }, 600_000);
});
