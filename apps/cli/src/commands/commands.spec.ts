import { XMLParser } from 'fast-xml-parser';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { cli, fakeFetch, gateAnswer, networkFailure, runView, REGRESSED_COMPARISON, type Recorded } from '../cli.testing';
import { integerOption, oneOf, parseOptions } from '../command';
import { CliError, EXIT } from '../exit-codes';
import { COMMANDS } from './all';
import { COMMAND_INDEX, commandNames, findCommand } from './index';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'evals-cli-'));
const json = (r: Recorded) => JSON.parse(r.body ?? 'null');

describe('unit: the command registry and argument parsing (X5)', () => {
  it('has unique names, and every command has a summary, a usage line and an example', async () => {
    expect(new Set(commandNames()).size).toBe(COMMANDS.length);
    expect(commandNames()).toEqual(expect.arrayContaining(['suite validate', 'suite push', 'score', 'run', 'gate', 'gate status', 'override', 'baseline pin', 'baseline list', 'scorecard', 'label', 'calibrate', 'compare', 'demo']));
    for (const c of COMMANDS) {
      const r = await cli([...c.name.split(' '), '--help']);
      expect(r.code).toBe(0);
      expect(r.out).toContain(`Usage: ${c.usage}`);
      expect(r.out).toMatch(/Example:\n  .*evals /);
      // A command with codes of its own (evals serve) lists those, not the evaluation ones.
      expect(r.out).toContain(c.exitCodes ?? 'Exit codes: 0 pass, 1');
    }
  });

  it('the lazy registry names every command, in order, with its own summary (issue 15)', async () => {
    expect(commandNames()).toEqual(COMMANDS.map((c) => c.name));
    for (const entry of COMMAND_INDEX) {
      const command = await entry.load();
      expect({ name: command.name, summary: command.summary }).toEqual({ name: entry.name, summary: entry.summary });
    }
  });

  it('finds one- and two-word commands', () => {
    expect(findCommand(['gate', 'status', 'g1'])).toMatchObject({ command: { name: 'gate status' }, rest: ['g1'] });
    expect(findCommand(['gate', '--suite', 's'])).toMatchObject({ command: { name: 'gate' }, rest: ['--suite', 's'] });
    expect(findCommand(['baseline', 'pin'])?.command.name).toBe('baseline pin');
    expect(findCommand(['baseline'])).toBeUndefined();
    expect(findCommand(['nope'])).toBeUndefined();
  });

  it('parses strictly: unknown options, missing values and stray arguments are usage errors', () => {
    const spec = { suite: { type: 'string' }, json: { type: 'boolean' } } as const;
    expect(parseOptions(['--suite', 's', '--json'], spec).values).toEqual({ suite: 's', json: true });
    expect(parseOptions(['--suite=s'], spec).values.suite).toBe('s');
    for (const bad of [['--bogus'], ['--suite'], ['extra']]) {
      expect(() => parseOptions(bad, spec)).toThrow(CliError);
    }
    expect(parseOptions(['FILE'], spec, { min: 1, max: 1 }).positionals).toEqual(['FILE']);
    expect(() => parseOptions([], spec, { min: 1, max: 1, names: 'FILE' })).toThrow(/expected 1 FILE, got 0/);
    expect(integerOption('50', '--sample-size', 1)).toBe(50);
    for (const bad of ['0', '-1', '1.5', 'x', '']) expect(() => integerOption(bad, '--sample-size', 1)).toThrow(/--sample-size must be a whole number/);
    expect(oneOf(undefined, '--format', ['table', 'csv'] as const, 'table')).toBe('table');
    expect(() => oneOf('xml', '--format', ['table', 'csv'] as const, 'table')).toThrow(/one of table, csv/);
  });

  it.each([
    [['run', '--outputs', 'x.jsonl', '--subject-id', 's'], /--suite is required/],
    [['run', '--suite', 's', '--subject-id', 's'], /--outputs is required/],
    [['run', '--suite', 's', '--outputs', 'x.jsonl'], /--subject-id is required/],
    [['run', '--suite', 's', '--outputs', 'x', '--subject-id', 's', '--suite-version', 'two'], /--suite-version must be a whole number/],
    [['gate', '--suite', 's', '--subject-id', 'a'], /give --outputs FILE.jsonl .* or --run-id ID/],
    [['gate', '--run-id', 'r', '--sample-size', '5'], /--sample-size and --seed go together/],
    [['gate', '--run-id', 'r'], /--suite is required/],
    [['gate', 'status'], /expected 1 GATE_ID, got 0/],
    [['override', 'g1'], /--reason is required/],
    [['baseline', 'pin', '--suite', 's', '--subject-id', 'a'], /--run is required/],
    [['scorecard', '--format', 'xml'], /--format must be one of table, csv, json/],
    [['scorecard', '--window', '1'], /--window must be a whole number from 2 to 1000/],
    [['suite', 'push'], /expected 1 suite FILE/],
    [['scorecard', '--timeout', '-3'], /--timeout/],
    [['scorecard', '--timeout=-3'], /--timeout must be a number of seconds/],
    [['scorecard', '--server', 'ftp://x'], /must be an http/],
    [['run', '--suite', 's', '--outputs', 'does-not-exist.jsonl', '--subject-id', 'a'], /cannot read outputs file/],
  ])('%j is a usage error (exit 2) before any request', async (args, message) => {
    const { fetch, calls } = fakeFetch(() => ({ status: 200, json: {} }));
    const r = await cli(args, { fetch });
    expect(r.code).toBe(EXIT.USAGE);
    expect(r.err).toMatch(message);
    expect(calls).toHaveLength(0);
  });
});

