import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MAX_INLINE_OUTPUTS, MAX_OUTPUT_BYTES } from '@evals/contracts';
import { runCli } from './cli';
import { cli, fakeFetch, gateAnswer, repoRoot, runView, type Recorded } from './cli.testing';
import type { Io } from './command';
import { renderJunit } from './junit';
import { renderMarkdown } from './markdown';
import { parseOutputs } from './outputs-file';
import { fromGate, fromRunView, renderReport } from './report';
import { closeMatches, editDistance } from './suite-arg';
import { styles } from './format';

/**
 * Issue 16 part 5, the command line a new user does not trip over: `--suite` a key or a file everywhere,
 * "did you mean", size limits checked before anything is sent, outputs files in every common JSON shape
 * with the file's line numbers, the `usage:` footer for usage errors only, one wording per reason, and
 * `evals serve --help` about serve alone. docs/cli.md.
 */
const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'evals-cli-edges-'));
const json = (r: Recorded) => JSON.parse(r.body ?? 'null');
const GOOD = 'examples/support-triage.good.outputs.jsonl';
const SUITE_FILE = 'examples/support-triage.suite.yaml';

describe('unit: outputs files - JSON Lines, a JSON array, pretty-printed, with a BOM; errors give the line', () => {
  const rows = [
    { case_id: 'a', output: 'one' },
    { case_id: 'b', output: 'two\nlines' },
    { case_id: 'c', output: 'three' },
  ];
  const expected = rows.map((r) => ({ case_id: r.case_id, output: r.output }));

  it.each([
    ['JSON Lines', rows.map((r) => JSON.stringify(r)).join('\n') + '\n', [1, 2, 3]],
    ['JSON Lines with CRLF and blank lines', rows.map((r) => JSON.stringify(r)).join('\r\n\r\n'), [1, 3, 5]],
    ['a JSON array on one line', JSON.stringify(rows), [1, 1, 1]],
    ['a pretty-printed JSON array', JSON.stringify(rows, null, 2), [2, 6, 10]],
    ['pretty-printed objects one after another (jq .)', rows.map((r) => JSON.stringify(r, null, 2)).join('\n'), [1, 5, 9]],
  ])('reads %s, with and without a BOM, each object with the line it starts on', (_name, text, lines) => {
    for (const prefix of ['', '\uFEFF']) {
      const parsed = parseOutputs(prefix + text, 'o.json');
      expect(parsed.map((r) => ({ case_id: r.case_id, output: r.output }))).toEqual(expected);
      expect(parsed.map((r) => r.line)).toEqual(lines);
    }
  });

  it('refuses a bad object with the line of the file (not an array index), never quoting the output (D1)', () => {
    const array = ['[', '  {"case_id": "a", "output": "ok"},', '  {"case_id": "b", "output": "CANARY-7"},', '  {"case_id": "c", "outputs": "CANARY-7"}', ']'].join('\n');
    expect(() => parseOutputs(array, 'o.json')).toThrow(/^o\.json:4: needs a string case_id and a string output$/);
    const broken = ['{"case_id": "a", "output": "ok"}', '{"case_id": "b", "output": "CANARY-7"', '{"case_id": "c", "output": "x"}'].join('\n');
    expect(() => parseOutputs(broken, 'o.jsonl')).toThrow(/^o\.jsonl:2: not valid JSON$/);
    const pretty = ['{', '  "case_id": "a",', '  "output": "ok"', '}', '{', '  "case_id": "b",', '  "output": CANARY', '}'].join('\n');
    expect(() => parseOutputs(pretty, 'p.json')).toThrow(/^p\.json:7: not valid JSON$/);
    expect(() => parseOutputs('[{"case_id": "a", "output": "x"} {"case_id": "b", "output": "y"}]', 'a.json')).toThrow(/^a\.json:1: expected , or \] between the objects/);
    expect(() => parseOutputs('{"case_id": "a", "output": "x"}\n{"case_id": "a", "output": "y"}\n', 'd.jsonl')).toThrow('d.jsonl:2: second output for case a (the first is on line 1)');
    expect(() => parseOutputs('["x"]', 's.json')).toThrow('s.json:1: expected an object {"case_id": ..., "output": ...}, got a string');
    expect(() => parseOutputs('{"case_id": "a b", "output": "x"}', 'i.jsonl')).toThrow(/i\.jsonl:1: case_id must be an id/);
    for (const text of [array, broken, pretty]) {
      try {
        parseOutputs(text, 'f');
      } catch (error) {
        expect((error as Error).message).not.toContain('CANARY');
      }
    }
  });

  it('an output over the limit names its case, its size and the limit (OUTPUT_TOO_LARGE)', () => {
    const big = 'x'.repeat(MAX_OUTPUT_BYTES + 1);
    expect(() => parseOutputs(`{"case_id": "ok", "output": "y"}\n{"case_id": "huge-case", "output": "${big}"}\n`, 'o.jsonl')).toThrow(
      'o.jsonl:2: the output of case huge-case is 524,289 bytes (512.0 KiB); the limit is 524,288 bytes (512 KiB) per output (OUTPUT_TOO_LARGE, docs/contracts.md)',
    );
    // Measured in UTF-8 bytes, as the service measures it: 3 bytes per character here.
    const wide = '\u20ac'.repeat(Math.floor(MAX_OUTPUT_BYTES / 3) + 1);
    expect(() => parseOutputs(JSON.stringify({ case_id: 'euro', output: wide }), 'e.jsonl')).toThrow(/case euro is 524,289 bytes/);
    expect(parseOutputs(JSON.stringify({ case_id: 'fits', output: 'x'.repeat(MAX_OUTPUT_BYTES) }), 'f.jsonl')).toHaveLength(1);
  });
});

