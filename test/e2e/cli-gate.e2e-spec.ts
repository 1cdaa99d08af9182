import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { DataSource } from 'typeorm';
import { ApiKeyRepository, createDataSource } from '@evals/persistence';
import { startCluster, type AppCluster } from '../support/app-processes';
import { createTestSchema, deleteTestStreams, type TestSchema, uniqueSuffix } from '../support/isolation';
import { testServers } from '../support/servers';
import { parseJunit, runEvals } from '../../apps/cli/src/e2e.testing';

/**
 * `evals gate`, `evals gate status` and `evals override` - the real CLI as a child process against the real
 * gate (GT1-GT6, docs/gate.md): exit 0 pass, 1 fail, the effective verdict after an override, the seeded
 * sample, the judge warning, and the API key sent as `Authorization: Bearer` (EVALS_AUTH=required).
 */
async function dropStreams(prefix: string): Promise<void> {
  await deleteTestStreams(prefix);
}

describe('e2e: evals gate, gate status and override', () => {
  let schema: TestSchema;
  let cluster: AppCluster;
  let env: Record<string, string>;
  let dir: string;
  const suffix = uniqueSuffix();
  const streamPrefix = `E2CG_${suffix}_`;
  const key = `cli-gate-${suffix}`;
  const judgeKey = `cli-gate-judge-${suffix}`;
  const N = 40;

  const outputs = (name: string, passing: number, n = N, extra: Array<{ case_id: string; output: string }> = []): string => {
    const file = path.join(dir, `${name}.jsonl`);
    const rows = [...Array.from({ length: n }, (_, i) => ({ case_id: `c${i}`, output: i < passing ? 'yes' : 'no' })), ...extra];
    fs.writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    return file;
  };

  const gateId = (stdout: string): string => /gate ([0-9a-f-]{36}):/.exec(stdout)![1];

  beforeAll(async () => {
    schema = await createTestSchema('e2cg');
    cluster = await startCluster({ schema: schema.schema, streamPrefix, subjectPrefix: `e2cg_${suffix}`, apps: ['ingestion', 'scoring-worker', 'read-model', 'regression'] });
    env = { EVALS_SERVER: cluster.url('ingestion', ''), EVALS_READ_SERVER: cluster.url('read-model', ''), EVALS_REGRESSION_SERVER: cluster.url('regression', '') };
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-cli-gate-e2e-'));
    const cases = (n: number) => Array.from({ length: n }, (_, i) => [`  - id: c${i}`, `    input: "q${i}"`, '    expected: "yes"'].join('\n'));
    fs.writeFileSync(path.join(dir, 'suite.yaml'), [`key: ${key}`, 'default_scorer: {type: exact}', 'pass_threshold: 0.8', 'regression_threshold: 0.1', 'cases:', ...cases(N), ''].join('\n'));
    fs.writeFileSync(
      path.join(dir, 'judge.yaml'),
      [`key: ${judgeKey}`, 'default_scorer: {type: exact}', 'pass_threshold: 0.5', 'regression_threshold: 0.1', 'cases:', ...cases(10), '  - id: tone', '    input: "be kind"', '    scorer: {type: llm_judge, rubric: "Is the answer polite?"}', ''].join('\n'),
    );
    for (const f of ['suite.yaml', 'judge.yaml']) expect((await runEvals(['suite', 'push', path.join(dir, f)], env)).code).toBe(0);
  }, 120_000);

  afterAll(async () => {
    await cluster?.stopAll();
    await dropStreams(streamPrefix);
    await schema?.drop();
  });

  it('a passing gate exits 0; JUnit has one testcase per case and the gate id and verdict as properties (GT1, GT6)', async () => {
    const junit = path.join(dir, 'pass.xml');
    const r = await runEvals(['gate', '--suite', key, '--subject-id', 'pass', '--outputs', outputs('pass', 38), '--junit', junit], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/gate [0-9a-f-]{36}: PASS/);
    expect(r.stdout).toMatch(/run\s+95\.0% \(38\/40, 95% CI [\d.]+-[\d.]+%\)/);
    expect(r.stdout).toContain('- no_baseline'); // a warning, shown, not failing
    const suite = parseJunit(junit).testsuites.testsuite[0];
    expect(suite).toMatchObject({ name: key, tests: String(N), failures: '2', errors: '0' });
    const props = Object.fromEntries(suite.properties.property.map((p: any) => [p.name, p.value]));
    expect(props).toMatchObject({ kind: 'gate', verdict: 'pass', recorded_verdict: 'pass', gate_id: gateId(r.stdout) });
  }, 60_000);

  it('below the pass threshold exits 1 (R2); a regression exits 1 with the comparison in the summary (G2)', async () => {
    const low = await runEvals(['gate', '--suite', key, '--subject-id', 'low', '--outputs', outputs('low', 20)], env);
    expect(low.code).toBe(1);
    expect(low.stdout).toContain('- below_pass_threshold');
    expect((await runEvals(['gate', '--suite', key, '--subject-id', 'reg', '--outputs', outputs('base', 40), '--run-id', `base-${suffix}`], env)).code).toBe(0);
    const summary = path.join(dir, 'gate-summary.md');
    const reg = await runEvals(['gate', '--suite', key, '--subject-id', 'reg', '--outputs', outputs('reg', 33), '--summary', summary, '--json'], env);
    expect(reg.code).toBe(1);
    const body = JSON.parse(reg.stdout);
    expect(body.reasons.map((x: any) => x.code)).toEqual(['regressed']);
    const md = fs.readFileSync(summary, 'utf8');
    expect(md).toMatch(/^## evals gate: FAIL/);
    expect(md).toContain('- `regressed`');
    expect(md).toContain(`**Comparison**: REGRESSED against \`base-${suffix}\` (automatic).`);
    expect(md).toMatch(/\| run \| 82\.5% \(33\/40, 95% CI [\d.]+-[\d.]+%\) \|/);
  }, 60_000);

  it('the seed chooses the sample: same seed, same cases (GT3)', async () => {
    const names = async (subject: string, seed: string) => {
      const junit = path.join(dir, `sample-${subject}.xml`);
      const r = await runEvals(['gate', '--suite', key, '--subject-id', subject, '--outputs', outputs(`all-${subject}`, N), '--sample-size', '10', '--seed', seed, '--junit', junit], env);
      expect(r.code).toBe(0);
      return parseJunit(junit).testsuites.testsuite[0].testcase.map((c: any) => c.name).sort();
    };
    const a = await names('s1', 'ci-42');
    expect(a).toHaveLength(10);
    expect(await names('s2', 'ci-42')).toEqual(a);
    expect(await names('s3', 'ci-43')).not.toEqual(a);
  }, 90_000);

  it('gates an existing run by --run-id', async () => {
    expect((await runEvals(['run', '--suite', key, '--subject-id', 'existing', '--outputs', outputs('existing', 39), '--run-id', `existing-${suffix}`], env)).code).toBe(0);
    const r = await runEvals(['gate', '--suite', key, '--subject-id', 'existing', '--run-id', `existing-${suffix}`, '--json'], env);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ effective_verdict: 'pass', run: { run_id: `existing-${suffix}`, passed: 39, n: N } });
  }, 60_000);

  it('an llm_judge suite without a judge: fails judge_uncalibrated with the path to a passing gate, warns judge_not_configured; the case is a JUnit error (GT1, GT2)', async () => {
    const junit = path.join(dir, 'judge.xml');
    const r = await runEvals(['gate', '--suite', judgeKey, '--subject-id', 'judge', '--outputs', outputs('judge', 10, 10, [{ case_id: 'tone', output: 'Thank you!' }]), '--junit', junit], env);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('- judge_uncalibrated');
    expect(r.stdout).toContain('evals calibrate');
    expect(r.stdout).toContain('- judge_not_configured');
    const suite = parseJunit(junit).testsuites.testsuite[0];
    const tone = suite.testcase.find((c: any) => c.name === 'tone');
    expect(tone.error).toHaveLength(1);
    expect(tone.error[0].message).toMatch(/^(judge_|budget_)/);
    expect(suite).toMatchObject({ tests: '11', errors: '1', failures: '0' });
  }, 60_000);

  it('gate status exits by the effective verdict; override needs a real reason, then CI re-checks and passes (GT5)', async () => {
    const failed = await runEvals(['gate', '--suite', key, '--subject-id', 'override', '--outputs', outputs('override', 10)], env);
    expect(failed.code).toBe(1);
    const id = gateId(failed.stdout);
    const before = await runEvals(['gate', 'status', id], env);
    expect(before.code).toBe(1);
    const short = await runEvals(['override', id, '--reason', 'ok'], env);
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/HTTP 400 INVALID_REQUEST: .*\(field: reason\)/);
    const reason = 'Known upstream outage; release approved by the incident commander';
    const o = await runEvals(['override', id, '--reason', reason], env);
    expect(o.stderr).toBe('');
    expect(o.code).toBe(0);
    expect(o.stdout).toContain('override recorded; effective verdict pass, recorded verdict fail (unchanged)');
    const junit = path.join(dir, 'status.xml');
    const after = await runEvals(['gate', 'status', id, '--junit', junit], env);
    expect(after.code).toBe(0);
    expect(after.stdout).toContain(`gate ${id}: PASS (recorded fail, overridden)`);
    expect(after.stdout).toMatch(/override: fail -> pass, by .*reason: Known upstream outage/);
    const props = Object.fromEntries(parseJunit(junit).testsuites.testsuite[0].properties.property.map((p: any) => [p.name, p.value]));
    expect(props).toMatchObject({ verdict: 'pass', recorded_verdict: 'fail' });
    const again = await runEvals(['override', id, '--reason', reason], env);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('HTTP 409 NOTHING_TO_OVERRIDE');
    const unknown = await runEvals(['gate', 'status', '00000000-0000-4000-8000-000000000000'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/HTTP 404 GATE_NOT_FOUND/);
  }, 90_000);
});

