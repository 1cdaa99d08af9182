import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseCasesInBatches, parseSuiteYaml, parseWhole } from './suite.parser';

/**
 * Issue 15 part 2: a large suite file is read in slices of cases (bounded memory), and must give exactly
 * what the whole-document reader gives - the same suite, the same hash input, the same problems with the
 * same fields, cases, lines and columns (S4, V3) - or decline, so that the whole-document reader answers.
 */
const EXAMPLES = join(__dirname, '..', '..', '..', '..', 'examples');

function header(extra = ''): string {
  return ['# a generated suite', 'key: batched', 'description: "slices of cases"', 'default_scorer: {type: exact, trim: true}', 'pass_threshold: 0.8', 'regression_threshold: 0.05', extra, 'cases:'].filter((l) => l !== '').join('\n');
}

function caseLines(i: number, indent = '  '): string {
  const body = [
    `${indent}- id: c${i}`,
    i % 3 === 0 ? `${indent}  input:\n${indent}    task: route\n${indent}    ticket: "ticket ${i}"` : `${indent}  input: "question ${i}"`,
    i % 5 === 0 ? `${indent}  expected: "answer ${i}"` : `${indent}  scorer: {type: contains, value: token-${i}}`,
    `${indent}  tags: [group-${i % 7}, t${i % 2}]`,
  ];
  if (i % 50 === 0) body.push(`${indent}  # a comment inside case ${i}`, '');
  if (i % 97 === 0 && i % 5 !== 0) body.push(`${indent}  # a block scalar`, `${indent}  expected: |`, `${indent}    line one of ${i}`, '', `${indent}    line three`);
  return body.join('\n');
}

function suiteText(n: number, options: { indent?: string; edit?: (i: number, text: string) => string } = {}): string {
  const lines = [header()];
  for (let i = 0; i < n; i++) {
    const c = caseLines(i, options.indent ?? '  ');
    lines.push(options.edit ? options.edit(i, c) : c);
  }
  return `${lines.join('\n')}\n`;
}

/** Compiled scorers carry functions: compare what they are, not their closures. */
function plain(v: unknown): unknown {
  return v === undefined ? undefined : JSON.parse(JSON.stringify(v));
}

describe('parseSuiteYaml reads a large suite in slices of cases, with the same answers (issue 15, S4)', () => {
  it.each(readdirSync(EXAMPLES).filter((f) => /\.suite\.ya?ml$/.test(f)))('examples/%s: read in slices, the same suite as the whole document', (name) => {
    const text = readFileSync(join(EXAMPLES, name), 'utf8');
    const whole = parseWhole(text, name);
    expect(whole.ok).toBe(true);
    const batched = parseCasesInBatches(text, name);
    expect(plain(batched)).toEqual(plain(whole));
  });

  it('1 234 valid cases over 25 slices, items at column 1 or indented: the same suite as the whole document', () => {
    for (const [indent, n] of [['', 1234], ['    ', 501]] as const) {
      const text = suiteText(n, { indent });
      const whole = parseWhole(text, 'big.suite.yaml');
      expect(whole.ok).toBe(true);
      const batched = parseCasesInBatches(text, 'big.suite.yaml');
      expect(plain(batched)).toEqual(plain(whole));
      expect(plain(parseSuiteYaml(text, 'big.suite.yaml'))).toEqual(plain(whole));
    }
  });

  it('problems in cases of different slices: every one, naming the case, at the same line and column', () => {
    const text = suiteText(1234, {
      edit: (i, c) => {
        if (i === 7) return c.replace('question 7', 'question\\u0000 7'); // NUL (unstorable)
        if (i === 4) return c.replace('question 4', 'question \\ud800 4'); // a lone surrogate
        if (i === 701) return c.replace('{type: contains, value: token-701}', '{type: regex, pattern: "("}');
        if (i === 1100) return c.replace('id: c1100', 'id: c17');
        if (i === 1200) return c.replace('tags: [group-3, t0]', 'tags: [Bad Tag]');
        if (i === 1201) return `${c}\n    colour: red`;
        return c;
      },
    });
    const whole = parseWhole(text, 'bad.suite.yaml');
    expect(whole.ok).toBe(false);
    const batched = parseCasesInBatches(text, 'bad.suite.yaml');
    expect(plain(batched)).toEqual(plain(whole));
    if (batched?.ok !== false) throw new Error('expected problems');
    expect(batched.errors.map((e) => e.case_id ?? e.field)).toEqual(['cases[4].input', 'cases[7].input', 'c701', 'c17', 'c1200', 'c1201']);
    expect(batched.errors.every((e) => typeof e.line === 'number' && typeof e.column === 'number')).toBe(true);
  });

  it('problems of the header and of the list itself are positioned as the whole document positions them', () => {
    const text = suiteText(600).replace('pass_threshold: 0.8', 'pass_threshold: "high"').replace('default_scorer: {type: exact, trim: true}', 'default_scorer: {type: nope}');
    expect(plain(parseCasesInBatches(text, 'h.suite.yaml'))).toEqual(plain(parseWhole(text, 'h.suite.yaml')));
  });

  it('declines what a slice cannot read alone: anchors and aliases, directives, fields after the cases, YAML errors - the whole document answers', () => {
    const anchored = suiteText(10).replace('default_scorer: {type: exact, trim: true}', 'default_scorer: &d {type: exact, trim: true}').replace('  - id: c1\n', '  - id: c1\n    scorer: *d\n');
    const directive = `%YAML 1.2\n---\n${suiteText(10)}`;
    const after = `${suiteText(10)}golden_fixtures: true\n`;
    const twice = `${suiteText(10)}cases: []\n`;
    const broken = suiteText(900, { edit: (i, c) => (i === 800 ? c.replace('input: "question 800"', 'input: "question 800') : c) });
    const flow = `${header()} [{id: a, input: x, expected: y}]\n`;
    for (const text of [anchored, directive, after, twice, broken, flow]) {
      expect(parseCasesInBatches(text, 's.suite.yaml')).toBeUndefined();
      expect(plain(parseSuiteYaml(text, 's.suite.yaml'))).toEqual(plain(parseWhole(text, 's.suite.yaml')));
    }
    const syntax = parseSuiteYaml(broken, 's.suite.yaml');
    expect(syntax.ok).toBe(false);
  });

  it('with { scorers: false } (a push): the same suite or the same problems, and no compiled scorer', () => {
    const bad = suiteText(300, { edit: (i, c) => (i === 201 ? c.replace('{type: contains, value: token-201}', '{type: regex, pattern: "("}') : c) });
    const anchored = suiteText(10).replace('default_scorer: {type: exact, trim: true}', 'default_scorer: &d {type: exact, trim: true}').replace('  - id: c1\n', '  - id: c1\n    scorer: *d\n');
    for (const text of [suiteText(300), bad, anchored]) {
      const full = parseSuiteYaml(text, 'p.suite.yaml');
      const check = parseSuiteYaml(text, 'p.suite.yaml', { scorers: false });
      expect('scorers' in check).toBe(false);
      expect(check).toEqual(full.ok ? { ok: true, suite: full.suite } : full);
    }
  });
});
