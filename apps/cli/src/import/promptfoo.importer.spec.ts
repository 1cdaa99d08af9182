import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { validateScorerSpec } from '@evals/scorers';
import { cli } from '../cli.testing';
import { assertionFromString, importPromptfoo, mapAssertion } from './promptfoo.importer';
import { assignIds } from './suite-file';

/** Scores one output with the spec a promptfoo assertion maps to. */
function verdict(assertion: Record<string, unknown>, output: string, vars: Record<string, unknown> = {}): boolean {
  const m = mapAssertion(assertion, vars);
  if ('unsupported' in m) throw new Error(m.unsupported);
  const compiled = validateScorerSpec(m.spec, m.expected === undefined ? {} : { expected: m.expected });
  if (!compiled.ok || compiled.scorer.kind !== 'deterministic') throw new Error(JSON.stringify(compiled));
  return compiled.scorer.score(output).passed;
}

describe('promptfoo assertions to scorers (issue 29)', () => {
  it.each<[Record<string, unknown>, string, boolean]>([
    [{ type: 'equals', value: 'ok' }, 'ok', true],
    [{ type: 'equals', value: 'ok' }, 'ok ', false],
    [{ type: 'equals', value: 42 }, '42', true],
    [{ type: 'equals', value: { a: [1, 2] } }, '{"a":[1,2]}', true],
    [{ type: 'not-equals', value: 'ok' }, 'ok', false],
    [{ type: 'contains', value: 'fund' }, 'refund', true],
    [{ type: 'icontains', value: 'FUND' }, 'Refund', true],
    [{ type: 'not-icontains', value: 'FUND' }, 'Refund', false],
    [{ type: 'contains-any', value: 'x, "b, c"' }, 'a b, c', true], // promptfoo keeps a quoted part whole
    [{ type: 'icontains-any', value: ['X', 'B'] }, 'abc', true],
    [{ type: 'contains-all', value: 'a, b' }, 'b a', true],
    [{ type: 'contains-all', value: ['a', 'z'] }, 'b a', false],
    [{ type: 'not-contains-all', value: ['a', 'z'] }, 'b a', true],
    [{ type: 'not-contains-any', value: ['a', 'z'] }, 'b a', false],
    [{ type: 'icontains-all', value: ['A', 'B'] }, 'ab', true],
    [{ type: 'starts-with', value: 'He' }, 'Hello', true],
    [{ type: 'not-starts-with', value: 'He' }, 'Hello', false],
    [{ type: 'regex', value: '^\\d+$' }, '123', true],
    [{ type: 'not-regex', value: '^\\d+$' }, '123', false],
    [{ type: 'is-json' }, ' [1] ', true],
    [{ type: 'not-is-json' }, '{', true],
    [{ type: 'contains-json' }, 'x {"a":1} y', true],
    [{ type: 'not-contains-json' }, 'x {"a":1} y', false],
    [{ type: 'levenshtein', value: 'kitten' }, 'sitting', true],
    [{ type: 'levenshtein', value: 'kitten', threshold: 2 }, 'sitting', false],
    [{ type: 'contains', value: '{{ word }}' }, 'a refund', true],
    [{ type: 'contains-any', value: ['zzz', '{{word}}'] }, 'a refund', true], // list items are rendered too
    [{ type: 'equals', value: { w: '{{word}}' } }, '{"w":"refund"}', true],
  ])('%j on %j -> %s', (assertion, output, passed) => {
    expect(verdict(assertion, output, { word: 'refund' })).toBe(passed);
  });

  it.each<[Record<string, unknown>, RegExp]>([
    [{ type: 'javascript', value: 'output.length' }, /no deterministic equivalent/],
    [{ type: 'similar', value: 'x' }, /no deterministic equivalent/],
    [{ type: 'not-levenshtein', value: 'x' }, /ignores `not-`/],
    [{ type: 'is-json', value: { type: 'object' } }, /schema/],
    [{ type: 'contains', value: 'a', transform: 'output.trim()' }, /transform/],
    [{ type: 'contains', value: '{% if x %}a{% endif %}' }, /Nunjucks/],
    [{ type: 'not-llm-rubric', value: 'x' }, /negated/],
    [{ type: 'regex', value: '(?i)^yes' }, /not a JavaScript regex/],
  ])('%j is not imported (%s)', (assertion, reason) => {
    const m = mapAssertion(assertion, {});
    expect('unsupported' in m && m.unsupported).toMatch(reason);
  });

  it('reads CSV __expected cells as promptfoo does', () => {
    expect(assertionFromString('contains: foo')).toEqual({ type: 'contains', value: 'foo' });
    expect(assertionFromString('not-icontains-all: a, b')).toEqual({ type: 'not-icontains-all', value: ['a', 'b'] });
    expect(assertionFromString('levenshtein(2): abc')).toEqual({ type: 'levenshtein', value: 'abc', threshold: 2 });
    expect(assertionFromString('levenshtein: abc')).toMatchObject({ threshold: 0.75 });
    expect(assertionFromString('grade: is polite')).toEqual({ type: 'llm-rubric', value: ' is polite' });
    expect(assertionFromString('just text')).toEqual({ type: 'equals', value: 'just text' });
    expect(assertionFromString('fn: output.length > 1').type).toBe('javascript');
  });
});

