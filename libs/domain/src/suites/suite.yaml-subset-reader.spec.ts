/**
 * The subset reader's contract (issue 31): whatever text it reads, its value is the yaml library's for that
 * text, read as the suite parser reads it (PARSE_OPTIONS, no error, no warning, no collection as a key); it
 * may decline any text, and the caller then reads it with the yaml library. Checked on the examples and the
 * docs' suites, fixed edge cases, generated suites, and random edits of those; and it must actually read the
 * suites people write, or it would save nothing.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import * as yaml from 'yaml';
import { PARSE_OPTIONS } from './suite.parser';
import { readYamlSubset } from './suite.yaml-subset-reader';

const ROOT = join(__dirname, '..', '..', '..', '..');

type Reference = { ok: true; value: unknown } | { ok: false };

function reference(text: string): Reference {
  try {
    const doc = yaml.parseDocument(text, PARSE_OPTIONS);
    if (doc.errors.length > 0 || doc.warnings.length > 0) return { ok: false };
    let collectionKey = false;
    yaml.visit(doc, {
      Pair(_, pair) {
        if (yaml.isCollection(pair.key)) collectionKey = true;
      },
    });
    return collectionKey ? { ok: false } : { ok: true, value: doc.toJS({ maxAliasCount: 100 }) };
  } catch {
    return { ok: false };
  }
}

/** Undefined when the contract holds for `text`, else what broke it. */
function breach(text: string): string | undefined {
  const read = readYamlSubset(text);
  if (read === undefined) return undefined;
  const ref = reference(text);
  if (!ref.ok) return `read ${show(read.value)} where the yaml library refuses the text`;
  return isDeepStrictEqual(read.value, ref.value) ? undefined : `read ${show(read.value)} where the yaml library reads ${show(ref.value)}`;
}

const show = (v: unknown): string => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : typeof x === 'number' && !Number.isFinite(x) ? String(x) : x));

function expectContract(text: string): void {
  const broken = breach(text);
  if (broken !== undefined) throw new Error(`${JSON.stringify(text)}: ${broken}`);
}

/** The YAML blocks of the docs, and the example suites: what users copy. */
function writtenSuites(): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const file of readdirSync(join(ROOT, 'examples')).filter((f) => f.endsWith('.suite.yaml'))) out.push([`examples/${file}`, readFileSync(join(ROOT, 'examples', file), 'utf8')]);
  for (const doc of ['suites.md', 'scorers.md', 'judge.md', 'calibration.md']) {
    const text = readFileSync(join(ROOT, 'docs', doc), 'utf8');
    let n = 0;
    for (const m of text.matchAll(/```yaml\n([\s\S]*?)\n```/g)) out.push([`docs/${doc} block ${++n}`, `${m[1]}\n`]);
  }
  return out;
}

