import fc from 'fast-check';
import { SUITE_ERROR_CODES as E, type SuiteError } from './suite-error';
import { MAX_SUITE_CASES, MAX_VALUE_DEPTH } from './suite.limits';
import { validateSuite } from './suite.validator';
import { effectiveScorerSpec } from './suite.model';

const FILE = 'suites/test.suite.yaml';

function suite(patch: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    key: 'support-triage',
    default_scorer: { type: 'contains', value: 'refund' },
    pass_threshold: 0.8,
    regression_threshold: 0.1,
    cases: [
      { id: 'c1', input: 'Where is my refund?' },
      { id: 'c2', input: { ticket: 'Refund please', locale: 'en' } },
    ],
    ...patch,
  };
}

function errorsOf(raw: unknown): SuiteError[] {
  const r = validateSuite(raw, FILE);
  if (r.ok) throw new Error('expected the suite to be refused');
  return [...r.errors];
}

function brief(errors: readonly SuiteError[]): string[] {
  return errors.map((e) => `${e.code} ${e.field}${e.case_id !== undefined ? ` <${e.case_id}>` : ''}`);
}

describe('validateSuite: a valid suite', () => {
  it('returns the normalised suite and one compiled scorer per case', () => {
    const r = validateSuite(suite(), FILE);
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.suite).toEqual({
      key: 'support-triage',
      default_scorer: { type: 'contains', value: 'refund' },
      pass_threshold: 0.8,
      regression_threshold: 0.1,
      golden_fixtures: false,
      cases: [
        { id: 'c1', input: 'Where is my refund?', tags: [] },
        { id: 'c2', input: { ticket: 'Refund please', locale: 'en' }, tags: [] },
      ],
    });
    expect(r.scorers.map((s) => s.name)).toEqual(['contains', 'contains']);
  });

  it('keeps description, golden_fixtures, expected (even null), per-case scorers and sorted tags', () => {
    const r = validateSuite(
      suite({
        description: 'Refund handling',
        golden_fixtures: true,
        cases: [
          { id: 'a', input: 'x', expected: null, scorer: { type: 'json_equal' }, tags: ['z', 'a'] },
          { id: 'b', input: 'y', scorer: { type: 'regex', pattern: '^ok$', flags: 'i' } },
          { id: 'c', input: 'z', scorer: { type: 'llm_judge', rubric: 'Polite and correct.' } },
        ],
      }),
      FILE,
    );
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.suite.description).toBe('Refund handling');
    expect(r.suite.golden_fixtures).toBe(true);
    expect(r.suite.cases[0]).toEqual({ id: 'a', input: 'x', expected: null, scorer: { type: 'json_equal' }, tags: ['a', 'z'] });
    expect(Object.prototype.hasOwnProperty.call(r.suite.cases[1], 'expected')).toBe(false);
    expect(r.scorers.map((s) => `${s.kind}:${s.name}`)).toEqual(['deterministic:json_equal', 'deterministic:regex', 'judge:llm_judge']);
  });

  it('gives each case its effective scorer spec', () => {
    const r = validateSuite(suite({ cases: [{ id: 'a', input: 'x' }, { id: 'b', input: 'y', scorer: { type: 'json_valid' } }] }), FILE);
    if (!r.ok) throw new Error('expected a valid suite');
    expect(effectiveScorerSpec(r.suite, 0)).toEqual({ type: 'contains', value: 'refund' });
    expect(effectiveScorerSpec(r.suite, 1)).toEqual({ type: 'json_valid' });
    expect(() => effectiveScorerSpec(r.suite, 2)).toThrow(expect.objectContaining({ code: 'CASE_INDEX_INVALID' }));
  });

  it('treats null optional fields as absent', () => {
    const r = validateSuite(suite({ description: null, golden_fixtures: null, cases: [{ id: 'a', input: 'x', scorer: null, tags: null }] }), FILE);
    expect(r.ok && r.suite.cases[0]).toEqual({ id: 'a', input: 'x', tags: [] });
    expect(r.ok && r.suite.golden_fixtures).toBe(false);
  });

  it('accepts thresholds 0 and 1 and normalises -0', () => {
    const r = validateSuite(suite({ pass_threshold: 1, regression_threshold: -0 }), FILE);
    expect(r.ok && [r.suite.pass_threshold, Object.is(r.suite.regression_threshold, 0)]).toEqual([1, true]);
  });
});

