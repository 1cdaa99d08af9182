import fc from 'fast-check';
import { numericRangeScorer, readNumber } from './numeric-range.scorer';
import { compile, outcome, refusal } from './test-helpers';

describe('numeric_range scorer (S1)', () => {
  it('has its spec name, a version and its option keys (S4)', () => {
    expect(numericRangeScorer.name).toBe('numeric_range');
    expect(numericRangeScorer.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(numericRangeScorer.options).toEqual(['min', 'max', 'extract']);
  });

  describe('S1: the number grammar (extract: whole)', () => {
    it.each<[string, number | undefined]>([
      ['42', 42],
      ['-7', -7],
      ['+3.5', 3.5],
      ['.5', 0.5],
      ['-.5', -0.5],
      ['007', 7], // leading zeros are decimal, never octal
      ['1e3', 1000],
      ['2.5E-3', 0.0025],
      ['1e+2', 100],
      ['  12.5 \n', 12.5], // trimmed
      ['\u00a012\u3000', 12], // String.prototype.trim: Unicode spaces too
      ['1e400', Infinity], // finite text beyond the double range rounds to Infinity
      ['-1e400', -Infinity],
      ['1e-400', 0],
      ['', undefined],
      ['   ', undefined],
      ['5.', undefined],
      ['1e', undefined],
      ['e3', undefined],
      ['NaN', undefined],
      ['nan', undefined],
      ['Infinity', undefined],
      ['-Infinity', undefined],
      ['0x1F', undefined],
      ['0b11', undefined],
      ['1,000', undefined],
      ['1_000', undefined],
      ['1 000', undefined],
      ['- 5', undefined],
      ['--5', undefined],
      ['+-5', undefined],
      ['\u22125', undefined], // U+2212 minus sign
      ['１２', undefined], // full-width digits
      ['١٢', undefined], // Arabic-Indic digits
      ['12 apples', undefined],
      ['~12', undefined],
      ['12\u0000', undefined],
    ])('%j -> %s', (output, value) => {
      const read = readNumber(output, 'whole');
      if (value === undefined) expect(read).toBeUndefined();
      else expect(read).toBe(value);
    });

    it('-0 is a number and reads as -0', () => {
      expect(Object.is(readNumber('-0', 'whole'), -0)).toBe(true);
      expect(Object.is(readNumber('-0.0e5', 'whole'), -0)).toBe(true);
    });
  });

  describe('S1: extract: first takes the leftmost number anywhere', () => {
    it.each<[string, number | undefined]>([
      ['about 3.5 stars', 3.5],
      ['Score: -2 (out of 10)', -2],
      ['1,000', 1], // separators are not part of a number
      ['v2', 2],
      ['x-5', -5],
      ['range 3-5', 3],
      ['2024-01-15', 2024],
      ['the answer is 42.', 42], // a trailing dot is punctuation
      ['value 1e3 ok', 1000],
      ['1e', 1],
      ['e5', 5],
      ['. .5', 0.5],
      ['NaN then 4', 4],
      ['no digits here', undefined],
      ['', undefined],
    ])('%j -> %s', (output, value) => {
      const read = readNumber(output, 'first');
      if (value === undefined) expect(read).toBeUndefined();
      else expect(read).toBe(value);
    });
  });

  describe('S1: inclusive bounds, either optional', () => {
    it.each<[Record<string, unknown>, string, [boolean, string]]>([
      [{ min: 0, max: 10 }, '0', [true, 'in_range']],
      [{ min: 0, max: 10 }, '10', [true, 'in_range']],
      [{ min: 0, max: 10 }, '10.0000001', [false, 'above_max']],
      [{ min: 0, max: 10 }, '-0.0000001', [false, 'below_min']],
      [{ min: 0, max: 10 }, '-0', [true, 'in_range']], // -0 equals 0
      [{ min: -10, max: -0 }, '0', [true, 'in_range']],
      [{ min: 0, max: 10 }, '1e1', [true, 'in_range']],
      [{ min: 0, max: 10 }, '1e3', [false, 'above_max']],
      [{ min: 0, max: 10 }, 'NaN', [false, 'not_a_number']],
      [{ min: 0, max: 10 }, 'Infinity', [false, 'not_a_number']],
      [{ min: 0, max: 10 }, '', [false, 'not_a_number']],
      [{ min: 0, max: 10 }, 'five', [false, 'not_a_number']],
      [{ min: 0, max: 10 }, '5 apples', [false, 'not_a_number']],
      [{ min: 0, max: 10, extract: 'first' }, '5 apples', [true, 'in_range']],
      [{ min: 0, max: 10, extract: 'first' }, 'apples', [false, 'not_a_number']],
      [{ min: 0, max: 10, extract: 'first' }, '11 then 5', [false, 'above_max']], // only the first counts
      [{ min: 0 }, '1e400', [true, 'in_range']], // finite text, beyond every double
      [{ max: 0 }, '1e400', [false, 'above_max']],
      [{ max: 0 }, '-1e400', [true, 'in_range']],
      [{ min: 0 }, '1e-400', [true, 'in_range']],
      [{ max: 5 }, '-1000000', [true, 'in_range']],
      [{ min: 5 }, '4.999', [false, 'below_min']],
      [{ min: 0.1, max: 0.1 }, '0.1', [true, 'in_range']], // bounds and output round the same way
      [{ min: 0.3, max: 1 }, '0.30000000000000004', [true, 'in_range']],
      [{ min: 0, max: 0.3 }, '0.30000000000000004', [false, 'above_max']],
    ])('%j on %j -> %j', (options, output, result) => {
      expect(outcome(compile({ type: 'numeric_range', ...options }), output)).toEqual(result);
    });

    it('agrees with Number() on every double written by JavaScript', () => {
      fc.assert(
        fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
          // String(-0) is '0': compare with ===, which treats -0 and 0 alike
          expect(readNumber(String(x), 'whole') === x).toBe(true);
          expect(readNumber(` result: ${x}!`, 'first') === x).toBe(true);
        }),
      );
    });
  });

  describe('S4: config is validated when the suite version is created', () => {
    it.each<[Record<string, unknown>, string, string]>([
      [{ type: 'numeric_range' }, 'SCORER_OPTION_MISSING', 'min'],
      [{ type: 'numeric_range', min: 5, max: 1 }, 'SCORER_OPTION_INVALID', 'min'],
      [{ type: 'numeric_range', min: '1' }, 'SCORER_OPTION_INVALID', 'min'],
      [{ type: 'numeric_range', max: null }, 'SCORER_OPTION_INVALID', 'max'],
      [{ type: 'numeric_range', max: Infinity }, 'SCORER_OPTION_INVALID', 'max'],
      [{ type: 'numeric_range', min: NaN }, 'SCORER_OPTION_INVALID', 'min'],
      [{ type: 'numeric_range', min: 0, extract: 'last' }, 'SCORER_OPTION_INVALID', 'extract'],
      [{ type: 'numeric_range', min: 0, value: 3 }, 'SCORER_OPTION_UNKNOWN', 'value'],
    ])('%j -> %s on %s', (spec, code, field) => {
      expect(refusal(spec)).toContainEqual(expect.objectContaining({ code, field }));
    });

    it('accepts min == max', () => {
      expect(outcome(compile({ type: 'numeric_range', min: 3, max: 3 }), '3.0')).toEqual([true, 'in_range']);
    });
  });
});
