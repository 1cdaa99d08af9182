import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { parse } from 'yaml';
import { suiteContentHash } from './suite-hash';
import { MAX_SUITE_CASES, MAX_VALUE_DEPTH } from './suite.limits';
import type { SuiteCase } from './suite.model';
import { SuiteStreamValidator } from './suite.stream-validator';
import { validateSuite } from './suite.validator';

const FILE = 'suites/stream.suite.yaml';
const ROOT = join(__dirname, '..', '..', '..', '..');

/** The suite through the streaming validator: `first` cases given to begin, the rest in batches of `batch`. */
function streamed(raw: unknown, first: number, batch: number) {
  const v = new SuiteStreamValidator(FILE);
  const all = isListCases(raw) ? (raw as { cases: unknown[] }).cases : undefined;
  const cases: Array<SuiteCase | undefined> = [];
  const begun = v.begin(all === undefined ? raw : { ...(raw as object), cases: all.slice(0, first) });
  cases.push(...begun.cases);
  if (all !== undefined) for (let i = first; i < all.length; i += batch) cases.push(...v.add(all.slice(i, i + batch)).cases);
  return { result: v.finish(), cases };
}

function isListCases(raw: unknown): boolean {
  return typeof raw === 'object' && raw !== null && !Array.isArray(raw) && Object.getPrototypeOf(raw) === Object.prototype && Array.isArray((raw as { cases?: unknown }).cases);
}

/** Asserts the streamed answer is validateSuite's: the same problems in the same order, or the same suite and hash. */
function expectSameAsWhole(raw: unknown, first = 0, batch = 3): void {
  const whole = validateSuite(raw, FILE, { scorers: false });
  const { result, cases } = streamed(raw, first, batch);
  if (!whole.ok) {
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors).toEqual(whole.errors);
    return;
  }
  if (!result.ok) throw new Error(`streamed refused a suite validateSuite accepts: ${JSON.stringify(result.errors)}`);
  const { cases: wholeCases, ...head } = whole.suite;
  expect(result.head).toEqual(head);
  expect(result.case_count).toBe(wholeCases.length);
  expect(cases).toEqual(wholeCases);
  expect(result.content_hash).toBe(suiteContentHash(whole.suite));
}

const YAML_OPTIONS = { version: '1.2', schema: 'core', intAsBigInt: true, uniqueKeys: false } as const;

/** A valid three-case suite, `patch` over it. */
function base(patch: Record<string, unknown> = {}): Record<string, unknown> {
  const cases = [
    { id: 'c1', input: 'Where is my refund?' },
    { id: 'c2', input: { ticket: 'Refund please', locale: 'en' }, tags: ['b', 'a'] },
    { id: 'c3', input: 'x', expected: null, scorer: { type: 'exact' } },
  ];
  return { key: 'streamed', default_scorer: { type: 'contains', value: 'refund' }, pass_threshold: 0.7, regression_threshold: 0.05, cases, ...patch };
}