describe('readYamlSubset', () => {
  describe('the suites people write', () => {
    const suites = writtenSuites();

    it.each(suites)('%s: read as the yaml library reads it', (_name, text) => {
      expectContract(text);
    });

    it('reads every example suite itself (else it saves nothing)', () => {
      const examples = suites.filter(([name]) => name.startsWith('examples/'));
      expect(examples.length).toBeGreaterThanOrEqual(3);
      for (const [name, text] of examples) expect([name, readYamlSubset(text) !== undefined]).toEqual([name, true]);
    });
  });

  describe('scalars under the YAML 1.2 core schema', () => {
    const plain = [
      '~', 'null', 'Null', 'NULL', 'nULL', 'true', 'True', 'TRUE', 'tRUE', 'false', 'yes', 'no', 'on', 'off', 'y', '0', '-0', '+5', '007', '0o17',
      '0o8', '0x1F', '0xg', '0b101', '1_000', '12:30', '12:30:00', '1.5', '-1.5', '.5', '1.', '+.5', '1e3', '1E-3', '1.5e+3', '.inf', '-.Inf', '+.INF',
      '.nan', '.NaN', 'nan', 'inf', '9007199254740993', '123456789012345678901234567890', '2024-01-01', '- a', '-a', '?a', ':a', 'a:b', 'a: b', 'a:',
      'a #b', 'a#b', 'a  #b', '@a', '`a', '%a', '&a', '*a', '!a', '|a', '>a', ',a', 'a, b', 'a [b]', 'a {b}', '[a]', '{a: 1}', "'a'", '"a"', 'a "b" c',
      "it's", 'é ü 漢字 😀', 'a\\b', '"a\\"b"', '"\\x41\\u00e9\\U0001F600"', '"\\q"', '"\\x4"', '"a', "'a''b'", "'a'b'", '"a" b', '"a" #c', "''", '""',
      '"\\ \\/\\N\\_\\L\\P\\0\\a\\e"', '[]', '{}', '[a, b]', '[a, b,]', '[a,, b]', '[a: b]', '{a: 1, b: [x, "y"]}', '{a : 1}', '{a:1}', '{"a":1}',
      '{a: 1, a: 2}', '{1: a}', '{true: a}', '{a}', '{a: }', '{a: b #c}', '{a: b} #c', '{a: b}#c', '[http://x.y/z]', '[a:b]', '{a: http://x}', '[a',
      '[[a], {b: c}]', '{a: -1, b: .5, c: ~}',
    ];
    it.each(plain)('value %s', (value) => {
      expectContract(`key: ${value}\n`);
      expectContract(`- ${value}\n`);
      expectContract(`a: {k: ${value}}\n`);
    });

    it('types as the core schema does (not YAML 1.1): a sample read by the subset reader itself', () => {
      const read = readYamlSubset('a: yes\nb: 0o17\nc: 1_000\nd: 12:30\ne: .5\nf: ~\ng: -0\nh: 2024-01-01\ni: 9007199254740993\n');
      expect(read?.value).toEqual({ a: 'yes', b: 15n, c: '1_000', d: '12:30', e: 0.5, f: null, g: 0n, h: '2024-01-01', i: 9007199254740993n });
    });
  });

  describe('structure', () => {
    const texts = [
      'a: 1\nb: 2\n',
      '  a: 1\n  b: 2\n',
      'a: 1\na: 2\n',
      'a:\n  b: 1\n  c:\n    - x\n    - y\n',
      'a:\n- x\n- y\nb: 1\n',
      'a:\n- x\n- y\n- z: 1\n  w: 2\n',
      '- a: 1\n  b: 2\n- a: 3\n',
      '-   a: 1\n    b: 2\n',
      '- - a\n',
      '-\n  a: 1\n',
      '-\n- b\n',
      'a:\nb:\n',
      'a: # note\n  b: 1\n',
      'a: b\n  c\n',
      'a: b\n\n  c\n',
      'a: b\n  # a deeper comment\n',
      'a: b\n# a comment\nc: d\n',
      'a: "b"\n  c\n',
      'a: "b\n  c"\n',
      'a: [b,\n  c]\n',
      'a : b\n',
      '"a b": 1\n\'c\': 2\n',
      '"a":1\n',
      'a: b: c\n',
      'a:b\n',
      'a\n',
      '? a\n: b\n',
      '[a]: b\n',
      '{a: 1}\n',
      'a: 1\n- b\n',
      '- a\nb: 1\n',
      'a:\n  - b\n   - c\n',
      'a:\n  b: 1\n c: 2\n',
      '__proto__: 1\n',
      '<<: {a: 1}\n',
      'true: 1\n',
      '1: a\n',
      'a: &x 1\nb: *x\n',
      'a: !!str 1\n',
      '---\na: 1\n',
      'a: 1\n...\n',
      '%YAML 1.2\n---\na: 1\n',
      'a: 1\r\nb: 2\r\n',
      'a:\t1\n',
      '\ta: 1\n',
      '\ufeffa: 1\n',
      'a: 1 # c\nb: 2 #c\n',
      '',
      '# only a comment\n',
      'a: 1',
    ];
    it.each(texts)('%j', (text) => expectContract(text));
  });

  describe('literal block scalars', () => {
    const texts = [
      'a: |\n  one\n  two\nb: 1\n',
      'a: |-\n  one\n  two\nb: 1\n',
      'a: |+\n  one\n\nb: 1\n',
      'a: >\n  one\n  two\n',
      'a: >-\n  one\n  two\n\n  three\n\n\n  four\nb: 1\n',
      'a: >\n\n  one\n',
      'a: >\n  one\n    more\n  two\n',
      'a: >\n  one\n  \n  two\n',
      '- >-\n  one\n  two\n',
      'a: |2\n    one\n',
      'a: |\n  one\n\n\n  two\n\n\nb: 1\n',
      'a: |\n\n  one\n',
      'a: |\n   \n  one\n',
      'a: |\n  one\n   \n  two\n',
      'a: |\n  one\n    indented more\n  # not a comment\n',
      'a: |\n  one\n # a comment\nb: 1\n',
      'a: |\n  one\n   b\n',
      'a: |\nb: 1\n',
      'a: |\n  one',
      'a: | # note\n  one\n',
      'a: |#note\n  one\n',
      '- |\n  one\n- |-\n  two\n',
      '- a: |\n    one\n  b: 2\n',
      '- a: |\n   one\n',
      'a:\n  b: |\n    x: y\n    - z\n  c: 1\n',
    ];
    it.each(texts)('%j', (text) => expectContract(text));

    it('folds a rubric as YAML does (read by the subset reader itself)', () => {
      expect(readYamlSubset('a: >-\n  one\n  two\n\n  three\nb: >\n  x\n  y\n')?.value).toEqual({ a: 'one two\nthree', b: 'x y\n' });
    });

    it('keeps the text of a prompt exactly (read by the subset reader itself)', () => {
      expect(readYamlSubset('a: |\n  Dear {name},\n\n    indented: "quoted" # not a comment\nb: |-\n  x\n')?.value).toEqual({
        a: 'Dear {name},\n\n  indented: "quoted" # not a comment\n',
        b: 'x',
      });
    });
  });

  describe('generated suites and random edits of them', () => {
    const word = fc.stringMatching(/^[a-z][a-z0-9_-]{0,8}$/);
    const scalarText = fc.oneof(
      word,
      fc.constantFrom('0', '1', '-3', '0.5', '1e3', 'true', 'null', '~', 'yes', '0o7', '0x1f', '.inf', '12:30', 'a b', 'a, b', 'x#y', "it's", 'é 漢字'),
      fc.string({ maxLength: 12 }).map((s) => JSON.stringify(s)),
      fc.string({ maxLength: 12 }).map((s) => `'${s.replace(/'/g, "''")}'`),
      fc.string({ maxLength: 24 }),
    );
    const scorer = fc.oneof(
      fc.record({ type: fc.constant('contains'), value: scalarText }).map((s) => `{type: ${s.type}, value: ${s.value}}`),
      fc.constantFrom('{type: json_valid}', '{type: regex, pattern: "ticket-\\\\d{6}"}', '{type: exact}', '[]', '{}'),
    );
    const caseText = fc
      .record({
        id: word,
        input: scalarText,
        expected: fc.option(scalarText, { nil: undefined }),
        scorer: fc.option(scorer, { nil: undefined }),
        labels: fc.option(fc.array(word, { maxLength: 3 }), { nil: undefined }),
        prompt: fc.option(fc.array(fc.string({ maxLength: 16 }), { minLength: 1, maxLength: 3 }), { nil: undefined }),
        comment: fc.boolean(),
      })
      .map((c) => {
        const lines = [`  - id: ${c.id}`, `    input: ${c.input}`];
        if (c.expected !== undefined) lines.push(`    expected: ${c.expected}${c.comment ? ' # why' : ''}`);
        if (c.scorer !== undefined) lines.push(`    scorer: ${c.scorer}`);
        if (c.labels !== undefined) lines.push('    labels:', ...c.labels.map((l) => `      - ${l}`));
        if (c.prompt !== undefined) lines.push(`    context: ${c.comment ? '>-' : '|'}`, ...c.prompt.map((l) => (l.trim() === '' ? '' : `      ${l}`)));
        if (c.comment) lines.push('    # a note');
        return lines.join('\n');
      });
    const suiteText = fc
      .record({ key: word, cases: fc.array(caseText, { minLength: 1, maxLength: 4 }) })
      .map((s) => `key: ${s.key}\ndescription: a generated suite\ndefault_scorer: {type: exact}\npass_threshold: 0.8\ncases:\n${s.cases.join('\n')}\n`);

    it('a generated suite is read as the yaml library reads it', () => {
      fc.assert(fc.property(suiteText, (text) => breach(text) === undefined), { seed: 31, numRuns: 1500 });
    });

    it('reads most generated suites itself', () => {
      const texts = fc.sample(suiteText, { seed: 31, numRuns: 300 });
      const read = texts.filter((t) => readYamlSubset(t) !== undefined).length;
      expect(read).toBeGreaterThan(texts.length / 2);
    });

    it('a random edit of one never makes it read something the yaml library does not', () => {
      const significant = [...' \n:-#\'"{}[],|>&*!?%@`\\'];
      const edit = fc.tuple(suiteText, fc.array(fc.tuple(fc.nat(), fc.constantFrom('insert', 'delete', 'duplicate line'), fc.constantFrom(...significant)), { minLength: 1, maxLength: 3 }));
      fc.assert(
        fc.property(edit, ([text, edits]) => {
          let t = text;
          for (const [at, kind, ch] of edits) {
            const i = at % Math.max(1, t.length);
            if (kind === 'insert') t = t.slice(0, i) + ch + t.slice(i);
            else if (kind === 'delete') t = t.slice(0, i) + t.slice(i + 1);
            else {
              const start = t.lastIndexOf('\n', i - 1) + 1;
              const end = t.indexOf('\n', i);
              const line = t.slice(start, end < 0 ? t.length : end + 1);
              t = t.slice(0, start) + line + t.slice(start);
            }
          }
          const broken = breach(t);
          if (broken !== undefined) throw new Error(`${JSON.stringify(t)}: ${broken}`);
        }),
        { seed: 2031, numRuns: 4000 },
      );
    });
  });
});