describe('importPromptfoo: tests to cases', () => {
  const read = (files: Record<string, string>) => (f: string) => {
    const text = files[path.basename(f)];
    if (text === undefined) throw new Error(`no ${f}`);
    return text;
  };

  it('applies defaultTest vars and assertions to every test, combining with all', () => {
    const r = importPromptfoo(
      { defaultTest: { vars: { lang: 'en' }, assert: [{ type: 'not-contains', value: 'x' }] }, tests: [{ vars: { q: 'hi' }, assert: [{ type: 'contains', value: 'a' }] }] },
      '/c/promptfooconfig.yaml',
      read({}),
    );
    expect(r.cases[0]).toEqual({ input: { lang: 'en', q: 'hi' }, scorer: { type: 'all', scorers: [{ type: 'not_contains', value: 'x' }, { type: 'contains', value: 'a' }] } });
  });

  it('keeps weights and threshold, and a threshold of 0 is the all-pass rule (promptfoo: `if (this.threshold)`)', () => {
    const asserts = [{ type: 'contains', value: 'a', weight: 2 }, { type: 'contains', value: 'b' }];
    const r = importPromptfoo({ tests: [{ assert: asserts, threshold: 0.5 }, { assert: asserts, threshold: 0 }] }, '/c/p.yaml', read({}));
    expect(r.cases[0]?.scorer).toMatchObject({ type: 'all', threshold: 0.5, weights: [2, 1] });
    expect(r.cases[1]?.scorer).toEqual({ type: 'all', scorers: [{ type: 'contains', value: 'a' }, { type: 'contains', value: 'b' }], weights: [2, 1] });
    // A lone weight-0 assertion always passes in promptfoo: it stays inside all, whose weight 0 never decides.
    const lone = importPromptfoo({ tests: [{ assert: [{ type: 'contains', value: 'a', weight: 0 }] }] }, '/c/p.yaml', read({}));
    expect(lone.cases[0]?.scorer).toEqual({ type: 'all', scorers: [{ type: 'contains', value: 'a' }], weights: [0] });
  });

  it('maps a lone llm-rubric to llm_judge and refuses it next to other assertions', () => {
    const r = importPromptfoo(
      { tests: [{ description: 'polite', assert: [{ type: 'llm-rubric', value: 'Is polite', threshold: 0.8 }] }, { assert: [{ type: 'llm-rubric', value: 'x' }, { type: 'contains', value: 'a' }] }] },
      '/c/p.yaml',
      read({}),
    );
    expect(r.cases[0]?.scorer).toEqual({ type: 'llm_judge', rubric: 'Is polite', min_score: 0.8 });
    expect(r.cases[1]).toBeUndefined();
    expect(r.leftOut).toEqual([{ index: 2, what: 'llm-rubric', reason: expect.stringMatching(/together/) }]);
  });

  it('reads file:// tests in YAML, JSON, JSONL and CSV', () => {
    const files = {
      'a.yaml': '- vars: { q: one }\n  assert: [{ type: equals, value: "1" }]\n',
      'b.json': JSON.stringify([{ vars: { q: 'two' }, assert: [{ type: 'is-json' }] }]),
      'c.jsonl': `${JSON.stringify({ vars: { q: 'three' }, assert: [{ type: 'regex', value: 'x' }] })}\n`,
      'd.csv': 'q,__expected,__description\nfour,icontains: X,fourth\n',
    };
    const r = importPromptfoo({ tests: ['file://a.yaml', 'file://b.json', 'c.jsonl', 'file://d.csv'] }, '/c/p.yaml', read(files));
    expect(r.cases.map((c) => c?.input)).toEqual([{ q: 'one' }, { q: 'two' }, { q: 'three' }, { q: 'four' }]);
    expect(r.cases[3]).toEqual({ name: 'fourth', input: { q: 'four' }, scorer: { type: 'contains', value: 'X', ignore_case: true } });
    expect(r.cases[0]).toMatchObject({ expected: '1', scorer: { type: 'exact' } });
  });

  it('lists a pattern RE2 cannot run with the validator\'s reason', () => {
    const r = importPromptfoo({ tests: [{ assert: [{ type: 'regex', value: '(?<=a)b' }] }] }, '/c/p.yaml', read({}));
    expect(r.leftOut).toEqual([{ index: 1, what: 'regex', reason: expect.any(String) }, { index: 1, what: 'test', reason: expect.stringMatching(/no assertion left/) }]);
  });

  it('lists list vars (promptfoo expands them), file:// vars and file:// values; refuses a tests glob', () => {
    const assert = [{ type: 'contains', value: 'a' }];
    const r = importPromptfoo(
      { tests: [{ vars: { q: ['a', 'b'] }, assert }, { vars: { q: 'file://q.txt' }, assert }, { vars: { q: 'x' }, assert: [{ type: 'contains', value: 'file://v.txt' }] }] },
      '/c/p.yaml',
      read({}),
    );
    expect(r.cases).toEqual([undefined, undefined, undefined]);
    expect(r.leftOut.map((l) => [l.index, l.what])).toEqual([[1, 'test'], [2, 'test'], [3, 'contains'], [3, 'test']]);
    expect(() => importPromptfoo({ tests: 'file://tests/*.yaml' }, '/c/p.yaml', read({}))).toThrow(/glob/);
  });

  it('lists a test without assertions (promptfoo passes it whatever the output) as left out', () => {
    const r = importPromptfoo({ tests: [{ description: 'bare', vars: { a: 1 } }] }, '/c/p.yaml', read({}));
    expect(r.leftOut).toEqual([{ index: 1, description: 'bare', what: 'test', reason: expect.stringMatching(/no assertions/) }]);
  });
});