describe('validateSuite: refusals', () => {
  it.each([[null], [[]], ['key: x'], [42]])('refuses a document that is not a mapping: %j', (raw) => {
    expect(brief(errorsOf(raw))).toEqual([`${E.SUITE_NOT_A_MAPPING} `]);
  });

  it('reports every missing required field at once', () => {
    expect(brief(errorsOf({})).sort()).toEqual(
      [
        `${E.FIELD_REQUIRED} key`,
        `${E.FIELD_REQUIRED} default_scorer`,
        `${E.FIELD_REQUIRED} pass_threshold`,
        `${E.FIELD_REQUIRED} regression_threshold`,
        `${E.FIELD_REQUIRED} cases`,
      ].sort(),
    );
  });

  it.each([
    ['key', 'Support Triage'],
    ['key', ''],
    ['key', 12],
    ['pass_threshold', 1.5],
    ['pass_threshold', -0.1],
    ['pass_threshold', '0.8'],
    ['regression_threshold', true],
    ['golden_fixtures', 'yes'],
    ['description', ['a']],
    ['description', 'x'.repeat(4001)],
    ['cases', 'c1'],
  ])('refuses %s = %j', (field, value) => {
    const errors = errorsOf(suite({ [field]: value }));
    expect(brief(errors)).toEqual([`${E.FIELD_INVALID} ${field}`]);
    expect(errors[0]?.file).toBe(FILE);
  });

  it('tells what to do with a quoted number', () => {
    expect(errorsOf(suite({ pass_threshold: '0.8' }))[0]?.message).toContain('unquoted');
  });

  it('refuses unknown top-level fields, with a hint for likely ones', () => {
    const errors = errorsOf(suite({ version: 3, owner: 'team-a' }));
    expect(brief(errors).sort()).toEqual([`${E.FIELD_UNKNOWN} owner`, `${E.FIELD_UNKNOWN} version`]);
    expect(errors.find((e) => e.field === 'version')?.message).toContain('assigned by the service');
    const odd = errorsOf(suite({ constructor: 1, toString: 2 }));
    expect(odd.map((e) => e.message)).toEqual([
      expect.stringMatching(/^unknown field "constructor"; allowed: /),
      expect.stringMatching(/^unknown field "toString"; allowed: /),
    ]);
  });

  it('refuses an empty case list and a too long one', () => {
    expect(brief(errorsOf(suite({ cases: [] })))).toEqual([`${E.CASES_EMPTY} cases`]);
    const many = Array.from({ length: MAX_SUITE_CASES + 1 }, (_, i) => ({ id: `c${i}`, input: 'x' }));
    expect(brief(errorsOf(suite({ cases: many })))).toEqual([`${E.CASES_TOO_MANY} cases`]);
  });

  it('refuses duplicate case ids, naming the case and the first use', () => {
    const errors = errorsOf(
      suite({
        cases: [
          { id: 'a', input: 'x' },
          { id: 'b', input: 'x' },
          { id: 'a', input: 'y' },
          { id: 'b', input: 'z' },
        ],
      }),
    );
    expect(brief(errors)).toEqual([`${E.CASE_ID_DUPLICATE} cases[2].id <a>`, `${E.CASE_ID_DUPLICATE} cases[3].id <b>`]);
    expect(errors[0]?.case_index).toBe(2);
    expect(errors[0]?.message).toContain('cases[0]');
  });

  it('checks every case and names each by index, and by id when it has a valid one', () => {
    const errors = errorsOf(
      suite({
        cases: [
          'not a case',
          { input: 'x' },
          { id: 'bad id', input: 'x' },
          { id: 'ok-1' },
          { id: 'ok-2', input: '' },
          { id: 'ok-3', input: ['a'] },
          { id: 'ok-4', input: 'x', expect: 'typo' },
          { id: 'ok-5', input: 'x', tags: ['Bad Tag', 'fine', 'fine'] },
          { id: 'ok-6', input: 'x', tags: 'one' },
        ],
      }),
    );
    expect(brief(errors)).toEqual([
      `${E.FIELD_INVALID} cases[0]`,
      `${E.FIELD_REQUIRED} cases[1].id`,
      `${E.FIELD_INVALID} cases[2].id`,
      `${E.FIELD_REQUIRED} cases[3].input <ok-1>`,
      `${E.FIELD_INVALID} cases[4].input <ok-2>`,
      `${E.FIELD_INVALID} cases[5].input <ok-3>`,
      `${E.FIELD_UNKNOWN} cases[6].expect <ok-4>`,
      `${E.FIELD_INVALID} cases[7].tags[0] <ok-5>`,
      `${E.FIELD_INVALID} cases[7].tags[2] <ok-5>`,
      `${E.FIELD_INVALID} cases[8].tags <ok-6>`,
    ]);
    expect(errors.map((e) => e.case_index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 7, 8]);
    expect(errors[6]?.message).toContain('did you mean `expected`');
  });

  it('refuses values JSON cannot carry, naming their path', () => {
    const errors = errorsOf(
      suite({
        cases: [
          { id: 'a', input: { n: Number.NaN } },
          { id: 'b', input: 'x', expected: Number.POSITIVE_INFINITY },
          { id: 'c', input: 'x', expected: { when: new Date(0) } },
          { id: 'd', input: 'x', expected: Buffer.from('hi') },
          { id: 'e', input: 'x', expected: 12345678901234567890n },
          { id: 'f', input: 'x', expected: [() => 1] },
        ],
      }),
    );
    expect(brief(errors)).toEqual([
      `${E.VALUE_NOT_JSON} cases[0].input.n`,
      `${E.VALUE_NOT_JSON} cases[1].expected`,
      `${E.VALUE_NOT_JSON} cases[2].expected.when`,
      `${E.VALUE_NOT_JSON} cases[3].expected`,
      `${E.VALUE_IMPRECISE} cases[4].expected`,
      `${E.VALUE_NOT_JSON} cases[5].expected[0]`,
    ]);
  });

  it('turns safe YAML big integers into numbers', () => {
    const r = validateSuite(suite({ pass_threshold: 1n, cases: [{ id: 'a', input: { n: 42n } }] }), FILE);
    expect(r.ok && [r.suite.pass_threshold, r.suite.cases[0]?.input]).toEqual([1, { n: 42 }]);
  });

  it('refuses nesting deeper than MAX_VALUE_DEPTH and the __proto__ key', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < MAX_VALUE_DEPTH + 5; i++) deep = { d: deep };
    expect(brief(errorsOf(suite({ cases: [{ id: 'a', input: deep }] })))).toEqual([
      `${E.VALUE_NOT_JSON} cases[0].input${'.d'.repeat(MAX_VALUE_DEPTH - 2)}`,
    ]);
    const proto = JSON.parse('{"__proto__": {"x": 1}, "ok": 1}') as unknown;
    expect(brief(errorsOf(suite({ cases: [{ id: 'a', input: proto }] })))).toEqual([`${E.FIELD_INVALID} cases[0].input`]);
  });

  it('quotes keys that are not identifiers in paths', () => {
    const errors = errorsOf(suite({ cases: [{ id: 'a', input: { 'first name': Number.NaN } }] }));
    expect(errors[0]?.field).toBe('cases[0].input["first name"]');
  });
});