describe('unit: run and gate check the limits before anything is sent', () => {
  let dir: string;
  beforeAll(() => {
    dir = tmp();
  });

  it('a 1 MB output is refused locally with its limit and case id, and no request is made', async () => {
    const file = path.join(dir, 'big.jsonl');
    fs.writeFileSync(file, [JSON.stringify({ case_id: 'route-double-charge', output: 'billing' }), JSON.stringify({ case_id: 'reply-tone', output: 'y'.repeat(1024 * 1024) })].join('\n'));
    for (const command of [
      ['run', '--suite', 'support-triage', '--outputs', file, '--subject-id', 'bot'],
      ['run', '--suite', SUITE_FILE, '--outputs', file, '--subject-id', 'bot'],
      ['gate', '--suite', 'support-triage', '--outputs', file, '--subject-id', 'bot'],
    ]) {
      const { fetch, calls } = fakeFetch(() => ({ status: 500, json: {} }));
      const r = await cli(command, { fetch });
      expect(r.code).toBe(2);
      expect(r.err).toContain(`${file}:2: the output of case reply-tone is 1,048,576 bytes (1 MiB); the limit is 524,288 bytes (512 KiB) per output`);
      expect(r.err).not.toContain('usage:');
      expect(calls).toHaveLength(0);
    }
  });

  it('a refusal the service words by index (outputs[1].output) is told with the case id', async () => {
    const { fetch } = fakeFetch(() => ({ status: 413, json: { code: 'OUTPUT_TOO_LARGE', message: 'invalid request: outputs[1].output (maxUtf8Bytes)', field: 'outputs[1].output' } }));
    const r = await cli(['run', '--suite', 'support-triage', '--outputs', GOOD, '--subject-id', 'bot'], { fetch });
    expect(r.code).toBe(2);
    expect(r.err).toContain('HTTP 413 OUTPUT_TOO_LARGE: invalid request: outputs[1].output (maxUtf8Bytes) (field: outputs[1].output) (outputs[1] is case route-refund-status)');
  });

  it('above the inline cap run and gate stream (issue 15): open, batches from the file, seal; a sampled gate is refused locally', async () => {
    const many = path.join(dir, 'many.jsonl');
    fs.writeFileSync(many, Array.from({ length: MAX_INLINE_OUTPUTS + 1 }, (_, i) => JSON.stringify({ case_id: `c${i}`, output: 'x' })).join('\n'));
    const heavy = path.join(dir, 'heavy.jsonl');
    fs.writeFileSync(heavy, Array.from({ length: 20 }, (_, i) => JSON.stringify({ case_id: `c${i}`, output: 'x'.repeat(500 * 1024) })).join('\n'));
    const streamed = () =>
      fakeFetch((r) => {
        if (r.method === 'POST' && r.url.endsWith('/v1/streamed-runs')) return { status: 200, json: { run_id: json(r).run_id, suite_key: 's', suite_version: 1, case_count: 20_000, created: true, phase: 'open' } };
        if (r.method === 'POST' && r.url.endsWith('/outputs')) return { status: 200, json: { run_id: 'x', accepted: json(r).outputs.length } };
        if (r.method === 'POST' && r.url.endsWith('/seal')) return { status: 200, json: runView({ n: 20_000, passed: 18_000 }) };
        if (r.method === 'POST' && r.url.endsWith('/v1/gate')) return { status: 200, json: gateAnswer() };
        return undefined;
      });

    const run = streamed();
    const r = await cli(['run', '--suite', 's', '--outputs', many, '--subject-id', 'bot', '--run-id', 'big-1', '--json'], { fetch: run.fetch });
    expect(r.code).toBe(0);
    const posts = run.calls.filter((c) => c.method === 'POST');
    expect(posts[0]).toMatchObject({ url: 'http://evals.test:3001/v1/streamed-runs' });
    expect(json(posts[0])).toEqual({ run_id: 'big-1', suite_key: 's', subject_kind: 'agent', subject_id: 'bot', source: 'ci' });
    const batches = posts.filter((c) => c.url.endsWith('/v1/streamed-runs/big-1/outputs')).map((c) => json(c).outputs as Array<{ case_id: string }>);
    expect(batches.every((b) => b.length <= 1000)).toBe(true);
    expect(batches.flat().map((o) => o.case_id)).toEqual(Array.from({ length: MAX_INLINE_OUTPUTS + 1 }, (_, i) => `c${i}`));
    expect(posts[posts.length - 1]).toMatchObject({ url: 'http://evals.test:3001/v1/streamed-runs/big-1/seal' });
    expect(run.calls.some((c) => c.url.endsWith('/v1/runs'))).toBe(false);

    // More bytes than one message carries: streamed too; the gate then decides on the completed run.
    const gate = streamed();
    const g = await cli(['gate', '--suite', 's', '--outputs', heavy, '--subject-id', 'bot', '--run-id', 'big-2', '--json'], { fetch: gate.fetch });
    expect(g.code).toBe(1); // the verdict's: gateAnswer() failed
    const gatePosts = gate.calls.filter((c) => c.method === 'POST').map((c) => c.url.replace('http://evals.test:3001', ''));
    expect(gatePosts[0]).toBe('/v1/streamed-runs');
    expect(gatePosts.slice(-2)).toEqual(['/v1/streamed-runs/big-2/seal', '/v1/gate']);
    const gateBody = json(gate.calls.find((c) => c.url.endsWith('/v1/gate'))!);
    expect(gateBody).toMatchObject({ run_id: 'big-2', suite_key: 's', subject_id: 'bot' });
    expect(gateBody.outputs).toBeUndefined();

    // A sampled gate sends its outputs inline: above the cap it is refused before anything is sent.
    const refused = fakeFetch(() => ({ status: 500, json: {} }));
    const s = await cli(['gate', '--suite', 's', '--outputs', many, '--subject-id', 'bot', '--sample-size', '5', '--seed', 'x'], { fetch: refused.fetch });
    expect(s.code).toBe(2);
    expect(s.err).toContain(`${many}: 10001 outputs`);
    expect(s.err).toContain('a sampled gate (--sample-size) sends its outputs inline');
    expect(refused.calls).toHaveLength(0);
  });

  it('a batch the service refuses by index names the case; nothing is sealed', async () => {
    const many = path.join(dir, 'many-bad.jsonl');
    fs.writeFileSync(many, Array.from({ length: MAX_INLINE_OUTPUTS + 1 }, (_, i) => JSON.stringify({ case_id: `c${i}`, output: 'x' })).join('\n'));
    const { fetch, calls } = fakeFetch((r) => {
      if (r.url.endsWith('/v1/streamed-runs')) return { status: 200, json: { run_id: 'big-3', suite_key: 's', suite_version: 1, case_count: 5, created: true, phase: 'open' } };
      if (r.url.endsWith('/outputs')) return { status: 422, json: { code: 'UNKNOWN_CASE', message: "case c7 is not in the run's suite version", field: 'outputs[7].case_id' } };
      return undefined;
    });
    const r = await cli(['run', '--suite', 's', '--outputs', many, '--subject-id', 'bot', '--run-id', 'big-3'], { fetch });
    expect(r.code).toBe(2);
    expect(r.err).toContain('UNKNOWN_CASE');
    expect(r.err).toContain('(outputs[7] is case c7)');
    expect(calls.some((c) => c.url.endsWith('/seal'))).toBe(false);
  });
});