describe('case ids: the description when it is a valid, unique id, else test-N', () => {
  it.each<[(string | undefined)[], string[]]>([
    [['a', 'b'], ['a', 'b']],
    [['a', 'a'], ['test-1', 'test-2']], // shared descriptions are not unique
    [['has space', undefined], ['test-1', 'test-2']],
    [[undefined, 'test-1'], ['test-1', 'test-2']], // a description equal to another test's fallback falls back
    [['test-2', 'x'], ['test-2', 'x']], // ... but only when that fallback is used
  ])('%j -> %j', (names, ids) => {
    expect(assignIds(names, 'test')).toEqual(ids);
  });
});

describe('evals import promptfoo', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-import-pf-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const config = [
    'description: Support replies',
    'tests:',
    '  - description: refund-reply',
    '    vars: { ticket: "refund?" }',
    '    assert: [{ type: icontains, value: refund }, { type: javascript, value: "output.length < 99" }]',
    '  - vars: { ticket: "hi" }',
    '    assert: [{ type: starts-with, value: Hello }]',
  ].join('\n');
  fs.writeFileSync(path.join(dir, 'promptfooconfig.yaml'), config);

  it('exits 2 naming the test index, its description and the assertion type, and writes nothing', async () => {
    const r = await cli(['import', 'promptfoo', 'promptfooconfig.yaml', '--out', 'a.suite.yaml'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.err).toContain('test 1 "refund-reply": javascript: no deterministic equivalent');
    expect(fs.existsSync(path.join(dir, 'a.suite.yaml'))).toBe(false);
  });

  it('with --skip-unsupported writes a valid suite, exits 0 and lists what was left out', async () => {
    const r = await cli(['import', 'promptfoo', 'promptfooconfig.yaml', '--out', 'b.suite.yaml', '--skip-unsupported'], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.out).toContain('test 1 "refund-reply": javascript');
    const suite = parse(fs.readFileSync(path.join(dir, 'b.suite.yaml'), 'utf8'));
    expect(suite.key).toBe('support-replies');
    expect(suite.cases.map((c: { id: string }) => c.id)).toEqual(['refund-reply', 'test-2']);
    const v = await cli(['suite', 'validate', 'b.suite.yaml'], { cwd: dir });
    expect(v.code).toBe(0);
  });

  it('needs --out', async () => {
    expect((await cli(['import', 'promptfoo', 'promptfooconfig.yaml'], { cwd: dir })).code).toBe(2);
  });
});
