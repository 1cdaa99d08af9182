import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { cli } from '../cli.testing';
import { importDataset, readDatasetRows } from './dataset.importer';

describe('datasets to cases (issue 29 part 2)', () => {
  it('reads a LangSmith export: inputs, outputs by dotted path, metadata as tags', () => {
    const rows = [{ id: 'q1', inputs: { question: 'hi' }, outputs: { answer: 'hello' }, metadata: { Topic: 'Greeting', n: 2, deep: { a: 1 }, long: 'x'.repeat(80) } }];
    const r = importDataset(rows, { expected: 'outputs.answer' });
    expect(r.items[0]).toEqual({ name: 'q1', input: { question: 'hi' }, expected: 'hello', tags: ['n:2', 'topic:greeting'] });
    expect(r.columns.input).toBe('inputs'); // found among the defaults
  });

  it('reads a Braintrust export (input, expected, metadata) and lists rows without an input', () => {
    const r = importDataset([{ input: 'Hi', expected: { reply: 'Hello' } }, { input: '', expected: 'x' }], {});
    expect(r.items[0]).toEqual({ input: 'Hi', expected: { reply: 'Hello' } });
    expect(r.leftOut).toEqual([{ index: 2, what: 'row', reason: 'no non-empty `input`' }]);
  });

  it('reads CSV and JSONL, naming the line of a bad JSON line', () => {
    expect(readDatasetRows('input,expected\n"a, b",c\n', 'd.csv')).toEqual([{ input: 'a, b', expected: 'c' }]);
    expect(() => readDatasetRows('{"input":"a"}\n{oops\n', 'd.jsonl')).toThrow('d.jsonl:2: not a JSON object');
  });
});

describe('evals import dataset and openai-evals', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-import-ds-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'qa.csv'), 'id,question,answer,lang\nr1,Hello?,Bonjour,fr\nr1,Thanks?,Merci,fr\n');
  fs.writeFileSync(path.join(dir, 'samples.jsonl'), '{"input":"2+2?","ideal":["4","four"]}\n{"input":"","ideal":"x"}\n');

  it('writes a valid suite with the scorer given by --scorer, ids row-N when the id column repeats', async () => {
    const r = await cli(['import', 'dataset', 'qa.csv', '--input', 'question', '--expected', 'answer', '--metadata', 'lang', '--scorer', '{type: exact, ignore_case: true}', '--out', 'qa.suite.yaml'], { cwd: dir });
    expect(r).toMatchObject({ code: 0 });
    const suite = parse(fs.readFileSync(path.join(dir, 'qa.suite.yaml'), 'utf8'));
    expect(suite).toMatchObject({ key: 'qa', default_scorer: { type: 'exact', ignore_case: true } });
    expect(suite.cases).toEqual([
      { id: 'row-1', input: 'Hello?', expected: 'Bonjour', tags: ['lang:fr'] },
      { id: 'row-2', input: 'Thanks?', expected: 'Merci', tags: ['lang:fr'] },
    ]);
    expect((await cli(['suite', 'validate', 'qa.suite.yaml'], { cwd: dir })).code).toBe(0);
  });

  it('openai-evals exits 2 on a bad sample, 0 with --skip-unsupported', async () => {
    const refused = await cli(['import', 'openai-evals', 'samples.jsonl', '--out', 's.suite.yaml'], { cwd: dir });
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('sample 2: sample: `input` must be');
    const ok = await cli(['import', 'openai-evals', 'samples.jsonl', '--eval', 'includes', '--out', 's.suite.yaml', '--skip-unsupported', '--key', 'math'], { cwd: dir });
    expect(ok.code).toBe(0);
    expect(parse(fs.readFileSync(path.join(dir, 's.suite.yaml'), 'utf8')).default_scorer).toEqual({ type: 'contains_any', value: ['4', 'four'] });
  });

  it('refuses an unknown --eval, a bad --scorer and an --out it cannot write (exit 2)', async () => {
    expect((await cli(['import', 'dataset', 'qa.csv', '--out', 'no/such/dir/x.yaml'], { cwd: dir })).code).toBe(2);
    expect((await cli(['import', 'openai-evals', 'samples.jsonl', '--eval', 'nope', '--out', 'x.yaml'], { cwd: dir })).code).toBe(2);
    expect((await cli(['import', 'dataset', 'qa.csv', '--scorer', '[1]', '--out', 'x.yaml'], { cwd: dir })).code).toBe(2);
  });
});