describe('unit: --suite takes a key or a file, for run, gate and score', () => {
  const pushAnswer = (created: boolean) => ({ status: created ? 201 : 200, json: { created, suite: { suite_key: 'support-triage', version: 4, case_count: 12, content_hash: 'h' } } });

  it('run --suite FILE: validated, pushed (idempotent), then the run pinned to the version it became, which is said', async () => {
    const { fetch, calls } = fakeFetch((r) => {
      if (r.method === 'POST' && r.url.endsWith('/v1/suites')) return pushAnswer(false);
      if (r.method === 'POST' && r.url.endsWith('/v1/runs')) return { status: 201, json: runView({ n: 12, passed: 12 }) };
      return undefined;
    });
    const r = await cli(['run', '--suite', SUITE_FILE, '--outputs', GOOD, '--subject-id', 'bot', '--json'], { fetch });
    expect(r.code).toBe(0);
    expect(calls[0]).toMatchObject({ method: 'POST', url: 'http://evals.test:3001/v1/suites', headers: { 'content-type': 'application/yaml' } });
    expect(calls[0].body).toBe(fs.readFileSync(path.join(__dirname, '../../..', SUITE_FILE), 'utf8'));
    expect(json(calls[1])).toMatchObject({ suite_key: 'support-triage', suite_version: 4 });
    expect(r.err).toContain(`evals run: suite file ${SUITE_FILE} is support-triage v4, already stored (identical content); using support-triage v4`);
  });

  it('gate --suite FILE pushes too (a new version is said as such); a family mixes keys and files', async () => {
    const { fetch, calls } = fakeFetch((r) => {
      if (r.method === 'POST' && r.url.endsWith('/v1/suites')) return pushAnswer(true);
      if (r.method === 'POST' && r.url.endsWith('/v1/gate')) return { status: 200, json: gateAnswer({ recorded_verdict: 'pass', effective_verdict: 'pass', reasons: [] }) };
      return undefined;
    });
    const single = await cli(['gate', '--suite', SUITE_FILE, '--outputs', GOOD, '--subject-id', 'bot'], { fetch });
    expect(single.code).toBe(0);
    expect(single.err).toContain('is support-triage v4, pushed as a new version; using support-triage v4');
    expect(json(calls[1])).toMatchObject({ suite_key: 'support-triage', suite_version: 4 });
    calls.length = 0;
    const family = await cli(['gate', '--subject-id', 'bot', '--suite', SUITE_FILE, '--outputs', GOOD, '--suite', 'other-suite', '--outputs', GOOD], { fetch });
    expect(family.code).toBe(0);
    expect(json(calls[1]).suites.map((s: Record<string, unknown>) => [s.suite_key, s.suite_version])).toEqual([
      ['support-triage', 4],
      ['other-suite', undefined],
    ]);
  });

  it('a suite file with --suite-version is a usage error; a missing file is named; a suite file with bad content gets no usage footer', async () => {
    const { fetch, calls } = fakeFetch(() => undefined);
    const both = await cli(['run', '--suite', SUITE_FILE, '--suite-version', '2', '--outputs', GOOD, '--subject-id', 'bot'], { fetch });
    expect(both.code).toBe(2);
    expect(both.err).toContain('--suite-version goes with a suite key');
    expect(both.err).toContain('usage: evals run');
    const missing = await cli(['run', '--suite', 'suites/nope.suite.yaml', '--outputs', GOOD, '--subject-id', 'bot'], { fetch });
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('--suite suites/nope.suite.yaml: no such suite file');
    const dir = tmp();
    const bad = path.join(dir, 'dup.suite.yaml');
    // A duplicate case id: its message says "must be unique"-like things, yet the command was used correctly.
    fs.writeFileSync(bad, ['key: dup', 'default_scorer: {type: exact}', 'pass_threshold: 0.8', 'regression_threshold: 0.1', 'cases:', '  - id: c1', '    input: hi', '    expected: x', '  - id: c1', '    input: ho', '    expected: y', ''].join('\n'));
    const dup = await cli(['run', '--suite', bad, '--outputs', GOOD, '--subject-id', 'bot'], { fetch });
    expect(dup.code).toBe(2);
    expect(dup.err).toContain('dup.suite.yaml:9');
    expect(dup.err).not.toContain('usage:');
    const validate = await cli(['suite', 'validate', bad]);
    expect(validate.err).not.toContain('usage:');
    expect(calls).toHaveLength(0);
    const usage = await cli(['run', '--outputs', GOOD]);
    expect(usage.err).toContain('usage: evals run');
  });

  it('an unknown key: the server code, the close matches and the known suites (service and files here)', async () => {
    // The service's suites come from GET /v1/suites: a suite pushed but never run (no scorecard) is suggested.
    const { fetch, calls } = fakeFetch((r) => {
      if (r.method === 'POST' && r.url.endsWith('/v1/runs')) return { status: 404, json: { code: 'SUITE_NOT_FOUND', message: 'no suite with key support-traige', field: 'suite_key' } };
      if (r.url === 'http://evals.test:3001/v1/suites?offset=0&limit=500') {
        const item = (suite_key: string) => ({ suite_key, latest_version: 1, case_count: 3, versions: 1, description: null, content_hash: 'h', created_at: '2026-01-01T00:00:00.000Z', first_created_at: '2026-01-01T00:00:00.000Z' });
        return { status: 200, json: { items: [item('billing-faq'), item('support-triage-v2')], total: 2, offset: 0, limit: 500 } };
      }
      return undefined;
    });
    const r = await cli(['run', '--suite', 'support-traige', '--outputs', GOOD, '--subject-id', 'bot'], { fetch });
    expect(r.code).toBe(2);
    expect(r.err).toContain('HTTP 404 SUITE_NOT_FOUND: no suite with key support-traige (field: suite_key)');
    expect(r.err).toContain('no suite support-traige on http://evals.test:3001; did you mean support-triage or support-triage-v2?');
    expect(r.err).toContain('known suites: billing-faq, extraction-json (file examples/extraction-json.suite.yaml, not pushed), reply-tone (file examples/reply-tone.suite.yaml, not pushed), support-triage (file examples/support-triage.suite.yaml, not pushed), support-triage-v2');
    expect(r.err).not.toContain('usage:');
    expect(calls.some((c) => c.url.includes('/v1/scorecards'))).toBe(false);
  });

  it('score --suite KEY scores the stored suite locally; score --suite FILE needs no service', async () => {
    const stored = {
      suite: {
        suite_key: 'mini',
        version: 3,
        description: null,
        default_scorer: { type: 'exact' },
        pass_threshold: 0.5,
        regression_threshold: 0.1,
        golden_fixtures: false,
        cases: [
          { case_id: 'a', input: 'q', expected: 'yes', scorer: null, tags: [] },
          { case_id: 'b', input: 'q', expected: 'no', scorer: null, tags: [] },
        ],
      },
    };
    const { fetch, calls } = fakeFetch((r) => (r.url === 'http://evals.test:3001/v1/suites/mini/versions/3' ? { status: 200, json: stored } : undefined));
    const file = path.join(tmp(), 'o.json');
    fs.writeFileSync(file, JSON.stringify([{ case_id: 'a', output: 'yes' }, { case_id: 'b', output: 'yes' }], null, 2));
    const r = await cli(['score', '--suite', 'mini', '--suite-version', '3', '--outputs', file, '--json'], { fetch });
    expect(r.code).toBe(0);
    expect(r.err).toContain('evals score: suite mini v3 from http://evals.test:3001');
    expect(JSON.parse(r.out).run).toMatchObject({ n: 2, passed: 1 });
    expect(calls).toHaveLength(1);
    const local = await cli(['score', '--suite', SUITE_FILE, '--outputs', GOOD], { fetch });
    expect(local.code).toBe(0);
    expect(calls).toHaveLength(1);
  });

  it('scorecard, baseline list and baseline pin: a suite file stands for its key, nothing pushed', async () => {
    const { fetch, calls } = fakeFetch((r) => (r.method === 'GET' ? { status: 200, json: { scorecards: [], pins: [] } } : { status: 201, json: { pin: {} } }));
    expect((await cli(['scorecard', '--suite', SUITE_FILE, '--format', 'json'], { fetch })).code).toBe(0);
    expect((await cli(['baseline', 'list', '--suite', SUITE_FILE, '--json'], { fetch })).code).toBe(0);
    expect((await cli(['baseline', 'pin', '--suite', SUITE_FILE, '--subject-id', 'bot', '--run', 'r1'], { fetch })).code).toBe(0);
    expect(calls.map((c) => `${c.method} ${new URL(c.url).pathname}${new URL(c.url).search}`)).toEqual([
      'GET /v1/scorecards?suite_key=support-triage&format=json',
      'GET /v1/baselines?suite_key=support-triage',
      'POST /v1/baselines',
    ]);
    expect(json(calls[2])).toMatchObject({ suite_key: 'support-triage' });
  });

  it('close matches: typos, swaps and stems, nothing far away', () => {
    expect(editDistance('support-traige', 'support-triage')).toBe(1);
    expect(closeMatches('support-traige', ['support-triage', 'extraction-json', 'billing'])).toEqual(['support-triage']);
    expect(closeMatches('support', ['support-triage', 'extraction-json'])).toEqual(['support-triage']);
    expect(closeMatches('xyz', ['support-triage', 'extraction-json'])).toEqual([]);
  });
});