describe('SuiteStreamValidator answers what validateSuite answers', () => {
  const examples = readdirSync(join(ROOT, 'examples')).filter((f) => f.endsWith('.suite.yaml'));
  it.each(examples)('examples/%s, in batches of 1, 2 and 7', (file) => {
    const raw: unknown = parse(readFileSync(join(ROOT, 'examples', file), 'utf8'), YAML_OPTIONS);
    expect(validateSuite(raw, FILE).ok).toBe(true);
    for (const [first, batch] of [[0, 1], [1, 2], [3, 7]] as const) expectSameAsWhole(raw, first, batch);
  });

  it('the YAML blocks of docs/suites.md and docs/cli.md', () => {
    let n = 0;
    for (const doc of ['suites.md', 'cli.md']) {
      for (const m of readFileSync(join(ROOT, 'docs', doc), 'utf8').matchAll(/```yaml\n([\s\S]*?)\n```/g)) {
        let raw: unknown;
        try {
          raw = parse(m[1]!, YAML_OPTIONS);
        } catch {
          continue;
        }
        expectSameAsWhole(raw, 0, 2);
        n++;
      }
    }
    expect(n).toBeGreaterThan(0);
  });

  const deep = (n: number): unknown => (n === 0 ? 'leaf' : { a: deep(n - 1) });
  const invalid: Array<[string, unknown]> = [
    ['not a mapping (null)', null],
    ['not a mapping (list)', [base()]],
    ['not a mapping (string)', 'key: x'],
    ['a timestamp as the suite', new Date(0)],
    ['nothing at all', {}],
    ['cases missing', base({ cases: undefined })],
    ['cases not a list', base({ cases: { id: 'c1' } })],
    ['cases empty', base({ cases: [] })],
    ['cases a NUL string', base({ cases: 'a\u0000b' })],
    ['key first after cases', { cases: [{ id: 'c1', input: 'a\u0000' }], key: 'Bad Key', pass_threshold: '0.8', regression_threshold: 2, default_scorer: { type: 'contains', value: 'x' } }],
    ['unknown keys with hints', base({ name: 'x', version: 2, scorer: {}, extra: 1 })],
    ['bad thresholds and description', base({ pass_threshold: '0.8', regression_threshold: -1, description: 3, golden_fixtures: 'yes' })],
    ['duplicate ids, twice', base({ cases: [{ id: 'a', input: 'x' }, { id: 'b', input: 'y' }, { id: 'a', input: 'z' }, { id: 'a', input: 'w' }] })],
    ['bad ids and inputs', base({ cases: [{ id: 'bad id', input: '' }, { input: 'x' }, { id: 3, input: [] }, 'not a case', null, { id: 'ok', input: {} }] })],
    ['case unknown keys', base({ cases: [{ id: 'a', input: 'x', expect: 'y', output: 'z' }] })],
    ['tags', base({ cases: [{ id: 'a', input: 'x', tags: 'a' }, { id: 'b', input: 'x', tags: ['A', 'b', 'b', 3] }, { id: 'c', input: 'x', tags: Array.from({ length: 40 }, (_, i) => `t${i}`) }] })],
    ['values JSON cannot carry', base({ cases: [{ id: 'a', input: { n: Infinity, big: 2n ** 60n, d: new Date(0), u: new Uint8Array(1) } }, { id: 'b', input: 'lone \uD800' }], description: 'x\u0000' })],
    ['nested too deep, and __proto__', base({ cases: [{ id: 'a', input: deep(MAX_VALUE_DEPTH + 2) }, { id: 'b', input: JSON.parse('{"__proto__": 1, "k": 2}') }] })],
    ['a null-prototype suite', Object.assign(Object.create(null), base({ cases: [{ id: 'a', input: 'x' }, { id: 'a', input: 'y' }] }))],
    ['default scorer broken for all cases', base({ default_scorer: { type: 'regex', pattern: '(' } })],
    ['default scorer without a type', base({ default_scorer: { value: 'x' } })],
    ['default scorer missing', base({ default_scorer: undefined })],
    ['default scorer from expected, some cases lacking it', base({ default_scorer: { type: 'contains' }, cases: [{ id: 'a', input: 'x', expected: 'r' }, { id: 'b', input: 'y' }, { id: 'c', input: 'z' }, { id: 'd', input: 'w', expected: 'q' }] })],
    ['default scorer used by no case', base({ default_scorer: { type: 'regex', pattern: '(' }, cases: [{ id: 'a', input: 'x', scorer: { type: 'exact' }, expected: 'x' }] })],
    ['case scorers broken', base({ cases: [{ id: 'a', input: 'x', scorer: { type: 'nope' } }, { id: 'b', input: 'x', scorer: { type: 'exact', expected: 'y' } }, { id: 'c', input: 'x', scorer: { type: 'json_equal' }, expected: 'not json' }, { id: 'd', input: 'x', scorer: 'exact' }] })],
    ['too many cases', base({ default_scorer: { type: 'regex', pattern: '(' }, cases: Array.from({ length: MAX_SUITE_CASES + 1 }, (_, i) => ({ id: i % 7 === 0 ? 'dup' : `c${i}`, input: i === 5 ? 'a\u0000' : 'x' })) })],
    ['exactly the limit with a duplicate at the end', base({ cases: Array.from({ length: MAX_SUITE_CASES }, (_, i) => ({ id: i === MAX_SUITE_CASES - 1 ? 'c0' : `c${i}`, input: 'x' })) })],
  ];
  it.each(invalid)('%s: the same problems in the same order', (_, raw) => {
    const whole = validateSuite(raw, FILE);
    expect(whole.ok).toBe(false);
    const batches = Array.isArray((raw as { cases?: unknown } | null)?.cases) && (raw as { cases: unknown[] }).cases.length > 1000 ? [[0, 5000]] : [[0, 1], [2, 2], [0, 1000]];
    for (const [first, batch] of batches) expectSameAsWhole(raw, first, batch);
  });

  it('keeps what validateSuite keeps for valid suites: the cases as normalised, the hash', () => {
    expectSameAsWhole(base(), 0, 1);
    expectSameAsWhole(base({ description: 'd', golden_fixtures: true }), 2, 1);
  });

  it('reports a duplicate across batches at the later case, naming the first', () => {
    const v = new SuiteStreamValidator(FILE);
    v.begin(base({ cases: [{ id: 'a', input: 'x' }] }));
    expect(v.valid()).toBe(true);
    v.add([{ id: 'b', input: 'y' }]);
    v.add([{ id: 'a', input: 'z' }]);
    expect(v.valid()).toBe(false);
    const r = v.finish();
    expect(r.ok ? [] : r.errors.map((e) => [e.code, e.field, e.case_index])).toEqual([['CASE_ID_DUPLICATE', 'cases[2].id', 2]]);
  });

  it('random suites, in random batches', () => {
    const scalar = fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant('a\u0000'));
    const value = fc.oneof(scalar, fc.dictionary(fc.constantFrom('a', 'b', 'type', 'value', 'pattern', '__proto__'), scalar, { maxKeys: 3 }), fc.array(scalar, { maxLength: 3 }));
    const scorer = fc.oneof(
      fc.record({ type: fc.constantFrom('contains', 'exact', 'regex', 'json_valid', 'json_equal', 'nope'), value: fc.option(fc.string({ maxLength: 4 }), { nil: undefined }), pattern: fc.option(fc.constantFrom('a+', '(', 'x'), { nil: undefined }) }, { requiredKeys: ['type'] }),
      value,
    );
    const kase = fc.oneof(
      fc.record(
        {
          id: fc.oneof(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'), fc.string({ maxLength: 4 }), fc.integer()),
          input: fc.oneof(fc.string({ maxLength: 5 }), value),
          expected: value,
          scorer,
          tags: fc.oneof(fc.array(fc.constantFrom('x', 'y', 'Z', ''), { maxLength: 3 }), value),
          extra: scalar,
        },
        { requiredKeys: [] },
      ),
      value,
    );
    const suiteArb = fc.record(
      {
        key: fc.oneof(fc.constantFrom('s', 'my-suite', 'Bad'), scalar),
        description: fc.oneof(fc.string({ maxLength: 5 }), scalar),
        default_scorer: scorer,
        pass_threshold: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), scalar),
        regression_threshold: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), scalar),
        golden_fixtures: fc.oneof(fc.boolean(), scalar),
        cases: fc.oneof({ weight: 5, arbitrary: fc.array(kase, { maxLength: 12 }) }, { weight: 1, arbitrary: value }),
        extra: scalar,
      },
      { requiredKeys: [] },
    );
    // Mostly valid suites, so that valid ones (cases and hash compared) and near misses are common too.
    const goodCase = fc.record(
      {
        id: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'),
        input: fc.oneof(fc.string({ minLength: 1, maxLength: 5 }), fc.dictionary(fc.constantFrom('q', 'ctx'), fc.string(), { minKeys: 1, maxKeys: 2 })),
        expected: fc.oneof(fc.string({ maxLength: 4 }), fc.constant(null), fc.integer()),
        scorer: fc.constantFrom({ type: 'exact' }, { type: 'contains', value: 'r' }, { type: 'regex', pattern: 'a+' }, { type: 'json_valid' }),
        tags: fc.uniqueArray(fc.constantFrom('x', 'y', 'z'), { maxLength: 3 }),
      },
      { requiredKeys: ['id', 'input'] },
    );
    const goodSuite = fc.record({
      key: fc.constant('s'),
      default_scorer: fc.constantFrom({ type: 'contains', value: 'r' }, { type: 'contains' }, { type: 'exact' }),
      pass_threshold: fc.double({ min: 0, max: 1, noNaN: true }),
      regression_threshold: fc.double({ min: 0, max: 1, noNaN: true }),
      cases: fc.uniqueArray(goodCase, { selector: (c) => c.id, minLength: 1, maxLength: 8 }),
    });
    // Key order matters (the JSON problems come in it): shuffle the suite's keys.
    const shuffled = fc.tuple(fc.oneof(suiteArb, goodSuite), fc.integer({ min: 0, max: 1000 })).map(([s, seed]) => {
      const keys = Object.keys(s).sort((a, b) => ((a.charCodeAt(0) * seed) % 17) - ((b.charCodeAt(0) * seed) % 17));
      return Object.fromEntries(keys.map((k) => [k, (s as Record<string, unknown>)[k]]));
    });
    let valid = 0;
    fc.assert(
      fc.property(shuffled, fc.integer({ min: 0, max: 4 }), fc.integer({ min: 1, max: 5 }), (raw, first, batch) => {
        if (validateSuite(raw, FILE).ok) valid++;
        expectSameAsWhole(raw, first, batch);
      }),
      { numRuns: 1500 },
    );
    // Not only refusals: the generator reaches valid suites too, so the hash and cases are compared.
    expect(valid).toBeGreaterThan(0);
  });
});
