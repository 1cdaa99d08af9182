import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { SUITE_HASH_PATTERN, suiteContentHash, suiteHashInput } from './suite-hash';
import { parseSuiteYaml } from './suite.parser';
import type { SuiteDefinition } from './suite.model';

function parse(text: string): SuiteDefinition {
  const r = parseSuiteYaml(text, 'x.suite.yaml');
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.suite;
}

const BLOCK = `
key: triage
description: Routes tickets
default_scorer:
  type: contains
  value: refund
  ignore_case: true
pass_threshold: 0.8
regression_threshold: 0.1
cases:
  - id: a
    input: Where is my refund?
    tags: [billing, routing]
  - id: b
    input:
      ticket: Refund please
      locale: en
    expected:
      total: 1250
      items: [1, 2]
    scorer:
      type: json_equal
`;

// The same content: flow style, other key order, comments, other quoting, 1250.0 for 1250, tags reordered,
// an anchor, and golden_fixtures spelled out as its default.
const REWRITTEN = `# reformatted
cases:
  - { input: "Where is my refund?", id: "a", tags: [routing, billing] }  # flow style
  - scorer: {type: json_equal}
    expected: {items: [1.0, 2e0], total: 1250.0}
    input: {locale: en, ticket: 'Refund please'}
    id: b
regression_threshold: 1e-1
pass_threshold: 0.80
golden_fixtures: false
default_scorer: &d {ignore_case: true, value: "refund", type: contains}
description: "Routes tickets"
key: 'triage'
`;

describe('suiteContentHash', () => {
  const base = parse(BLOCK);
  const hash = suiteContentHash(base);

  it('is 64 lowercase hex characters', () => {
    expect(hash).toMatch(SUITE_HASH_PATTERN);
  });

  it('hashes the scheme tag and the canonical JSON of the normalised suite', () => {
    expect(suiteHashInput(base)).toBe(`evals.suite.content.v1\n${PINNED_CANONICAL}`);
  });

  it('is pinned: stored hashes depend on the canonical form, so changing it is a migration', () => {
    // Computed outside this code: printf 'evals.suite.content.v1\n%s' "$PINNED_CANONICAL" | sha256sum
    expect(hash).toBe('9221549575d9be5d58c896020989baa192d513a5698d5bd7503c424c7c003392');
  });

  it('is fed case by case (issue 15) yet is exactly the SHA-256 of suiteHashInput, with and without a description', () => {
    const { description: _description, ...bare } = base;
    const many = { ...base, cases: Array.from({ length: 250 }, (_, i) => ({ ...base.cases[i % base.cases.length]!, id: `c${i}` })) };
    for (const suite of [base, bare, many]) {
      expect(suiteContentHash(suite)).toBe(createHash('sha256').update(suiteHashInput(suite), 'utf8').digest('hex'));
    }
  });

  it('does not depend on YAML formatting, key order, comments, quoting, number spelling or tag order', () => {
    expect(suiteContentHash(parse(REWRITTEN))).toBe(hash);
  });

  it('is the same for JSON and YAML of the same content', () => {
    expect(suiteContentHash(parse(JSON.stringify(base)))).toBe(hash);
  });

  const changes: Array<[string, (s: SuiteDefinition) => SuiteDefinition]> = [
    ['key', (s) => ({ ...s, key: 'triage-2' })],
    ['description', (s) => ({ ...s, description: 'Routes tickets.' })],
    ['description removed', (s) => { const { description: _d, ...rest } = s; return rest; }],
    ['default scorer option', (s) => ({ ...s, default_scorer: { ...s.default_scorer, ignore_case: false } })],
    ['default scorer option spelled out', (s) => ({ ...s, default_scorer: { type: 'json_equal' } })],
    ['pass threshold', (s) => ({ ...s, pass_threshold: 0.81 })],
    ['regression threshold', (s) => ({ ...s, regression_threshold: 0.2 })],
    ['golden fixtures', (s) => ({ ...s, golden_fixtures: true })],
    ['case order', (s) => ({ ...s, cases: [...s.cases].reverse() })],
    ['a case removed', (s) => ({ ...s, cases: s.cases.slice(0, 1) })],
    ['a case id', (s) => ({ ...s, cases: s.cases.map((c, i) => (i === 0 ? { ...c, id: 'a2' } : c)) })],
    ['an input', (s) => ({ ...s, cases: s.cases.map((c, i) => (i === 0 ? { ...c, input: 'Where is my refund? ' } : c)) })],
    ['expected added (null)', (s) => ({ ...s, cases: s.cases.map((c, i) => (i === 0 ? { ...c, expected: null } : c)) })],
    ['an expected number', (s) => ({ ...s, cases: s.cases.map((c, i) => (i === 1 ? { ...c, expected: { total: 1251, items: [1, 2] } } : c)) })],
    ['array order in expected', (s) => ({ ...s, cases: s.cases.map((c, i) => (i === 1 ? { ...c, expected: { total: 1250, items: [2, 1] } } : c)) })],
    ['a case scorer', (s) => ({ ...s, cases: s.cases.map((c, i) => (i === 1 ? { ...c, scorer: { type: 'json_valid' } } : c)) })],
    ['a tag', (s) => ({ ...s, cases: s.cases.map((c, i) => (i === 0 ? { ...c, tags: ['billing'] } : c)) })],
  ];

  it.each(changes)('changes when the %s changes', (_name, change) => {
    expect(suiteContentHash(change(base))).not.toBe(hash);
  });

  it('gives different content different hashes (property over inputs)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        const withInput = (input: unknown): SuiteDefinition => ({
          ...base,
          cases: [{ id: 'a', input: { v: input } as never, tags: [] }],
        });
        const same = JSON.stringify(a) === JSON.stringify(b);
        if (!same) expect(suiteContentHash(withInput(a))).not.toBe(suiteContentHash(withInput(b)));
      }),
    );
  });
});

const PINNED_CANONICAL =
  '{"cases":[{"id":"a","input":"Where is my refund?","tags":["billing","routing"]},' +
  '{"expected":{"items":[1,2],"total":1250},"id":"b","input":{"locale":"en","ticket":"Refund please"},' +
  '"scorer":{"type":"json_equal"},"tags":[]}],' +
  '"default_scorer":{"ignore_case":true,"type":"contains","value":"refund"},"description":"Routes tickets",' +
  '"golden_fixtures":false,"key":"triage","pass_threshold":0.8,"regression_threshold":0.1}';
