import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli, type Io } from './cli';
import { formatRate } from './format';

const root = path.resolve(__dirname, '../../..');

async function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: Io = { out: (t) => (out += `${t}\n`), err: (t) => (err += `${t}\n`), env, isTty: false, cwd: root };
  const code = await runCli(args, io);
  return { code, out, err };
}

describe('unit: the evals CLI (X5)', () => {
  it('formats a rate with its denominator and 95% interval (GT6)', () => {
    expect(formatRate(42, 50, 0.7150, 0.9170)).toBe('84.0% (42/50, 95% CI 71.5-91.7%)');
    expect(formatRate(0, 0, 0, 1)).toBe('n/a (0/0, 95% CI 0.0-100.0%)');
  });

  it('validates a good suite with exit 0', async () => {
    const r = await cli(['suite', 'validate', 'examples/support-triage.suite.yaml']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/support-triage: valid, \d+ cases/);
  });

  it('refuses a bad suite with exit 2, naming the file, the case and the field (S2, S4)', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'evals-cli-')), 'bad.suite.yaml');
    fs.writeFileSync(
      file,
      ['key: bad', 'default_scorer: {type: exact}', 'pass_threshold: 0.8', 'regression_threshold: 0.1', 'cases:', '  - id: c1', '    input: hi', '    expected: x', '  - id: backref', '    input: hi', "    scorer: {type: regex, pattern: '(a)\\1'}", ''].join('\n'),
    );
    const r = await cli(['suite', 'validate', file]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('bad.suite.yaml');
    expect(r.err).toContain('case backref');
    expect(r.err).toContain('cases[1].scorer.pattern');
  });

  it('scores a regressed candidate against its baseline: exit 1 and the Newcombe verdict', async () => {
    const r = await cli(['score', '--suite', 'examples/support-triage.suite.yaml', '--outputs', 'examples/support-triage.regressed.outputs.jsonl', '--baseline', 'examples/support-triage.good.outputs.jsonl', '--json']);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.out);
    expect(report.comparison.verdict).toBe('regressed');
    expect(report.comparison.pass_rate_diff.method).toBe('newcombe_hybrid_score');
    expect(report.comparison.pass_rate_diff.upper).toBeLessThan(0);
    expect(report.run.n).toBe(report.baseline.n);
  });

  it('passes the good outputs on their own with exit 0', async () => {
    const r = await cli(['score', '--suite', 'examples/extraction-json.suite.yaml', '--outputs', 'examples/extraction-json.good.outputs.jsonl']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/\(\d+\/\d+, 95% CI/);
  });

  it('usage errors exit 2; --help for every command exits 0 and shows an example', async () => {
    expect((await cli(['score'])).code).toBe(2);
    expect((await cli(['nonsense'])).code).toBe(2);
    expect((await cli(['score', '--suite', 'x', '--outputs', 'y', '--bogus'])).code).toBe(2);
    for (const command of [['suite', 'validate'], ['score'], ['demo']]) {
      const r = await cli([...command, '--help']);
      expect(r.code).toBe(0);
      expect(r.out).toContain('Example:');
    }
  });

  it('an outputs file naming an unknown case is refused (R1), never echoing the output', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'evals-cli-')), 'o.jsonl');
    fs.writeFileSync(file, JSON.stringify({ case_id: 'nope', output: 'CANARY-OUTPUT-42' }) + '\n');
    const r = await cli(['score', '--suite', 'examples/support-triage.suite.yaml', '--outputs', file]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('unknown case nope');
    expect(r.err + r.out).not.toContain('CANARY-OUTPUT-42');
  });

  it('the local demo scores both examples in process and prints a verdict', async () => {
    const r = await cli(['demo', '--local'], { NO_COLOR: '1' });
    expect(r.code).toBe(0);
    expect(r.out).toContain('verdict: REGRESSED');
    expect(r.out).not.toMatch(/\u001b\[/);
  });
});
