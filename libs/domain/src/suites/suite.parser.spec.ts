import fc from 'fast-check';
import { SUITE_ERROR_CODES as E, type SuiteError } from './suite-error';
import { MAX_SUITE_BYTES } from './suite.limits';
import { parseFieldPath, parseSuiteYaml } from './suite.parser';
import { formatPath } from './suite.validator';

const FILE = 'triage.suite.yaml';

const VALID = `# comment
key: triage
default_scorer: {type: contains, value: refund, ignore_case: true}
pass_threshold: 0.8
regression_threshold: 0.1
cases:
  - id: a
    input: Where is my refund?
  - id: b
    input:
      ticket: Refund please
`;

function errorsOf(text: string): SuiteError[] {
  const r = parseSuiteYaml(text, FILE);
  if (r.ok) throw new Error('expected a refusal');
  return [...r.errors];
}

describe('parseSuiteYaml', () => {
  it('parses a valid suite', () => {
    const r = parseSuiteYaml(VALID, FILE);
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.suite.cases.map((c) => c.id)).toEqual(['a', 'b']);
    expect(r.suite.default_scorer).toEqual({ type: 'contains', value: 'refund', ignore_case: true });
  });

  it('parses JSON, which is YAML', () => {
    const json = JSON.stringify({
      key: 'triage',
      default_scorer: { type: 'contains', value: 'refund' },
      pass_threshold: 0.8,
      regression_threshold: 0.1,
      cases: [{ id: 'a', input: 'x' }],
    });
    expect(parseSuiteYaml(json, 'suite.json').ok).toBe(true);
  });

  it('reports a syntax error with its line and column', () => {
    const errors = errorsOf('key: triage\ncases:\n  - id: a\n    input: [unclosed\n');
    expect(errors[0]).toEqual(expect.objectContaining({ code: E.YAML_SYNTAX, file: FILE, field: '', line: expect.any(Number), column: expect.any(Number) }));
    expect(errors[0]?.message).toMatch(/line \d+, column \d+/);
  });

  it('refuses duplicate keys instead of keeping the last one', () => {
    const errors = errorsOf(VALID.replace('pass_threshold: 0.8', 'pass_threshold: 0.8\npass_threshold: 0.2'));
    expect(errors.map((e) => [e.code, e.line])).toEqual([[E.YAML_SYNTAX, 5]]);
  });

  it('refuses several documents in one file', () => {
    expect(errorsOf(`${VALID}---\nkey: other\n`)[0]?.code).toBe(E.YAML_SYNTAX);
  });

  it('refuses unknown tags', () => {
    const errors = errorsOf(VALID.replace('input: Where is my refund?', 'input: !secret Where is my refund?'));
    expect(errors.map((e) => [e.code, e.line])).toEqual([[E.YAML_UNSUPPORTED, 8]]);
  });

  it('refuses an alias bomb', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 8; i++) bomb.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10).fill(`*${String.fromCharCode(96 + i)}`).join(', ')}]`);
    expect(errorsOf(bomb.join('\n'))[0]?.code).toBe(E.YAML_UNSUPPORTED);
  });

  it('allows a few anchors and aliases, resolved as values', () => {
    const text = VALID.replace('default_scorer: {type: contains, value: refund, ignore_case: true}', 'default_scorer: &s {type: contains, value: refund}')
      .replace('    input: Where is my refund?', '    input: Where is my refund?\n    scorer: *s');
    const r = parseSuiteYaml(text, FILE);
    expect(r.ok && r.suite.cases[0]?.scorer).toEqual({ type: 'contains', value: 'refund' });
  });

  it('refuses a mapping or list used as a key', () => {
    const errors = errorsOf(`${VALID}? [a, b]\n: c\n`);
    expect(errors.map((e) => [e.code, e.line])).toEqual([[E.YAML_UNSUPPORTED, 12]]);
  });

  it('refuses an empty file and a file that is not a mapping', () => {
    expect(errorsOf('')[0]?.code).toBe(E.SUITE_NOT_A_MAPPING);
    expect(errorsOf('# only a comment\n')[0]?.code).toBe(E.SUITE_NOT_A_MAPPING);
    expect(errorsOf('- a\n- b\n')[0]?.code).toBe(E.SUITE_NOT_A_MAPPING);
  });

  it('refuses a file over MAX_SUITE_BYTES', () => {
    expect(errorsOf(`key: x\n#${'a'.repeat(MAX_SUITE_BYTES)}`)[0]?.code).toBe(E.SUITE_TOO_LARGE);
  });

  it('reads YAML 1.2 core: yes/no are strings, dates are strings, .nan is refused', () => {
    const errors = errorsOf(VALID.replace('pass_threshold: 0.8', 'pass_threshold: .nan\ngolden_fixtures: yes'));
    expect(errors.map((e) => [e.code, e.field, e.line])).toEqual([
      [E.VALUE_NOT_JSON, 'pass_threshold', 4],
      [E.FIELD_INVALID, 'golden_fixtures', 5],
    ]);
    const dated = parseSuiteYaml(VALID.replace('input: Where is my refund?', 'input: 2024-07-31'), FILE);
    expect(dated.ok && dated.suite.cases[0]?.input).toBe('2024-07-31');
  });

  it('refuses integers beyond 2^53 rather than rounding them', () => {
    const errors = errorsOf(VALID.replace('input: Where is my refund?', 'input: x\n    expected: 12345678901234567890'));
    expect(errors.map((e) => [e.code, e.field, e.line])).toEqual([[E.VALUE_IMPRECISE, 'cases[0].expected', 9]]);
  });

  it('refuses !!binary values', () => {
    expect(errorsOf(VALID.replace('input: Where is my refund?', 'input: !!binary aGVsbG8='))[0]?.code).toBe(E.VALUE_NOT_JSON);
  });

  it('points each validation error at its line and column, in file order', () => {
    const text = [
      'key: triage', // 1
      'default_scorer: {type: contains, value: refund}', // 2
      'pass_threshold: 0.8', // 3
      'regression_threshold: 0.1', // 4
      'cases:', // 5
      '  - id: a', // 6
      '    input: x', // 7
      '  - id: lookahead', // 8
      '    input: x', // 9
      '    scorer:', // 10
      '      type: regex', // 11
      "      pattern: 'a(?=b)'", // 12
      '  - id: no-input', // 13
      '  - id: a', // 14
      '    input: y', // 15
    ].join('\n');
    const errors = errorsOf(text);
    expect(errors.map((e) => [e.code, e.field, e.case_id, e.line, e.column])).toEqual([
      ['REGEX_UNSUPPORTED', 'cases[1].scorer.pattern', 'lookahead', 12, 16],
      [E.FIELD_REQUIRED, 'cases[2].input', 'no-input', 13, 5],
      [E.CASE_ID_DUPLICATE, 'cases[3].id', 'a', 14, 9],
    ]);
    expect(errors[0]?.message).toMatch(/^case "lookahead": .*look-ahead/);
  });

  it('never throws on arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), (text) => {
        expect(typeof parseSuiteYaml(text, FILE).ok).toBe('boolean');
      }),
      { numRuns: 1000 },
    );
    fc.assert(
      fc.property(fc.array(fc.constantFrom('key: a', 'cases:', '  - id: x', '    input: y', '- ', '  ', '{', '[', '&a', '*a', '!!', 'pass_threshold: 1', '? ', ': ', '|', '>'), { maxLength: 20 }), (lines) => {
        expect(typeof parseSuiteYaml(lines.join('\n'), FILE).ok).toBe('boolean');
      }),
      { numRuns: 1000 },
    );
  });
});

describe('field paths', () => {
  it('parses what formatPath writes', () => {
    const segment = fc.oneof(fc.nat({ max: 10_000 }), fc.string({ maxLength: 30 }));
    fc.assert(
      fc.property(fc.string({ minLength: 1 }).filter((s) => /^[A-Za-z_]/.test(s)), fc.array(segment, { maxLength: 6 }), (head, rest) => {
        const path = [head, ...rest];
        expect(parseFieldPath(formatPath(path))).toEqual(path);
      }),
    );
  });

  it('refuses what it cannot read', () => {
    expect(parseFieldPath('cases[x]')).toBeUndefined();
    expect(parseFieldPath('a..b')).toBeUndefined();
    expect(parseFieldPath('')).toEqual([]);
  });
});
