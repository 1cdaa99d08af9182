import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { fakeFetch, networkFailure, type Recorded } from '../cli.testing';
import type { Io } from '../command';
import { CliError, EXIT } from '../exit-codes';
import { calibrateCommand, compareCommand, labelCommand, type KeyInput, type LabelIo } from './index';
import { sha256Hex } from './jsonl';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'evals-judge-cli-'));

const ITEMS = [
  { item_id: 'i1', case_id: 'c1', input: 'Where is my refund?', output: 'Your refund was sent today.' },
  { item_id: 'i2', output: 'No.' },
  { item_id: 'i3', case_id: 'c3', output: 'We are sorry; a refund is on its way.' },
  { item_id: 'i4', output: 'Please hold.' },
];

function writeItems(dir: string, items: readonly object[] = ITEMS): string {
  const file = path.join(dir, 'items.jsonl');
  fs.writeFileSync(file, items.map((i) => JSON.stringify(i)).join('\n') + '\n');
  return file;
}

function io(cwd: string, extra: Partial<LabelIo> = {}): LabelIo & { text(): string; errors(): string } {
  let out = '';
  let err = '';
  return {
    out: (t) => (out += `${t}\n`),
    err: (t) => (err += `${t}\n`),
    env: {},
    isTty: false,
    cwd,
    ...extra,
    text: () => out,
    errors: () => err,
  };
}

function piped(keys: string): KeyInput {
  const s = new PassThrough();
  s.end(keys);
  return s;
}

function labels(file: string): any[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

describe('unit: evals label, the guided labelling session (J4)', () => {
  it('shows one item at a time with its case, input and output; saves each answer with hash and length, never the text; q quits', async () => {
    const dir = tmp();
    const set = writeItems(dir);
    const session = io(dir, { stdin: piped('p\nmaybe\nf\nq\n') });
    expect(await labelCommand.run(['--set', 'items.jsonl'], session)).toBe(EXIT.PASS);
    const out = session.text();
    expect(out).toContain('progress 0/4  -  item 1 of 4: i1  (case c1)');
    expect(out).toContain('Where is my refund?');
    expect(out).toContain('Your refund was sent today.');
    expect(out).toContain('answer p (pass), f (fail), s (skip) or q (quit)');
    expect(out).toContain('progress 1/4  -  item 2 of 4: i2');
    expect(out).toContain('progress 2/4  -  item 3 of 4: i3');
    expect(out).toContain('stopped; run the same command again to resume');
    const file = path.join(dir, 'items.labels.jsonl');
    expect(labels(file)).toEqual([
      { item_id: 'i1', output_hash: sha256Hex(ITEMS[0].output), output_chars: ITEMS[0].output.length, human_verdict: 'pass' },
      { item_id: 'i2', output_hash: sha256Hex(ITEMS[1].output), output_chars: 3, human_verdict: 'fail' },
    ]);
    expect(fs.readFileSync(file, 'utf8')).not.toContain('refund');
    expect(fs.existsSync(set)).toBe(true);
  });

  it('resumes after the last answered item, and finishes the set; a finished set asks nothing', async () => {
    const dir = tmp();
    writeItems(dir);
    const out = path.join(dir, 'my.labels.jsonl');
    await labelCommand.run(['--set', 'items.jsonl', '--out', out], io(dir, { stdin: piped('p\nq\n') }));
    const second = io(dir, { stdin: piped('s\nf\np\n') });
    await labelCommand.run(['--set', 'items.jsonl', '--out', out], second);
    expect(second.text()).toContain('resuming after item 1 of 4 (1 answered');
    expect(second.text()).not.toContain('item 1 of 4: i1');
    expect(second.text()).toContain('progress 1/4  -  item 2 of 4: i2');
    expect(second.text()).toContain('progress 4/4: every item answered, 3 labelled pass/fail');
    expect(labels(out).map((l) => [l.item_id, l.human_verdict])).toEqual([
      ['i1', 'pass'],
      ['i2', 'skip'],
      ['i3', 'fail'],
      ['i4', 'pass'],
    ]);
    const third = io(dir, { stdin: piped('p\n') });
    await labelCommand.run(['--set', 'items.jsonl', '--out', out], third);
    expect(third.text()).not.toContain('does the output meet the rubric');
    expect(labels(out)).toHaveLength(4);
  });

  it('reads single keypresses in raw mode on a terminal (Ctrl-C quits), and restores the terminal', async () => {
    const dir = tmp();
    writeItems(dir);
    const tty = Object.assign(new PassThrough(), { isTTY: true, setRawMode: jest.fn() });
    const session = labelCommand.run(['--set', 'items.jsonl'], io(dir, { stdin: tty }));
    tty.write('fp');
    setTimeout(() => tty.write('\u0003'), 20);
    expect(await session).toBe(EXIT.PASS);
    expect(tty.setRawMode).toHaveBeenNthCalledWith(1, true);
    expect(tty.setRawMode).toHaveBeenLastCalledWith(false);
    expect(labels(path.join(dir, 'items.labels.jsonl')).map((l) => l.human_verdict)).toEqual(['fail', 'pass']);
  });

  it('asks again for an item whose output changed since it was answered; ignores a torn last line', async () => {
    const dir = tmp();
    writeItems(dir);
    const out = path.join(dir, 'items.labels.jsonl');
    fs.writeFileSync(out, `${JSON.stringify({ item_id: 'i1', output_hash: sha256Hex('an older output'), output_chars: 15, human_verdict: 'pass' })}\n{"item_id": "i2", "outp`);
    const session = io(dir, { stdin: piped('f\nq\n') });
    await labelCommand.run(['--set', 'items.jsonl'], session);
    expect(session.errors()).toContain('item i1 changed since it was answered');
    expect(session.text()).toContain('progress 0/4  -  item 1 of 4: i1');
  });

  it('refuses a bad items file with its line number, never its content', async () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, 'items.jsonl'), `${JSON.stringify(ITEMS[0])}\n{"item_id": "i2", "output": 42}\n`);
    await expect(labelCommand.run(['--set', 'items.jsonl'], io(dir, { stdin: piped('') }))).rejects.toThrow(/items\.jsonl:2: output must be a string/);
    await expect(labelCommand.run([], io(dir))).rejects.toMatchObject({ exitCode: EXIT.USAGE });
  });
});