describe('validateSuite: scorer config through @evals/scorers (S2, S4)', () => {
  it('refuses a regex the linear-time engine cannot run, naming the case (S2)', () => {
    const errors = errorsOf(
      suite({ cases: [{ id: 'c1', input: 'x' }, { id: 'needs-lookahead', input: 'x', scorer: { type: 'regex', pattern: 'a(?=b)' } }] }),
    );
    expect(brief(errors)).toEqual(['REGEX_UNSUPPORTED cases[1].scorer.pattern <needs-lookahead>']);
    expect(errors[0]?.message).toContain('"needs-lookahead"');
    expect(errors[0]?.case_index).toBe(1);
  });

  it('reports a case scorer problem at cases[i].scorer.<field>', () => {
    const errors = errorsOf(
      suite({
        cases: [
          { id: 'a', input: 'x', scorer: { type: 'contians', value: 'x' } },
          { id: 'b', input: 'x', scorer: { type: 'numeric_range', min: 5, max: 1 } },
          { id: 'c', input: 'x', scorer: { type: 'exact', trim: 'yes' }, expected: 'ok' },
          { id: 'd', input: 'x', scorer: 'contains' },
        ],
      }),
    );
    expect(brief(errors)).toEqual([
      'SCORER_UNKNOWN cases[0].scorer.type <a>',
      expect.stringMatching(/^SCORER_OPTION_INVALID cases\[1\]\.scorer\.(min|max) <b>$/),
      'SCORER_OPTION_INVALID cases[2].scorer.trim <c>',
      'SCORER_SPEC_INVALID cases[3].scorer <d>',
    ]);
  });

  it('reports `expected` written as an option of a scorer that takes none at the scorer, not at the case\'s expected', () => {
    const errors = errorsOf(
      suite({
        cases: [
          { id: 'a', input: 'x', expected: 'ok', scorer: { type: 'exact', expected: 'other' } },
          { id: 'b', input: 'x', scorer: { type: 'exact' } },
          { id: 'c', input: 'x', scorer: { type: 'contains', value: 'x', bogus: 1 } },
        ],
      }),
    );
    expect(brief(errors).sort()).toEqual([
      'SCORER_EXPECTED_MISSING cases[1].expected <b>',
      'SCORER_OPTION_UNKNOWN cases[0].scorer.expected <a>',
      'SCORER_OPTION_UNKNOWN cases[2].scorer.bogus <c>',
    ]);
  });

  it('reports a broken default scorer once, not once per case', () => {
    const cases = Array.from({ length: 50 }, (_, i) => ({ id: `c${i}`, input: 'x' }));
    const errors = errorsOf(suite({ default_scorer: { type: 'contains', valeu: 'x' }, cases }));
    expect(brief(errors).sort()).toEqual(['SCORER_OPTION_MISSING default_scorer.value', 'SCORER_OPTION_UNKNOWN default_scorer.valeu']);
    expect(errors.every((e) => e.case_id === undefined)).toBe(true);
    expect(errors[0]?.message).toContain('all 50 cases');
  });

  it('lets the default scorer take its value from each case expected (contains falls back to expected)', () => {
    const r = validateSuite(
      suite({ default_scorer: { type: 'contains' }, cases: [{ id: 'a', input: 'x', expected: 'refund' }, { id: 'b', input: 'y', expected: ['a', 'b'] }] }),
      FILE,
    );
    expect(r.ok).toBe(true);
  });

  it('names the cases for which the default scorer fails when others are fine', () => {
    const errors = errorsOf(
      suite({ default_scorer: { type: 'contains' }, cases: [{ id: 'a', input: 'x', expected: 'refund' }, { id: 'b', input: 'y' }] }),
    );
    expect(brief(errors)).toEqual(['SCORER_OPTION_MISSING default_scorer.value <b>']);
    expect(errors[0]?.case_index).toBe(1);
  });

  it('validates the default scorer with each case expected, naming the case that lacks it', () => {
    const errors = errorsOf(
      suite({
        default_scorer: { type: 'exact', trim: true },
        cases: [
          { id: 'has', input: 'x', expected: 'billing' },
          { id: 'lacks', input: 'x' },
          { id: 'number', input: 'x', expected: 1.5 },
        ],
      }),
    );
    expect(brief(errors)).toEqual(['SCORER_EXPECTED_MISSING cases[1].expected <lacks>', 'SCORER_EXPECTED_INVALID cases[2].expected <number>']);
    expect(errors[0]?.message).toMatch(/^case "lacks" \(default scorer\): /);
  });

  it('validates expected against a case scorer too (json_equal refuses a string that is not JSON)', () => {
    const errors = errorsOf(suite({ cases: [{ id: 'j', input: 'x', expected: '{not json', scorer: { type: 'json_equal' } }] }));
    expect(brief(errors)).toEqual(['SCORER_EXPECTED_INVALID cases[0].expected <j>']);
  });

  it('validates a default scorer that no case uses', () => {
    const errors = errorsOf(
      suite({ default_scorer: { type: 'nope' }, cases: [{ id: 'a', input: 'x', scorer: { type: 'json_valid' } }] }),
    );
    expect(brief(errors)).toEqual(['SCORER_UNKNOWN default_scorer.type']);
  });

  it('collects every kind of problem in one pass', () => {
    const errors = errorsOf({
      key: 'Bad Key',
      default_scorer: { type: 'regex', pattern: '(a)\\1' },
      pass_threshold: 2,
      cases: [
        { id: 'a', input: 'x', scorer: { type: 'nope' } },
        { id: 'a', input: '' },
      ],
      extra: 1,
    });
    expect(brief(errors).sort()).toEqual(
      [
        `${E.FIELD_UNKNOWN} extra`,
        `${E.FIELD_INVALID} key`,
        `${E.FIELD_INVALID} pass_threshold`,
        `${E.FIELD_REQUIRED} regression_threshold`,
        `${E.CASE_ID_DUPLICATE} cases[1].id <a>`,
        `${E.FIELD_INVALID} cases[1].input <a>`,
        'REGEX_UNSUPPORTED default_scorer.pattern',
        'SCORER_UNKNOWN cases[0].scorer.type <a>',
      ].sort(),
    );
  });
});

