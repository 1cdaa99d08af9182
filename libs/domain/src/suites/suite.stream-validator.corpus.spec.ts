/**
 * Every suite the domain's suite specs validate - the validator's, the parsers' (YAML, JSON, sliced), the
 * unstorable values', the examples' and the docs' - is also validated by SuiteStreamValidator, in batches of
 * two cases, and the answers compared (issue 31: the same problems in the same order for every invalid suite
 * in the test corpus). validateSuite is wrapped so that each call, wherever it comes from, is checked; the
 * specs themselves run unchanged, here.
 */
import type * as Validator from './suite.validator';

const mismatches: string[] = [];
let compared = 0;
let refused = 0;

jest.mock('./suite.validator', () => {
  const actual = jest.requireActual<typeof Validator>('./suite.validator');
  const compare = (raw: unknown, source: string, whole: ReturnType<typeof actual.validateSuite>): void => {
    // Loaded here, after the mock: the streaming validator shares the wrapped module's helpers.
    const { SuiteStreamValidator } = jest.requireActual<typeof import('./suite.stream-validator')>('./suite.stream-validator');
    const { suiteContentHash } = jest.requireActual<typeof import('./suite-hash')>('./suite-hash');
    const v = new SuiteStreamValidator(source);
    const plain = typeof raw === 'object' && raw !== null && Object.getPrototypeOf(raw) === Object.prototype;
    const cases = plain ? (raw as { cases?: unknown }).cases : undefined;
    const got: unknown[] = [];
    if (Array.isArray(cases)) {
      got.push(...v.begin({ ...(raw as object), cases: cases.slice(0, 1) }).cases);
      for (let i = 1; i < cases.length; i += 2) got.push(...v.add(cases.slice(i, i + 2)).cases);
    } else {
      got.push(...v.begin(raw).cases);
    }
    const streamed = v.finish();
    compared++;
    const same = whole.ok
      ? streamed.ok && streamed.content_hash === suiteContentHash(whole.suite) && streamed.case_count === whole.suite.cases.length && JSON.stringify(got) === JSON.stringify(whole.suite.cases)
      : (refused++, !streamed.ok && JSON.stringify(streamed.errors) === JSON.stringify(whole.errors));
    if (!same) mismatches.push(`${source}: ${JSON.stringify(whole.ok ? 'valid' : whole.errors).slice(0, 300)} vs ${JSON.stringify(streamed.ok ? 'valid' : streamed.errors).slice(0, 300)}`);
  };
  return {
    ...actual,
    validateSuite: (raw: unknown, source: string, options?: Validator.SuiteCheckOptions) => {
      const whole = options ? actual.validateSuite(raw, source, options) : actual.validateSuite(raw, source);
      compare(raw, source, whole);
      return whole;
    },
  };
});

require('./suite.validator.spec');
require('./suite.parser.spec');
require('./suite.parser.json.spec');
require('./suite.parser.batched.spec');
require('./suite.unstorable.spec');
require('./examples.spec');
require('./docs.spec');

afterAll(() => {
  // Hundreds of suites, many refused: the comparison ran, and found nothing.
  expect(compared).toBeGreaterThan(200);
  expect(refused).toBeGreaterThan(50);
  expect(mismatches).toEqual([]);
});