describe('unit: evals calibrate and evals compare talk to the regression app (J4, J5)', () => {
  const report = (status: string) => ({
    report_id: 'r-1',
    set_id: 's-1',
    status,
    judge_model: 'gpt-4o-2024-08-06',
    prompt_version: 'judge-v1',
    report: {
      n: 3,
      counts: { tp: 1, fn: 0, fp: 1, tn: 1 },
      agreement: { value: 2 / 3, numerator: 2, denominator: 3, lower: 0.2077, upper: 0.9385 },
      kappa: { value: 0.4, observed: 0.667, expected: 0.444 },
      sensitivity: { value: 1, numerator: 1, denominator: 1, lower: 0.2065, upper: 1 },
      specificity: { value: 0.5, numerator: 1, denominator: 2, lower: 0.0945, upper: 0.9055 },
      human_pass_rate: { value: 1 / 3, numerator: 1, denominator: 3, lower: 0.0615, upper: 0.7923 },
      judge_pass_rate: { value: 2 / 3, numerator: 2, denominator: 3, lower: 0.2077, upper: 0.9385 },
      verbosity_bias: { judge: { r: 0.5, n: 3 }, human: { r: 0.1, n: 3 }, excess: 0.4 },
      targets: { agreement: 0.85, kappa: 0.6 },
      status,
      reasons: status === 'certified' ? [] : ['agreement_below_target', 'kappa_below_target'],
      judge: { calls: 3, unparseable: 0, input_tokens: 900, output_tokens: 150, cost_usd: 0.00375 },
    },
  });

  function setup(golden = false) {
    const dir = tmp();
    writeItems(dir);
    const lines = [
      { item_id: 'i1', human_verdict: 'pass' },
      { item_id: 'i2', human_verdict: 'fail' },
      { item_id: 'i3', human_verdict: 'skip' },
      { item_id: 'i4', human_verdict: 'fail' },
    ].map((l) => {
      const item = ITEMS.find((i) => i.item_id === l.item_id)!;
      return JSON.stringify({ item_id: l.item_id, output_hash: sha256Hex(item.output), output_chars: item.output.length, human_verdict: l.human_verdict });
    });
    fs.writeFileSync(path.join(dir, 'items.labels.jsonl'), lines.join('\n') + '\n');
    void golden;
    return dir;
  }

  function session(dir: string, route: (r: Recorded) => { status: number; json?: unknown } | Error | undefined): { io: Io & { text(): string }; calls: Recorded[] } {
    const f = fakeFetch(route);
    return { io: { ...io(dir), env: { EVALS_SERVER: 'http://evals.test:3001' }, fetch: f.fetch }, calls: f.calls };
  }

  const api = (status: string) => (r: Recorded) =>
    r.url.endsWith('/v1/calibration-sets') ? { status: 201, json: { set: { id: 's-1' } } } : r.url.endsWith('/v1/calibrations') ? { status: 201, json: report(status) } : undefined;

  it('creates the set from labels (skips left out, hashes and lengths only) and sends the outputs with the calibration; exit 0 when certified', async () => {
    const dir = setup();
    const { io: s, calls } = session(dir, api('certified'));
    const code = await calibrateCommand.run(['--labels', 'items.labels.jsonl', '--items', 'items.jsonl', '--rubric', 'Offers a refund', '--target-agreement', '0.9'], s);
    expect(code).toBe(EXIT.PASS);
    expect(calls.map((c) => c.url)).toEqual(['http://evals.test:3004/v1/calibration-sets', 'http://evals.test:3004/v1/calibrations']);
    const set = JSON.parse(calls[0].body!);
    expect(set).toMatchObject({ name: 'items.labels', golden: false, rubric: 'Offers a refund' });
    expect(set.items).toEqual([
      { item_id: 'i1', case_id: 'c1', output_hash: sha256Hex(ITEMS[0].output), human_verdict: 'pass', output_chars: ITEMS[0].output.length },
      { item_id: 'i2', output_hash: sha256Hex('No.'), human_verdict: 'fail', output_chars: 3 },
      { item_id: 'i4', output_hash: sha256Hex('Please hold.'), human_verdict: 'fail', output_chars: 12 },
    ]);
    const run = JSON.parse(calls[1].body!);
    expect(run).toEqual({
      set_id: 's-1',
      targets: { agreement: 0.9 },
      outputs: [
        { item_id: 'i1', output: ITEMS[0].output, input: ITEMS[0].input },
        { item_id: 'i2', output: 'No.' },
        { item_id: 'i4', output: 'Please hold.' },
      ],
    });
    const text = s.text();
    expect(text).toContain('agreement');
    expect(text).toContain('66.7% (2/3, 95% CI 20.8-93.8%)');
    expect(text).toContain('0.400 (observed 0.667, chance 0.444)');
    expect(text).toContain('100.0% (1/1, 95% CI 20.6-100.0%)');
    expect(text).toContain('50.0% (1/2, 95% CI 9.4-90.5%)');
    expect(text).toContain('excess +0.400');
    expect(text).toContain('status: CERTIFIED');
  });

  it('--golden stores the outputs with the set (D4) and sends none again; exit 1 when not certified', async () => {
    const dir = setup();
    const { io: s, calls } = session(dir, api('not_certified'));
    expect(await calibrateCommand.run(['--labels', 'items.labels.jsonl', '--items', 'items.jsonl', '--rubric', 'r', '--golden'], s)).toBe(EXIT.FAILED);
    const set = JSON.parse(calls[0].body!);
    expect(set.golden).toBe(true);
    expect(set.items[0]).toMatchObject({ golden_output: ITEMS[0].output, golden_input: ITEMS[0].input });
    expect(JSON.parse(calls[1].body!)).toEqual({ set_id: 's-1' });
    expect(s.text()).toContain('status: NOT CERTIFIED (agreement_below_target, kappa_below_target)');
  });

  it('a refused target is exit 2, an unreachable service exit 3, a changed output exit 2 before any request', async () => {
    const dir = setup();
    const refused = session(dir, (r) => (r.url.endsWith('/v1/calibration-sets') ? { status: 201, json: { set: { id: 's-1' } } } : { status: 422, json: { code: 'TARGET_BELOW_MINIMUM', message: 'agreement target 0.8 is below the minimum 0.85' } }));
    await expect(calibrateCommand.run(['--labels', 'items.labels.jsonl', '--items', 'items.jsonl', '--rubric', 'r', '--target-agreement', '0.8'], refused.io)).rejects.toMatchObject({ exitCode: EXIT.USAGE, code: 'TARGET_BELOW_MINIMUM' });
    const down = session(dir, () => networkFailure('ECONNREFUSED'));
    await expect(calibrateCommand.run(['--labels', 'items.labels.jsonl', '--items', 'items.jsonl', '--rubric', 'r'], down.io)).rejects.toMatchObject({ exitCode: EXIT.UNREACHABLE });
    writeItems(dir, [{ ...ITEMS[0], output: 'edited since' }, ...ITEMS.slice(1)]);
    const changed = session(dir, api('certified'));
    await expect(calibrateCommand.run(['--labels', 'items.labels.jsonl', '--items', 'items.jsonl', '--rubric', 'r'], changed.io)).rejects.toThrow(/i1: its output changed since it was labelled/);
    expect(changed.calls).toHaveLength(0);
    await expect(calibrateCommand.run(['--labels', 'items.labels.jsonl', '--items', 'items.jsonl'], changed.io)).rejects.toBeInstanceOf(CliError);
  });

  it('J4 (issue 13): the size targets and the lower-bound option are sent; an insufficient set says what it has, what it needs and that nothing was spent; exit 1', async () => {
    const dir = setup();
    const insufficient = {
      report_id: 'r-2',
      set_id: 's-1',
      status: 'insufficient_set',
      judge_model: 'gpt-4o-2024-08-06',
      prompt_version: 'judge-v1',
      scope: `rubric:${sha256Hex('r')}`,
      report: { status: 'insufficient_set', n: 3, set: { n: 3, human_pass: 1, human_fail: 2, min_items: 60, min_per_class: 12 }, reasons: ['too_few_items', 'too_few_human_passes', 'too_few_human_fails'], judge: { calls: 0 } },
    };
    const { io: s, calls } = session(dir, (r) =>
      r.url.endsWith('/v1/calibration-sets') ? { status: 201, json: { set: { id: 's-1' } } } : r.url.endsWith('/v1/calibrations') ? { status: 201, json: insufficient } : undefined,
    );
    const code = await calibrateCommand.run(['--labels', 'items.labels.jsonl', '--items', 'items.jsonl', '--rubric', 'r', '--min-items', '60', '--min-per-class', '12', '--on-lower-bound'], s);
    expect(code).toBe(EXIT.FAILED);
    expect(JSON.parse(calls[1]!.body!).targets).toEqual({ min_items: 60, min_per_class: 12, agreement_basis: 'lower_bound' });
    const text = s.text();
    expect(text).toContain('set: 3 labelled item(s) - 1 pass, 2 fail; a set certifies only with at least 60 items and 12 of each class');
    expect(text).toContain('the judge was not called: nothing was spent');
    expect(text).toContain('status: INSUFFICIENT SET (too_few_items, too_few_human_passes, too_few_human_fails)');
    expect(text).toContain(`scope rubric:${sha256Hex('r')}`);
  });

  it('compare sends both output files and prints wins, losses, ties and position consistency with its interval', async () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, 'a.jsonl'), '{"case_id":"c1","output":"A1"}\n{"case_id":"c2","output":"A2"}\n');
    fs.writeFileSync(path.join(dir, 'b.jsonl'), '{"case_id":"c1","output":"B1"}\n');
    const answer = {
      comparison_id: 'cmp-1',
      run_a: 'ra',
      run_b: 'rb',
      judge_model: 'gpt-4o-2024-08-06',
      prompt_version: 'pairwise-v1',
      wins: 0,
      losses: 0,
      ties: 1,
      inconsistent_ties: 1,
      errors: 0,
      n: 1,
      shared: 1,
      only_a: 1,
      only_b: 0,
      position_consistency: { rate: 0, consistent: 0, n: 1, lower: 0, upper: 0.7935 },
      usage: { calls: 2, input_tokens: 642, output_tokens: 108, cost_usd: 0.0027 },
    };
    const { io: s, calls } = session(dir, (r) => (r.url.endsWith('/v1/comparisons') ? { status: 201, json: answer } : undefined));
    expect(await compareCommand.run(['--a', 'a.jsonl', '--b', 'b.jsonl', '--run-a', 'ra', '--run-b', 'rb'], s)).toBe(EXIT.PASS);
    expect(JSON.parse(calls[0].body!)).toEqual({ run_a: 'ra', run_b: 'rb', outputs_a: [{ case_id: 'c1', output: 'A1' }, { case_id: 'c2', output: 'A2' }], outputs_b: [{ case_id: 'c1', output: 'B1' }] });
    expect(s.text()).toContain('A wins 0, B wins 0, ties 1 (of which 1 position-inconsistent: no winner), errors 0');
    expect(s.text()).toContain('position consistency 0.0% (0/1, 95% CI 0.0-79.3%)');
    expect(s.text()).toContain('warning: the judge often changes its answer when the order changes');
  });
});