describe('validateSuite never throws', () => {
  it('on arbitrary values', () => {
    fc.assert(
      fc.property(fc.anything({ withBigInt: true, withDate: true, withMap: true, withTypedArray: true, withNullPrototype: true }), (raw) => {
        const r = validateSuite(raw, FILE);
        expect(typeof r.ok).toBe('boolean');
      }),
      { numRuns: 1000 },
    );
  });

  it('on suites whose fields are arbitrary values', () => {
    const field = fc.constantFrom('key', 'default_scorer', 'pass_threshold', 'regression_threshold', 'golden_fixtures', 'cases', 'description');
    fc.assert(
      fc.property(field, fc.anything({ withBigInt: true }), fc.anything(), (name, value, caseValue) => {
        expect(typeof validateSuite(suite({ [name]: value }), FILE).ok).toBe('boolean');
        expect(typeof validateSuite(suite({ cases: [caseValue, { id: 'x', input: caseValue, expected: caseValue, scorer: caseValue, tags: caseValue }] }), FILE).ok).toBe('boolean');
      }),
      { numRuns: 1000 },
    );
  });
});

describe('validateSuite holds a suite once (issue 15)', () => {
  it('shares the values of a valid input instead of copying them', () => {
    const raw = suite();
    const r = validateSuite(raw, FILE);
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    const cases = raw['cases'] as Array<Record<string, unknown>>;
    expect(r.suite.cases[1]!.input).toBe(cases[1]!['input']);
    expect(r.suite.default_scorer).toBe(raw['default_scorer']);
  });

  it('converts big integers, -0 and null-prototype mappings in a copy, leaving the input as it was', () => {
    const nullProto = Object.assign(Object.create(null) as Record<string, unknown>, { a: 'x' });
    const expected = { n: 5n, z: -0, list: ['k', 7n], same: { s: 'y' } };
    const raw = suite({ cases: [{ id: 'c1', input: nullProto, expected, scorer: { type: 'json_equal' } }] });
    const r = validateSuite(raw, FILE);
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    const got = r.suite.cases[0]!;
    expect(got.expected).toEqual({ n: 5, z: 0, list: ['k', 7], same: { s: 'y' } });
    expect(Object.is((got.expected as { z: number }).z, 0)).toBe(true);
    expect((got.expected as { same: unknown }).same).toBe(expected.same);
    expect(Object.getPrototypeOf(got.input)).toBe(Object.prototype);
    expect(got.input).toEqual({ a: 'x' });
    expect(expected).toEqual({ n: 5n, z: -0, list: ['k', 7n], same: { s: 'y' } });
    expect(Object.getPrototypeOf(nullProto)).toBeNull();
  });

  it('with { scorers: false } keeps no compiled scorer and answers as without it', () => {
    const field = fc.constantFrom('key', 'default_scorer', 'pass_threshold', 'cases', 'description');
    fc.assert(
      fc.property(field, fc.anything({ withBigInt: true, withNullPrototype: true }), fc.anything({ withBigInt: true }), (name, value, caseValue) => {
        for (const raw of [suite(), suite({ [name]: value }), suite({ cases: [{ id: 'x', input: caseValue, expected: caseValue, scorer: caseValue }, { id: 'y', input: 'q', expected: caseValue }] })]) {
          const full = validateSuite(raw, FILE);
          const check = validateSuite(raw, FILE, { scorers: false });
          expect('scorers' in check).toBe(false);
          if (full.ok) expect(check).toEqual({ ok: true, suite: full.suite });
          else expect(check).toEqual(full);
        }
      }),
      { numRuns: 300 },
    );
  });
});