describe('unit: commands against a scripted API', () => {
  it('suite push: POSTs the YAML as application/yaml and prints the version, created or existing (V2, V3)', async () => {
    let created = true;
    const { fetch, calls } = fakeFetch((r) =>
      r.method === 'POST' && r.url === 'http://evals.test:3001/v1/suites'
        ? { status: created ? 201 : 200, json: { created, suite: { suite_key: 'support-triage', version: 3, content_hash: 'sha256:abc', case_count: 10 } } }
        : undefined,
    );
    const first = await cli(['suite', 'push', 'examples/support-triage.suite.yaml'], { fetch });
    expect(first.code).toBe(0);
    expect(first.out).toContain('support-triage v3: created');
    expect(calls[0].headers['content-type']).toBe('application/yaml');
    expect(calls[0].body).toBe(fs.readFileSync(path.join(__dirname, '../../../../examples/support-triage.suite.yaml'), 'utf8'));
    created = false;
    const again = await cli(['suite', 'push', 'examples/support-triage.suite.yaml', '--json'], { fetch });
    expect(JSON.parse(again.out)).toMatchObject({ created: false, suite: { version: 3 } });
  });

  it('suite push: a suite the server refuses prints its code, message and field and exits 2', async () => {
    const { fetch } = fakeFetch(() => ({ status: 422, json: { code: 'SUITE_INVALID', message: 'the suite is invalid: 1 problem(s)', field: 'cases[0].expected' } }));
    const r = await cli(['suite', 'push', 'examples/support-triage.suite.yaml'], { fetch });
    expect(r.code).toBe(2);
    expect(r.err).toContain('HTTP 422 SUITE_INVALID: the suite is invalid: 1 problem(s) (field: cases[0].expected)');
  });

  function runRoute(view: unknown, cases: unknown[] = []) {
    return fakeFetch((r) => {
      if (r.method === 'POST' && r.url === 'http://evals.test:3001/v1/runs') return { status: 200, json: view };
      if (r.method === 'GET' && r.url.startsWith('http://evals.test:3003/v1/runs/')) return { status: 200, json: { ...(view as object), cases } };
      return undefined;
    });
  }

  it('run: sends the outputs with source ci and the options, prints the table and exits 0 on a pass', async () => {
    const { fetch, calls } = runRoute(runView({ n: 10, passed: 9 }));
    const r = await cli(
      ['run', '--suite', 'support-triage', '--outputs', 'examples/support-triage.good.outputs.jsonl', '--subject-id', 'support-bot', '--variant', 'prompt-v7', '--baseline', 'ci-0', '--run-id', 'ci-1', '--suite-version', '2'],
      { fetch },
    );
    expect(r.code).toBe(0);
    const body = json(calls[0]);
    expect(body).toMatchObject({ run_id: 'ci-1', suite_key: 'support-triage', suite_version: 2, subject_kind: 'agent', subject_id: 'support-bot', variant: 'prompt-v7', baseline_run_id: 'ci-0', source: 'ci' });
    expect(body.outputs[0]).toEqual({ case_id: 'route-double-charge', output: 'billing' });
    expect(r.out).toContain('run ci-1: PASS');
    expect(r.out).toMatch(/run\s+90\.0% \(9\/10, 95% CI 71\.5-91\.7%\)/);
    expect(r.out).toContain('verdict: PASS');
  });

  it('run: generates a run id when none is given', async () => {
    const { fetch, calls } = runRoute(runView({ n: 10, passed: 9 }));
    await cli(['run', '--suite', 'support-triage', '--outputs', 'examples/support-triage.good.outputs.jsonl', '--subject-id', 'support-bot'], { fetch });
    expect(json(calls[0]).run_id).toMatch(/^cli-[0-9a-f-]{36}$/);
  });

  it('run: exit 1 below the pass threshold (R2) and exit 1 when regressed (G2), with the comparison printed', async () => {
    const below = await cli(['run', '--suite', 's', '--outputs', 'examples/support-triage.good.outputs.jsonl', '--subject-id', 'a'], { fetch: runRoute(runView({ n: 10, passed: 5 })).fetch });
    expect(below.code).toBe(1);
    expect(below.out).toContain('below_pass_threshold');
    const regressed = await cli(['run', '--suite', 's', '--outputs', 'examples/support-triage.good.outputs.jsonl', '--subject-id', 'a'], {
      fetch: runRoute(runView({ n: 50, passed: 42, verdict: 'regressed', comparison: REGRESSED_COMPARISON })).fetch,
    });
    expect(regressed.code).toBe(1);
    expect(regressed.out).toContain('regression: REGRESSED against ci-0 (automatic)');
    expect(regressed.out).toContain('pass-rate difference -12.0 pp (95% CI -25.0 to -1.0 pp), Newcombe hybrid score');
    expect(regressed.out).toContain('changed since the baseline: suite version 1 -> 2');
    const noise = await cli(['run', '--suite', 's', '--outputs', 'examples/support-triage.good.outputs.jsonl', '--subject-id', 'a'], {
      fetch: runRoute(runView({ n: 50, passed: 45, verdict: 'inconclusive_noise', comparison: { ...REGRESSED_COMPARISON, verdict: 'inconclusive_noise' } })).fetch,
    });
    expect(noise.code).toBe(0);
    expect(noise.out).toContain('inconclusive_noise');
  });

  it('run --json prints the raw API JSON; --junit and --summary write files from the read model cases', async () => {
    const dir = tmp();
    const cases = [
      { case_id: 'c1', scorer: 'exact', scorer_version: '1.0.0', passed: true, score: 1, label: 'match' },
      { case_id: 'c2', scorer: 'exact', scorer_version: '1.0.0', passed: false, score: 0, label: 'mismatch' },
    ];
    const view = runView({ n: 2, passed: 1 });
    const { fetch, calls } = runRoute(view, cases);
    const r = await cli(['run', '--suite', 's', '--outputs', 'examples/support-triage.good.outputs.jsonl', '--subject-id', 'a', '--json', '--junit', path.join(dir, 'out/junit.xml'), '--summary', path.join(dir, 'summary.md')], { fetch });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out)).toEqual(view);
    expect(calls[1].url).toMatch(/^http:\/\/evals\.test:3003\/v1\/runs\/cli-[0-9a-f-]+\?include=cases$/);
    const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(fs.readFileSync(path.join(dir, 'out/junit.xml'), 'utf8'));
    expect(xml.testsuites.testsuite.testcase).toHaveLength(2);
    expect(fs.readFileSync(path.join(dir, 'summary.md'), 'utf8')).toMatch(/^## evals run: FAIL/);
  });

  it('run: 202 RUN_PENDING is followed by polling the read model until the run is completed', async () => {
    let polls = 0;
    const done = runView({ n: 10, passed: 9 }) as any;
    const { fetch } = fakeFetch((r) => {
      if (r.method === 'POST') return { status: 202, json: { code: 'RUN_PENDING', message: 'still being scored', field: 'run_id' } };
      polls++;
      if (polls === 1) return { status: 404, json: { code: 'RUN_NOT_FOUND', message: 'no run' } };
      if (polls === 2) return { status: 200, json: { ...done, run: { ...done.run, status: 'sealed' }, eval_result: null, regression: null } };
      return { status: 200, json: done };
    });
    const r = await cli(['run', '--suite', 's', '--outputs', 'examples/support-triage.good.outputs.jsonl', '--subject-id', 'a', '--json'], { fetch });
    expect(r.code).toBe(0);
    expect(polls).toBeGreaterThanOrEqual(3);
    expect(JSON.parse(r.out).run.status).toBe('completed');
  });

  it('run: an unreachable server is exit 3; a 503 is exit 3; an unknown suite is exit 2 with the server code', async () => {
    const args = ['run', '--suite', 's', '--outputs', 'examples/support-triage.good.outputs.jsonl', '--subject-id', 'a'];
    const refused = await cli(args, { fetch: fakeFetch(() => networkFailure('ECONNREFUSED')).fetch });
    expect(refused.code).toBe(3);
    expect(refused.err).toContain('cannot reach http://evals.test:3001: connection refused');
    const down = await cli(args, { fetch: fakeFetch(() => ({ status: 503, json: { code: 'UNAVAILABLE', message: 'database unavailable' } })).fetch });
    expect(down.code).toBe(3);
    expect(down.err).toContain('HTTP 503 UNAVAILABLE: database unavailable');
    const unknown = await cli([...args, '--json'], { fetch: fakeFetch(() => ({ status: 404, json: { code: 'SUITE_NOT_FOUND', message: 'no suite with key s', field: 'suite_key' } })).fetch });
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('HTTP 404 SUITE_NOT_FOUND: no suite with key s (field: suite_key)');
    expect(JSON.parse(unknown.out)).toEqual({ code: 'SUITE_NOT_FOUND', message: 'no suite with key s', field: 'suite_key' });
  });

  it('gate: sends the docs/gate.md request, exits 1 on fail and 0 on pass, warnings never change it (GT1, GT2)', async () => {
    let answer = gateAnswer();
    const { fetch, calls } = fakeFetch((r) => (r.method === 'POST' && r.url === 'http://evals.test:3001/v1/gate' ? { status: 200, json: answer } : undefined));
    const args = ['gate', '--suite', 'support-triage', '--suite-version', '3', '--subject-id', 'support-bot', '--variant', 'prompt-v7', '--baseline', 'ci-4700', '--outputs', 'examples/support-triage.good.outputs.jsonl', '--run-id', 'ci-4711', '--sample-size', '50', '--seed', 'ci-4711'];
    const failed = await cli(args, { fetch });
    expect(failed.code).toBe(1);
    expect(json(calls[0])).toMatchObject({
      suite_key: 'support-triage',
      suite_version: 3,
      subject_kind: 'agent',
      subject_id: 'support-bot',
      variant: 'prompt-v7',
      baseline_run_id: 'ci-4700',
      run_id: 'ci-4711',
      sample: { size: 50, seed: 'ci-4711' },
    });
    expect(json(calls[0]).outputs).toHaveLength(fs.readFileSync(path.join(__dirname, '../../../../examples/support-triage.good.outputs.jsonl'), 'utf8').trim().split('\n').length);
    expect(failed.out).toContain('gate 8f1c2a4e-0b1d-4c55-9a8e-3f0e6f1d2c3b: FAIL');
    expect(failed.out).toContain('- regressed: the score dropped 0.120 against baseline ci-4700');
    expect(failed.out).toContain('- judge_credential_missing');
    expect(failed.out).toContain('84.0% (42/50, 95% CI 71.5-91.7%)');
    answer = gateAnswer({ recorded_verdict: 'pass', effective_verdict: 'pass', reasons: [], comparison: null });
    const passed = await cli(args, { fetch });
    expect(passed.code).toBe(0);
    expect(passed.out).toContain('warnings:');
  });

  it('gate --run-id without outputs gates an existing run', async () => {
    const { fetch, calls } = fakeFetch(() => ({ status: 200, json: gateAnswer({ effective_verdict: 'pass', recorded_verdict: 'pass', reasons: [] }) }));
    const r = await cli(['gate', '--suite', 'support-triage', '--subject-id', 'bot', '--run-id', 'ci-4711'], { fetch });
    expect(r.code).toBe(0);
    expect(json(calls[0])).toEqual({ suite_key: 'support-triage', subject_kind: 'agent', subject_id: 'bot', run_id: 'ci-4711' });
  });

  it('gate status exits by the EFFECTIVE verdict: recorded fail overridden to pass is exit 0 (GT5)', async () => {
    let answer = gateAnswer();
    const { fetch, calls } = fakeFetch((r) => (r.method === 'GET' && r.url === 'http://evals.test:3001/v1/gate/g-1' ? { status: 200, json: answer } : undefined));
    expect((await cli(['gate', 'status', 'g-1'], { fetch })).code).toBe(1);
    answer = gateAnswer({ effective_verdict: 'pass', override: { by: 'alice', reason: 'approved', before: 'fail', after: 'pass' } });
    const r = await cli(['gate', 'status', 'g-1'], { fetch });
    expect(r.code).toBe(0);
    expect(r.out).toContain('PASS (recorded fail, overridden)');
    expect(r.out).toContain('override: fail -> pass, by alice');
    expect(calls.every((c) => c.method === 'GET')).toBe(true);
    const missing = await cli(['gate', 'status', 'nope'], { fetch });
    expect(missing.code).toBe(2);
  });

  it('override POSTs the reason and reports the effective verdict; the tier refusal is exit 2', async () => {
    const { fetch, calls } = fakeFetch((r) =>
      r.url === 'http://evals.test:3001/v1/gate/g-1/override' ? { status: 200, json: gateAnswer({ effective_verdict: 'pass' }) } : { status: 403, json: { code: 'FORBIDDEN', message: 'admin tier required' } },
    );
    const r = await cli(['override', 'g-1', '--reason', 'known flaky cases, tracked in QA-812'], { fetch, env: { EVALS_API_KEY: 'admin-key' } });
    expect(r.code).toBe(0);
    expect(json(calls[0])).toEqual({ reason: 'known flaky cases, tracked in QA-812' });
    expect(calls[0].headers.authorization).toBe('Bearer admin-key');
    expect(r.out).toContain('override recorded; effective verdict pass, recorded verdict fail (unchanged)');
    const refused = await cli(['override', 'g-2', '--reason', 'known flaky cases, tracked in QA-812'], { fetch });
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('HTTP 403 FORBIDDEN');
  });

  it('baseline pin POSTs to the regression app; baseline list reads it', async () => {
    const { fetch, calls } = fakeFetch((r) => {
      if (r.method === 'POST' && r.url === 'http://evals.test:3004/v1/baselines') return { status: 201, json: { pin: { ...json(r), variant: null } } };
      if (r.method === 'GET' && r.url === 'http://evals.test:3004/v1/baselines?suite_key=support-triage') {
        return { status: 200, json: { pins: [{ suite_key: 'support-triage', subject_kind: 'agent', subject_id: 'bot', variant: null, run_id: 'ci-1', pinned_at: '2026-11-30T10:00:00.000Z' }] } };
      }
      return undefined;
    });
    const pin = await cli(['baseline', 'pin', '--suite', 'support-triage', '--subject-kind', 'agent', '--subject-id', 'bot', '--run', 'ci-1'], { fetch });
    expect(pin.code).toBe(0);
    expect(json(calls[0])).toEqual({ suite_key: 'support-triage', subject_kind: 'agent', subject_id: 'bot', run_id: 'ci-1' });
    expect(pin.out).toContain('pinned run ci-1 as the baseline of support-triage for agent/bot (any variant)');
    const list = await cli(['baseline', 'list', '--suite', 'support-triage'], { fetch });
    expect(list.code).toBe(0);
    expect(list.out).toMatch(/support-triage\s+agent\/bot\s+\(any\)\s+ci-1/);
  });

  it('scorecard: table with rates and CI, the CSV as served, the JSON as served', async () => {
    const card = {
      suite_key: 'support-triage',
      subject_kind: 'agent',
      subject_id: 'bot',
      runs: 4,
      latest_pass_rate: { rate: 0.9, passed: 18, n: 20, lower: 0.699, upper: 0.972, level: 0.95 },
      overall_pass_rate: { rate: 0.9125, passed: 73, n: 80, lower: 0.831, upper: 0.957, level: 0.95 },
      mean_score: 0.9125,
      trend: { slope_per_run: -0.005, direction: 'declining', runs: 4, window: 10 },
      latest_verdict: 'no_regression',
    };
    const csv = 'suite_key,subject_kind\r\nsupport-triage,agent\r\n';
    const { fetch, calls } = fakeFetch((r) => {
      const u = new URL(r.url);
      if (u.origin !== 'http://evals.test:3003' || u.pathname !== '/v1/scorecards') return undefined;
      return u.searchParams.get('format') === 'csv' ? { status: 200, text: csv, contentType: 'text/csv' } : { status: 200, json: { scorecards: [card] } };
    });
    const t = await cli(['scorecard', '--suite', 'support-triage', '--subject-id', 'bot', '--window', '5'], { fetch });
    expect(t.code).toBe(0);
    expect(calls[0].url).toBe('http://evals.test:3003/v1/scorecards?suite_key=support-triage&subject_id=bot&window=5&format=json');
    expect(t.out).toContain('90.0% (18/20, 95% CI 69.9-97.2%)');
    expect(t.out).toContain('91.3% (73/80, 95% CI 83.1-95.7%)');
    expect(t.out).toContain('declining (-0.5 pp/run)');
    const c = await cli(['scorecard', '--format', 'csv'], { fetch });
    expect(c.out).toBe('suite_key,subject_kind\r\nsupport-triage,agent\n');
    const j = await cli(['scorecard', '--json'], { fetch });
    expect(JSON.parse(j.out)).toEqual({ scorecards: [card] });
  });

  it('score --junit writes JUnit for a local run; NO_COLOR output has no escape codes', async () => {
    const dir = tmp();
    const r = await cli(['score', '--suite', 'examples/support-triage.suite.yaml', '--outputs', 'examples/support-triage.regressed.outputs.jsonl', '--junit', path.join(dir, 'j.xml'), '--summary', path.join(dir, 's.md')], { env: { NO_COLOR: '1' } });
    expect(r.code).toBe(1);
    const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(fs.readFileSync(path.join(dir, 'j.xml'), 'utf8'));
    expect(xml.testsuites.testsuite.name).toBe('support-triage');
    expect(fs.readFileSync(path.join(dir, 's.md'), 'utf8')).toMatch(/^## evals score: FAIL/);
    expect(r.out).not.toMatch(/\u001b\[/);
  });

  it('an error thrown as CliError carries its exit code', () => {
    expect(new CliError(EXIT.UNREACHABLE, 'x').exitCode).toBe(3);
  });
});