describe('unit: one wording per reason across run, gate, JUnit and the Markdown summary', () => {
  it('below the pass threshold reads the same everywhere: rate, counts and threshold as percentages', () => {
    const run = fromRunView(runView({ n: 30, passed: 14, threshold: 0.75 }));
    const gate = fromGate(gateAnswer({ reasons: [{ code: 'below_pass_threshold', message: "pass rate 14/30 is below the suite's threshold 0.75 (R2)" }], run: { ...(gateAnswer().run as object), n: 30, passed: 14, pass_threshold: 0.75 } }));
    const sentence = 'pass rate 46.7% (14/30) is below the pass threshold 75% (R2)';
    for (const report of [run, gate]) {
      expect(report.reasons.find((x) => x.code === 'below_pass_threshold')?.message).toBe(sentence);
      expect(renderReport(report, styles({}, false))).toContain(`- below_pass_threshold: ${sentence}`);
      expect(renderMarkdown(report)).toContain(`- \`below_pass_threshold\`: ${sentence}`);
      expect(renderJunit(report)).toContain(`below_pass_threshold: ${sentence}`);
    }
  });

  it('regressed and inconclusive_noise: the same sentence from the run view and the gate answer', () => {
    const comparison = { verdict: 'regressed', baseline_run_id: 'ci-0', chosen_by: 'automatic', score_drop: 0.12, regression_threshold: 0.1, pass_rate_diff: { diff: -0.12, lower: -0.25, upper: -0.01 }, run: { passed: 42, n: 50 }, baseline: { passed: 48, n: 50 } };
    const run = fromRunView(runView({ n: 50, passed: 42, verdict: 'regressed', comparison }));
    const gate = fromGate(gateAnswer({ reasons: [{ code: 'regressed', message: 'the score dropped by more than the regression threshold and the pass-rate interval excludes zero (G2)' }], comparison }));
    const sentence = 'the score dropped 0.120 against baseline ci-0, more than the regression threshold 0.1, and the 95% interval of the pass-rate difference excludes zero (G2)';
    expect(run.reasons.find((x) => x.code === 'regressed')?.message).toBe(sentence);
    expect(gate.reasons.find((x) => x.code === 'regressed')?.message).toBe(sentence);
    const noisy = { ...comparison, verdict: 'inconclusive_noise', pass_rate_diff: { diff: -0.12, lower: -0.3, upper: 0.05 } };
    const runNoise = fromRunView(runView({ n: 50, passed: 42, verdict: 'inconclusive_noise', comparison: noisy }));
    const gateNoise = fromGate(gateAnswer({ reasons: [], warnings: [{ code: 'inconclusive_noise', message: 'the score dropped by more than the threshold, but the pass-rate interval contains zero: not a regression (G2)' }], comparison: noisy }));
    expect(runNoise.warnings[0].message).toBe(gateNoise.warnings[0].message);
    expect(runNoise.warnings[0].message).toContain('contains zero: not a regression (G2)');
  });

  it("a family's Holm demotion keeps the service's words: the comparison said regressed, the family did not (GT7)", () => {
    const demoted = fromGate(gateAnswer({ reasons: [], warnings: [{ code: 'inconclusive_noise', message: 'regressed on its own, not significant after Holm over 3 suites' }] }));
    expect(demoted.warnings[0].message).toBe('regressed on its own, not significant after Holm over 3 suites');
  });
});

