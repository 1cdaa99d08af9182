import fc from 'fast-check';
import { decimalEquals, parseDecimal } from './json';
import { jsonEqualScorer } from './json-equal.scorer';
import { compile, outcome, refusal } from './test-helpers';

/** Reference equality for plain JSON values: key order ignored, doubles by value (-0 == 0). */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The same value with every object's keys in reverse order. */
function reorder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reorder);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).reverse()) {
      Object.defineProperty(out, k, { value: reorder((value as Record<string, unknown>)[k]), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}

/** A structured expected value; a top-level string must be given as JSON text (the documented rule). */
function asExpected(value: unknown): unknown {
  return typeof value === 'string' ? JSON.stringify(value) : value;
}

const EQ: [boolean, string] = [true, 'equal'];
const NE: [boolean, string] = [false, 'not_equal'];
const BAD: [boolean, string] = [false, 'invalid_json'];

describe('json_equal scorer (S1)', () => {
  it('has its spec name, a version and no options (S4)', () => {
    expect(jsonEqualScorer.name).toBe('json_equal');
    expect(jsonEqualScorer.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(jsonEqualScorer.options).toEqual([]);
  });

  describe('S1: deep equality, key order ignored, array order kept', () => {
    it.each<[unknown, string, [boolean, string]]>([
      [{ a: 1, b: 2 }, '{"b":2,"a":1}', EQ],
      [{ a: 1, b: 2 }, ' {\n  "a": 1,\n  "b": 2\n}\n', EQ],
      [{ a: 1, b: 2 }, '{"a":1}', NE], // a missing name
      [{ a: 1 }, '{"a":1,"b":2}', NE], // an extra name
      [{ a: null }, '{}', NE], // null is not absence
      [{ a: 1 }, '{"a":1,"a":1}', NE], // a duplicate name is ambiguous: never equal
      [[1, 2, 3], '[1,2,3]', EQ],
      [[1, 2, 3], '[3,2,1]', NE],
      [[1, 2, 3], '[1,2]', NE],
      [[1, 2], '[1,2,3]', NE],
      [[], '[]', EQ],
      [{}, '{}', EQ],
      [[], '{}', NE],
      [{ a: [{ b: [true, false, null] }] }, '{"a":[{"b":[true,false,null]}]}', EQ],
      [{ a: [{ b: [true, false, null] }] }, '{"a":[{"b":[true,false,false]}]}', NE],
      ['"hi"', '"hi"', EQ], // a string expected is JSON text: this one expects the JSON string "hi"
      ['"hi"', 'hi', BAD],
      [null, 'null', EQ],
      [true, 'true', EQ],
      [true, '1', NE],
      [{ s: 'A/é\n😀' }, '{"s":"\\u0041\\/\\u00e9\\n\\ud83d\\ude00"}', EQ], // escapes decoded
      [{ s: 'é' }, '{"s":"e\\u0301"}', NE], // no normalization
      [{ 'k é': 1 }, '{"k \\u00e9":1}', EQ], // escaped names too
      [{ a: 1 }, '', BAD],
      [{ a: 1 }, '{"a":1', BAD],
      [{ a: 1 }, "{'a':1}", BAD],
      [{ a: 1 }, '\ufeff{"a":1}', BAD], // BOM
      [{ a: 1 }, '{"a":2,}', BAD], // invalid beats not-equal, even after a difference
      [{ a: 1 }, '```json\n{"a":1}\n```', BAD],
    ])('expected %j, output %j -> %j', (expected, output, result) => {
      expect(outcome(compile({ type: 'json_equal' }, expected), output)).toEqual(result);
    });
  });

  describe('S1: numbers by value', () => {
    it.each<[unknown, string, [boolean, string]]>([
      // structured expected (a JS double): the output number must round to the same double
      [1, '1', EQ],
      [1, '1.0', EQ],
      [1, '1e0', EQ],
      [1, '10e-1', EQ],
      [1, '0.1e1', EQ],
      [1, '1.0000000000000001', EQ], // rounds to the double 1: the expected carries no more precision
      [1, '1.000000000000001', NE],
      [0, '-0', EQ],
      [-0, '0', EQ],
      [0, '0e99', EQ],
      [0.1, '0.1', EQ],
      [0.1, '0.10000000000000002', NE], // the next double up
      [0.3, '0.30000000000000004', NE],
      [1e21, '1000000000000000000000', EQ],
      [9007199254740993, '9007199254740992', EQ], // both are the double 2^53: YAML already rounded
      [1, '1e400', NE],
      [-1, '1', NE],
      // expected as JSON text: exact decimals on both sides
      ['1', '1.0', EQ],
      ['1.0', '1e0', EQ],
      ['-0.0', '0', EQ],
      ['100', '1e2', EQ],
      ['100', '1E+2', EQ],
      ['0.5', '5e-1', EQ],
      ['9007199254740993', '9007199254740993', EQ],
      ['9007199254740993', '9007199254740992', NE], // exact: no double rounding
      ['0.1', '0.1000000000000000055511151231257827', NE],
      ['1e400', '10e399', EQ],
      ['1e400', '1e401', NE],
      ['123456789012345678901234567890', '1.23456789012345678901234567890e29', EQ],
      ['[1, 2.50, -3e-2]', '[1.0, 2.5, -0.03]', EQ],
    ])('expected %j, output %j -> %j', (expected, output, result) => {
      expect(outcome(compile({ type: 'json_equal' }, expected), output)).toEqual(result);
    });

    it('bigint expected compares exactly', () => {
      expect(outcome(compile({ type: 'json_equal' }, 9007199254740993n), '9007199254740993')).toEqual(EQ);
      expect(outcome(compile({ type: 'json_equal' }, 9007199254740993n), '9007199254740992')).toEqual(NE);
    });

    it('exact decimals handle huge exponents without big-integer work on mismatched sizes', () => {
      const d = (s: string) => parseDecimal(s);
      expect(decimalEquals(d('1e999999999999999999'), d('10e999999999999999998'))).toBe(true);
      expect(decimalEquals(d('1e999999999999999999'), d('1e999999999999999998'))).toBe(false);
      expect(decimalEquals(d('-1e-999999999999999999'), d('-0.1e-999999999999999998'))).toBe(true);
      expect(decimalEquals(d(`1e${'9'.repeat(1_000_000)}`), d('1e5'))).toBe(false);
      expect(decimalEquals(d('0e5'), d('-0.000'))).toBe(true);
      expect(decimalEquals(d('1e-0'), d('1E+000'))).toBe(true);
    });
  });

  describe('S1: properties over arbitrary JSON values', () => {
    it('a value equals its own serialization, compact or pretty, with keys in any order', () => {
      fc.assert(
        fc.property(fc.jsonValue(), fc.constantFrom(undefined, 2), (value, indent) => {
          const scorer = compile({ type: 'json_equal' }, asExpected(value));
          expect(outcome(scorer, JSON.stringify(value, null, indent))).toEqual(EQ);
          expect(outcome(scorer, JSON.stringify(reorder(value)))).toEqual(EQ);
          // the same expected given as JSON text
          expect(outcome(compile({ type: 'json_equal' }, JSON.stringify(value)), JSON.stringify(reorder(value)))).toEqual(EQ);
        }),
      );
    });

    it('two values are equal exactly when their canonical forms are', () => {
      const small = fc.jsonValue({ maxDepth: 2 });
      fc.assert(
        fc.property(small, small, fc.boolean(), (a, other, same) => {
          const b = same ? reorder(a) : other;
          const expected: [boolean, string] = canonical(a) === canonical(b) ? EQ : NE;
          expect(outcome(compile({ type: 'json_equal' }, asExpected(a)), JSON.stringify(b))).toEqual(expected);
        }),
        { numRuns: 1000 },
      );
    });
  });

  describe('S4: expected is validated when the suite version is created', () => {
    const cyclic: unknown[] = [];
    cyclic.push(cyclic);
    it.each<[string, unknown, string, string]>([
      ['missing', undefined, 'SCORER_EXPECTED_MISSING', 'expected'],
      ['a string that is not JSON', 'hello', 'SCORER_EXPECTED_INVALID', 'expected'],
      ['JSON text with a duplicate name', '{"a":1,"a":2}', 'SCORER_EXPECTED_INVALID', 'expected'],
      ['NaN', { a: [1, NaN] }, 'SCORER_EXPECTED_INVALID', 'expected.a[1]'],
      ['Infinity', Infinity, 'SCORER_EXPECTED_INVALID', 'expected'],
      ['undefined inside', { 'b c': undefined }, 'SCORER_EXPECTED_INVALID', 'expected["b c"]'],
      ['a Date', { d: new Date(0) }, 'SCORER_EXPECTED_INVALID', 'expected.d'],
      ['a function', [() => 1], 'SCORER_EXPECTED_INVALID', 'expected[0]'],
      ['a cycle', { x: cyclic }, 'SCORER_EXPECTED_INVALID', 'expected.x[0]'],
    ])('refuses %s', (_what, expected, code, field) => {
      expect(refusal({ type: 'json_equal' }, expected)).toEqual([expect.objectContaining({ code, field })]);
    });

    it('accepts a value shared twice (a YAML alias) and null', () => {
      const shared = { k: [1, 2] };
      expect(outcome(compile({ type: 'json_equal' }, { a: shared, b: shared }), '{"a":{"k":[1,2]},"b":{"k":[1,2]}}')).toEqual(EQ);
      expect(outcome(compile({ type: 'json_equal' }, null), 'null')).toEqual(EQ);
    });

    it('takes no options', () => {
      expect(refusal({ type: 'json_equal', ignore_order: true }, {})).toEqual([
        expect.objectContaining({ code: 'SCORER_OPTION_UNKNOWN', field: 'ignore_order' }),
      ]);
    });

    it('accepts a deeply nested expected without recursion', () => {
      const deep = `${'['.repeat(100_000)}1${']'.repeat(100_000)}`;
      const scorer = compile({ type: 'json_equal' }, deep);
      expect(outcome(scorer, deep)).toEqual(EQ);
      expect(outcome(scorer, `${'['.repeat(100_000)}2${']'.repeat(100_000)}`)).toEqual(NE);
    }, 30_000);
  });
});