describe('e2e: the CLI sends the API key (EVALS_AUTH=required)', () => {
  let schema: TestSchema;
  let cluster: AppCluster;
  let ds: DataSource;
  let env: Record<string, string>;
  let dir: string;
  const suffix = uniqueSuffix();
  const streamPrefix = `E2CA_${suffix}_`;
  const pepper = `e2e-pepper-${suffix}`;
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    schema = await createTestSchema('e2ca');
    cluster = await startCluster({ schema: schema.schema, streamPrefix, subjectPrefix: `e2ca_${suffix}`, apps: ['ingestion'], env: { EVALS_AUTH: 'required', EVALS_API_KEY_PEPPER: pepper } });
    ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize: 2 });
    await ds.initialize();
    const repo = new ApiKeyRepository({ pepper });
    for (const tier of ['viewer', 'operator', 'admin'] as const) keys[tier] = (await repo.create(ds, { name: `cli-${tier}`, tier, createdBy: 'cli.e2e' })).key;
    env = { EVALS_SERVER: cluster.url('ingestion', '') };
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-cli-auth-e2e-'));
    fs.writeFileSync(path.join(dir, 'suite.yaml'), [`key: cli-auth-${suffix}`, 'default_scorer: {type: exact}', 'pass_threshold: 0.8', 'regression_threshold: 0.1', 'cases:', '  - id: c1', '    input: q', '    expected: "yes"', ''].join('\n'));
  }, 120_000);

  afterAll(async () => {
    await cluster?.stopAll();
    await ds?.destroy();
    await dropStreams(streamPrefix);
    await schema?.drop();
  });

  it('no key: 401, exit 2 with a hint; a viewer key on a write: 403, exit 2; the right tier: exit 0 (the key never printed)', async () => {
    const file = path.join(dir, 'suite.yaml');
    const none = await runEvals(['suite', 'push', file], env);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/HTTP 401 UNAUTHENTICATED/);
    expect(none.stderr).toContain('EVALS_API_KEY');
    const viewer = await runEvals(['suite', 'push', file], { ...env, EVALS_API_KEY: keys.viewer });
    expect(viewer.code).toBe(2);
    expect(viewer.stderr).toMatch(/HTTP 403/);
    const operator = await runEvals(['suite', 'push', file, '--api-key', keys.operator], env);
    expect(operator.code).toBe(0);
    expect(operator.stdout).toContain('v1: created');
    const status = await runEvals(['gate', 'status', '00000000-0000-4000-8000-000000000000'], { ...env, EVALS_API_KEY: keys.viewer });
    expect(status.code).toBe(2);
    expect(status.stderr).toMatch(/HTTP 404 GATE_NOT_FOUND/);
    const override = await runEvals(['override', '00000000-0000-4000-8000-000000000000', '--reason', 'a reason that is long enough to pass'], { ...env, EVALS_API_KEY: keys.operator });
    expect(override.code).toBe(2);
    expect(override.stderr).toMatch(/HTTP 403/);
    const admin = await runEvals(['override', '00000000-0000-4000-8000-000000000000', '--reason', 'a reason that is long enough to pass'], { ...env, EVALS_API_KEY: keys.admin });
    expect(admin.stderr).toMatch(/HTTP 404 GATE_NOT_FOUND/);
    for (const r of [none, viewer, operator, status, override, admin]) {
      for (const k of Object.values(keys)) expect(r.stdout + r.stderr).not.toContain(k);
    }
  }, 60_000);
});