describe('unit: evals serve --help is about serve', () => {
  it('lists its own exit codes, LOG_LEVEL and --log-level / --log-file, not the evaluation exit codes', async () => {
    const r = await cli(['serve', '--help']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('--log-level LEVEL');
    expect(r.out).toContain('--log-file FILE|-');
    expect(r.out).toMatch(/Environment:\n(.*\n)*\s+LOG_LEVEL /);
    expect(r.out).toMatch(/Exit codes: 0 stopped cleanly/);
    expect(r.out).not.toContain('1 evaluation or gate failed');
    expect((await cli(['run', '--help'])).out).toContain('1 evaluation or gate failed');
    const bad = await cli(['serve', '--log-level', 'loud']);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--log-level must be one of debug, info, warn, error');
  });
});

describe('unit: what a command can refuse by itself is refused before the embedded service starts', () => {
  it('a usage error or an oversize output never starts it; a good command starts it once, and only real requests are sent', async () => {
    const dir = tmp();
    const big = path.join(dir, 'big.jsonl');
    fs.writeFileSync(big, JSON.stringify({ case_id: 'route-double-charge', output: 'b'.repeat(MAX_OUTPUT_BYTES + 1) }));
    const started: string[] = [];
    const { fetch, calls } = fakeFetch((r) => (r.method === 'POST' && r.url === 'http://embedded.test/v1/runs' ? { status: 201, json: runView({ n: 12, passed: 12 }) } : undefined));
    const run = async (args: string[]) => {
      let err = '';
      const io: Io = {
        out: () => undefined,
        err: (t) => (err += `${t}\n`),
        env: { EVALS_DATA_DIR: path.join(dir, 'data') },
        isTty: false,
        cwd: repoRoot,
        fetch,
        embedded: async (dataDir) => {
          started.push(dataDir);
          return { url: 'http://embedded.test', mode: 'started', close: async () => undefined };
        },
      };
      return { code: await runCli(args, io), err };
    };
    const usage = await run(['run', '--suite', 'support-triage', '--subject-id', 'bot']);
    expect(usage.code).toBe(2);
    expect(usage.err).toContain('--outputs is required');
    const oversize = await run(['run', '--suite', 'support-triage', '--outputs', big, '--subject-id', 'bot']);
    expect(oversize.code).toBe(2);
    expect(oversize.err).toContain('the output of case route-double-charge is 524,289 bytes');
    expect(started).toEqual([]);
    expect(calls).toEqual([]);
    const good = await run(['run', '--suite', 'support-triage', '--outputs', GOOD, '--subject-id', 'bot', '--json']);
    expect(good.code).toBe(0);
    expect(started).toEqual([path.join(dir, 'data')]);
    expect(calls.map((c) => `${c.method} ${c.url}`)).toEqual(['POST http://embedded.test/v1/runs']);
  });
});
