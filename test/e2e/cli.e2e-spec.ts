import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { startCluster, type AppCluster } from '../support/app-processes';
import { createTestSchema, deleteTestStreams, type TestSchema, uniqueSuffix } from '../support/isolation';
import { closedPort, parseJunit, runEvals } from '../../apps/cli/src/e2e.testing';

/**
 * The real `evals` CLI (`node bin/evals.js`, a child process) against the real apps (X5, V3, R5, G1-G5,
 * SC1): exit codes 0, 1, 2 and 3 each observed, JUnit parsed with an XML parser, CSV and JSON scorecards.
 * The gate commands are in cli-gate.e2e-spec.ts.
 */
describe('e2e: the evals CLI against the running service', () => {
  let schema: TestSchema;
  let cluster: AppCluster;
  let env: Record<string, string>;
  let dir: string;
  const suffix = uniqueSuffix();
  const streamPrefix = `E2C_${suffix}_`;
  const key = `cli-${suffix}`;
  const N = 20;

  const writeOutputs = (name: string, passing: number, n = N): string => {
    const file = path.join(dir, `${name}.jsonl`);
    fs.writeFileSync(file, Array.from({ length: n }, (_, i) => JSON.stringify({ case_id: `c${i}`, output: i < passing ? 'yes' : 'no' })).join('\n') + '\n');
    return file;
  };

  beforeAll(async () => {
    schema = await createTestSchema('e2c');
    cluster = await startCluster({ schema: schema.schema, streamPrefix, subjectPrefix: `e2c_${suffix}`, apps: ['ingestion', 'scoring-worker', 'read-model', 'regression'] });
    env = {
      EVALS_SERVER: cluster.url('ingestion', ''),
      EVALS_READ_SERVER: cluster.url('read-model', ''),
      EVALS_REGRESSION_SERVER: cluster.url('regression', ''),
    };
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-cli-e2e-'));
    const cases = Array.from({ length: N }, (_, i) => [`  - id: c${i}`, `    input: "question ${i}"`, '    expected: "yes"'].join('\n'));
    fs.writeFileSync(
      path.join(dir, 'suite.yaml'),
      [`key: ${key}`, 'default_scorer: {type: exact}', 'pass_threshold: 0.5', 'regression_threshold: 0.1', 'cases:', ...cases, ''].join('\n'),
    );
  }, 120_000);

  afterAll(async () => {
    await cluster?.stopAll();
    await deleteTestStreams(streamPrefix);
    await schema?.drop();
  });

  it('suite push: created, then existing for identical content (V2, V3)', async () => {
    const first = await runEvals(['suite', 'push', path.join(dir, 'suite.yaml')], env);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`${key} v1: created`);
    const again = await runEvals(['suite', 'push', path.join(dir, 'suite.yaml'), '--json'], env);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ created: false, suite: { suite_key: key, version: 1, case_count: N } });
  }, 60_000);

  it('run: a passing run exits 0, prints the rate with its interval, and writes JUnit with one testcase per case (R5, GT6)', async () => {
    const junit = path.join(dir, 'reports', 'base.xml');
    const r = await runEvals(['run', '--suite', key, '--outputs', writeOutputs('good', N), '--subject-id', 'bot', '--run-id', `base-${suffix}`, '--junit', junit], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`run base-${suffix}: PASS`);
    expect(r.stdout).toMatch(/100\.0% \(20\/20, 95% CI 83\.9-100\.0%\)/);
    expect(r.stdout).toContain('baseline: none yet');
    const doc = parseJunit(junit);
    const suite = doc.testsuites.testsuite[0];
    expect(suite).toMatchObject({ name: key, tests: String(N), failures: '0', errors: '0', skipped: '0' });
    expect(suite.testcase.map((c: any) => c.name).sort()).toEqual(Array.from({ length: N }, (_, i) => `c${i}`).sort());
    expect(suite.testcase.every((c: any) => c.classname === key && c.failure === undefined)).toBe(true);
    const props = Object.fromEntries(suite.properties.property.map((p: any) => [p.name, p.value]));
    expect(props).toMatchObject({ run_id: `base-${suffix}`, verdict: 'pass', kind: 'run' });
  }, 60_000);

  it('run: a regression against the baseline exits 1 even above the pass threshold (G2); JUnit and the Markdown summary say why', async () => {
    const junit = path.join(dir, 'reports', 'regressed.xml');
    const summary = path.join(dir, 'summary.md');
    const r = await runEvals(['run', '--suite', key, '--outputs', writeOutputs('regressed', 12), '--subject-id', 'bot', '--run-id', `reg-${suffix}`, '--junit', junit, '--summary', summary], env);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`regression: REGRESSED against base-${suffix} (automatic)`);
    expect(r.stdout).toMatch(/run\s+60\.0% \(12\/20, 95% CI/);
    expect(r.stdout).toContain('- regressed');
    expect(r.stdout).not.toContain('below_pass_threshold');
    const suite = parseJunit(junit).testsuites.testsuite[0];
    expect(suite).toMatchObject({ tests: String(N), failures: '8', errors: '0' });
    const failed = suite.testcase.filter((c: any) => c.failure);
    expect(failed.map((c: any) => c.failure[0].message)).toEqual(Array(8).fill('mismatch'));
    const md = fs.readFileSync(summary, 'utf8');
    expect(md).toMatch(/^## evals run: FAIL/);
    expect(md).toContain('`regressed`');
    expect(md).toMatch(/\| baseline `base-[0-9a-f]+` \| 100\.0% \(20\/20, 95% CI 83\.9-100\.0%\)/);
    expect(md).toMatch(/pass-rate difference -40\.0 pp \(95% CI -\d+\.\d to -\d+\.\d pp\)/);
  }, 60_000);

  it('run: below the pass threshold exits 1 (R2); --json prints the API answer', async () => {
    const r = await runEvals(['run', '--suite', key, '--outputs', writeOutputs('low', 5), '--subject-id', 'other-bot', '--json'], env);
    expect(r.code).toBe(1);
    const body = JSON.parse(r.stdout);
    expect(body.run.summary).toMatchObject({ n: N, passed: 5, run_passed: false });
    expect(body.regression.verdict).toBe('no_baseline');
  }, 60_000);

  it('baseline pin: the pinned run becomes the baseline of the next run (G5); baseline list shows it', async () => {
    const pin = await runEvals(['baseline', 'pin', '--suite', key, '--subject-kind', 'agent', '--subject-id', 'bot', '--run', `reg-${suffix}`], env);
    expect(pin.stderr).toBe('');
    expect(pin.code).toBe(0);
    expect(pin.stdout).toContain(`pinned run reg-${suffix} as the baseline of ${key} for agent/bot`);
    const list = await runEvals(['baseline', 'list', '--suite', key, '--json'], env);
    expect(JSON.parse(list.stdout).pins).toEqual([expect.objectContaining({ run_id: `reg-${suffix}`, subject_id: 'bot' })]);
    const next = await runEvals(['run', '--suite', key, '--outputs', writeOutputs('next', 12), '--subject-id', 'bot', '--json'], env);
    expect(next.code).toBe(0);
    expect(JSON.parse(next.stdout).regression).toMatchObject({ chosen_by: 'pinned', baseline_run_id: `reg-${suffix}`, verdict: 'no_regression' });
  }, 60_000);

  it('scorecard: CSV as served (RFC 4180), JSON, and a table with rates and intervals (SC1, GT6)', async () => {
    const csv = await runEvals(['scorecard', '--suite', key, '--subject-id', 'bot', '--format', 'csv'], env);
    expect(csv.code).toBe(0);
    const [header, row] = csv.stdout.split('\r\n');
    const fields = Object.fromEntries(header.split(',').map((h, i) => [h, row.split(',')[i]]));
    expect(fields).toMatchObject({ suite_key: key, subject_kind: 'agent', subject_id: 'bot', runs: '3', latest_passed: '12', latest_n: String(N) });
    const json = await runEvals(['scorecard', '--suite', key, '--format', 'json'], env);
    const cards = JSON.parse(json.stdout).scorecards;
    expect(cards.map((c: any) => c.subject_id).sort()).toEqual(['bot', 'other-bot']);
    expect(cards.find((c: any) => c.subject_id === 'bot').overall_pass_rate).toMatchObject({ passed: 44, n: 60 });
    const table = await runEvals(['scorecard', '--suite', key], env);
    expect(table.stdout).toMatch(/agent\/bot\s+3\s+60\.0% \(12\/20, 95% CI [\d.]+-[\d.]+%\)\s+73\.3% \(44\/60, 95% CI/);
  }, 60_000);

  it('usage and refused input exit 2, printing the server code, message and field', async () => {
    const local = await runEvals(['run', '--suite', key, '--bogus'], env);
    expect(local.code).toBe(2);
    expect(local.stderr).toMatch(/Unknown option '--bogus'/);
    const unknownSuite = await runEvals(['run', '--suite', `nope-${suffix}`, '--outputs', writeOutputs('x', 1, 1), '--subject-id', 'bot'], env);
    expect(unknownSuite.code).toBe(2);
    expect(unknownSuite.stderr).toMatch(/HTTP 404 SUITE_NOT_FOUND: .*\(field: suite_key\)/);
    const file = path.join(dir, 'unknown-case.jsonl');
    fs.writeFileSync(file, JSON.stringify({ case_id: 'not-a-case', output: 'CANARY-OUTPUT-5512' }) + '\n');
    const unknownCase = await runEvals(['run', '--suite', key, '--outputs', file, '--subject-id', 'bot'], env);
    expect(unknownCase.code).toBe(2);
    expect(unknownCase.stderr).toMatch(/HTTP 422 UNKNOWN_CASE/);
    expect(unknownCase.stderr + unknownCase.stdout).not.toContain('CANARY-OUTPUT-5512');
    const conflict = await runEvals(['baseline', 'pin', '--suite', key, '--subject-id', 'someone-else', '--run', `reg-${suffix}`], env);
    expect(conflict.code).toBe(2);
    expect(conflict.stderr).toMatch(/HTTP 422 BASELINE_OTHER_SUBJECT: .*\(field: run_id\)/);
  }, 60_000);

  it('an unreachable server exits 3, for each API', async () => {
    const port = await closedPort();
    const dead = { EVALS_SERVER: `http://127.0.0.1:${port}` };
    const push = await runEvals(['suite', 'push', path.join(dir, 'suite.yaml')], dead);
    expect(push.code).toBe(3);
    expect(push.stderr).toContain(`cannot reach http://127.0.0.1:${port}: connection refused`);
    const card = await runEvals(['scorecard'], { ...env, EVALS_READ_SERVER: `http://127.0.0.1:${port}` });
    expect(card.code).toBe(3);
    const pins = await runEvals(['baseline', 'list', '--regression-server', `http://127.0.0.1:${port}`], env);
    expect(pins.code).toBe(3);
    const dns = await runEvals(['scorecard', '--read-server', 'http://evals-cli-e2e.invalid:3003'], env);
    expect(dns.code).toBe(3);
    expect(dns.stderr).toContain('host not found (DNS)');
  }, 60_000);

  it('a 5xx from the service (its database failing it) exits 3, not 2', async () => {
    const db = new Client({ connectionString: schema.url });
    await db.connect();
    await db.query('ALTER TABLE baseline_pins RENAME TO baseline_pins_unreadable');
    try {
      const r = await runEvals(['baseline', 'list', '--suite', key], env);
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(/HTTP 500 INTERNAL/);
    } finally {
      await db.query('ALTER TABLE baseline_pins_unreadable RENAME TO baseline_pins');
      await db.end();
    }
    expect((await runEvals(['baseline', 'list', '--suite', key], env)).code).toBe(0);
  }, 60_000);
});
