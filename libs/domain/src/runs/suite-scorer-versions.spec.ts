import fc from 'fast-check';
import { compileSuite, SuiteCompileError, type ScorableSuite } from './case-scoring';
import { suiteScorerVersions } from './suite-scorer-versions';

/** What compileSuite answers of a suite: its scorer versions in key order, or the case it refuses first. */
function outcome(run: () => Readonly<Record<string, string>>): { versions: Array<[string, string]> } | { refused: string } {
  try {
    return { versions: Object.entries(run()) };
  } catch (error) {
    if (!(error instanceof SuiteCompileError)) throw error;
    // "suite k v1 case c3: field: CODE; ..." - the issues' order may follow the spec's key order, the case may not.
    return { refused: error.message.split(': ')[0] };
  }
}

/** A spec's entries in any order (the same spec written with other key orders must share its validation). */
const spec = (entries: fc.Arbitrary<Array<[string, unknown]>>) =>
  entries.chain((e) => fc.shuffledSubarray(e, { minLength: e.length, maxLength: e.length })).map((e) => Object.fromEntries(e));

const bool = fc.constantFrom<unknown>(true, false, 'yes', undefined);
const needles = fc.constantFrom<unknown>('refund', ['refund', 'order-1'], '', [], ['a', ''], [1], 7, undefined);
const specs: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  spec(fc.tuple(bool, bool).map(([trim, ic]) => [['type', 'exact'], ...opt('trim', trim), ...opt('ignore_case', ic)])),
  spec(fc.tuple(fc.constantFrom('contains', 'not_contains'), needles, bool).map(([type, value, ic]) => [['type', type], ...opt('value', value), ...opt('ignore_case', ic)])),
  spec(fc.tuple(fc.constantFrom('^ticket-[0-9]+', '(a)\\1', '[', 'a{2000}', '^(open|closed)$'), fc.constantFrom<unknown>('i', 'q', undefined)).map(([p, f]) => [['type', 'regex'], ['pattern', p], ...opt('flags', f)])),
  spec(fc.constantFrom<unknown>('object', 'array', 'nope', undefined).map((r) => [['type', 'json_valid'], ...opt('require', r)])),
  fc.constant({ type: 'json_equal' }),
  spec(fc.tuple(fc.constantFrom<unknown>(0, 10, 'x', undefined), fc.constantFrom<unknown>(100, 5, undefined)).map(([min, max]) => [['type', 'numeric_range'], ...opt('min', min), ...opt('max', max)])),
  spec(fc.tuple(fc.constantFrom<unknown>('Is it polite?', '', 3, undefined), fc.constantFrom<unknown>(0.5, 2, undefined)).map(([r, m]) => [['type', 'llm_judge'], ...opt('rubric', r), ...opt('min_score', m)])),
  fc.constantFrom<Record<string, unknown>>({ type: 'nope' }, {}, { type: 'exact', extra: 1 }, { type: 7 }),
);
const expecteds = fc.constantFrom<unknown>(undefined, undefined, 'yes', '', 42, true, null, ['a', 'b'], { a: [1, 2] }, '{"a":1}', '{"a":1,"a":2}', 'not json');

function opt(key: string, value: unknown): Array<[string, unknown]> {
  return value === undefined ? [] : [[key, value]];
}

const suites: fc.Arbitrary<ScorableSuite> = fc
  .record({
    default_scorer: specs,
    // Few specs, many cases: specs repeat, as in real suites.
    pool: fc.array(fc.option(specs, { nil: null }), { minLength: 1, maxLength: 4 }),
    cases: fc.array(fc.tuple(fc.nat(), expecteds), { maxLength: 30 }),
  })
  .map(({ default_scorer, pool, cases }) => ({
    suite_key: 'k',
    version: 1,
    default_scorer,
    cases: cases.map(([i, expected], n) => ({ case_id: `c${n}`, scorer: pool[i % pool.length], ...(expected === undefined ? {} : { expected }) })),
  }));

describe('unit: a suite version scorer versions, without compiling every case (issue 15)', () => {
  it('answers what compileSuite answers: the same versions in the same order, or the same first refused case', () => {
    fc.assert(
      fc.property(suites, (suite) => {
        expect(outcome(() => suiteScorerVersions(suite))).toEqual(outcome(() => compileSuite(suite).scorer_versions));
      }),
      { numRuns: 2_000 },
    );
  });

  it("checks each case's expected for a scorer that reads it: one bad expected among many refuses the suite", () => {
    const cases = Array.from({ length: 50 }, (_, i) => ({ case_id: `c${i}`, scorer: null, expected: i === 37 ? 42 : `answer ${i}` }));
    const suite = { suite_key: 'k', version: 1, default_scorer: { type: 'exact' }, cases };
    expect(() => compileSuite(suite)).toThrow(/case c37: expected/);
    expect(() => suiteScorerVersions(suite)).toThrow(/case c37: expected/);
    const valid = { ...suite, cases: cases.filter((c) => c.case_id !== 'c37') };
    expect(suiteScorerVersions(valid)).toEqual(compileSuite(valid).scorer_versions);
  });

  it('validates a spec that reads nothing of the case once, however many cases share it (no regex compiled per case)', () => {
    let reads = 0;
    // Read once per validation (`type`, then the destructuring): counts validations, never the cases.
    const counting = {
      get type() {
        reads++;
        return 'regex';
      },
      pattern: '^ticket-[0-9]+',
    };
    const cases = Array.from({ length: 1_000 }, (_, i) => ({ case_id: `c${i}`, scorer: i % 2 ? { pattern: '^a', type: 'regex', flags: 'i' } : null, expected: `e${i}` }));
    expect(suiteScorerVersions({ suite_key: 'k', version: 1, default_scorer: counting, cases })).toEqual({ regex: expect.any(String) });
    expect(reads).toBeLessThanOrEqual(2);
  });
});
