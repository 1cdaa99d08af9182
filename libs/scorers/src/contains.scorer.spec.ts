import { containsScorer } from './contains.scorer';
import { compile, outcome, refusal } from './test-helpers';

describe('contains scorer (S1)', () => {
  it('has its spec name, a version and its option keys (S4)', () => {
    expect(containsScorer.name).toBe('contains');
    expect(containsScorer.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(containsScorer.options).toEqual(['value', 'ignore_case']);
  });

  describe('S1: every value is a substring', () => {
    it.each<[string | string[], string, boolean, string]>([
      ['refund', 'We issued a refund today.', true, 'contains_all'],
      ['refund', 'We issued a Refund today.', false, 'missing_value'],
      [['refund', 'today'], 'We issued a refund today.', true, 'contains_all'],
      [['refund', 'tomorrow'], 'We issued a refund today.', false, 'missing_value'],
      [['a', 'a'], 'a', true, 'contains_all'], // repeated values are each found
      [['aa', 'aa'], 'aaa', true, 'contains_all'], // overlap allowed: values are searched independently
      ['x', '', false, 'missing_value'], // empty output
      [' ', 'a b', true, 'contains_all'], // whitespace is data
      ['\u0000', 'a\u0000b', true, 'contains_all'],
      ['é', 'e\u0301', false, 'missing_value'], // no normalization
    ])('value %j in %j -> passed %s (%s)', (value, output, passed, label) => {
      expect(outcome(compile({ type: 'contains', value }), output)).toEqual([passed, label]);
    });
  });

  describe('S1: ignore_case folds both sides (Unicode full case folding), substring on the folded text', () => {
    it.each<[string | string[], string, boolean]>([
      ['REFUND', 'a refund', true],
      ['STRASSE', 'die Straße', true],
      ['ß', 'STRASSE', true],
      ['SS', 'Straße', true], // folded output 'strasse' contains 'ss'
      ['s', 'ß', true], // a documented consequence of substring-on-folded-text
      ['ı', 'I', false], // dotless i does not fold
      ['i', 'İ', true], // İ folds to i + U+0307, which contains i
      ['istanbul', 'İSTANBUL', false], // ... but the combining dot sits between i and s
      [['ΣΑΣ', 'όσος'], 'σας ΌΣΟΣ', true],
    ])('value %j in %j -> %s', (value, output, passed) => {
      expect(compile({ type: 'contains', value, ignore_case: true }).score(output).passed).toBe(passed);
    });
  });

  describe('S1: falls back to the case expected when value is absent', () => {
    it('uses an expected string', () => {
      expect(outcome(compile({ type: 'contains' }, 'ok'), 'it is ok')).toEqual([true, 'contains_all']);
    });
    it('uses an expected list of strings', () => {
      expect(outcome(compile({ type: 'contains' }, ['a', 'b']), 'a only')).toEqual([false, 'missing_value']);
    });
    it('prefers value over expected', () => {
      expect(compile({ type: 'contains', value: 'x' }, 'y').score('x').passed).toBe(true);
    });
  });

  describe('S4: config is validated when the suite version is created', () => {
    it.each<[Record<string, unknown>, unknown, string, string]>([
      [{ type: 'contains' }, undefined, 'SCORER_OPTION_MISSING', 'value'],
      [{ type: 'contains' }, 42, 'SCORER_EXPECTED_INVALID', 'expected'],
      [{ type: 'contains' }, { a: 'b' }, 'SCORER_EXPECTED_INVALID', 'expected'],
      [{ type: 'contains' }, ['a', 1], 'SCORER_EXPECTED_INVALID', 'expected[1]'],
      [{ type: 'contains', value: '' }, undefined, 'SCORER_OPTION_INVALID', 'value'],
      [{ type: 'contains', value: [] }, undefined, 'SCORER_OPTION_INVALID', 'value'],
      [{ type: 'contains', value: ['a', ''] }, undefined, 'SCORER_OPTION_INVALID', 'value[1]'],
      [{ type: 'contains', value: ['a', 3] }, undefined, 'SCORER_OPTION_INVALID', 'value[1]'],
      [{ type: 'contains', value: null }, undefined, 'SCORER_OPTION_INVALID', 'value'],
      [{ type: 'contains', value: 'a', ignore_case: 'true' }, undefined, 'SCORER_OPTION_INVALID', 'ignore_case'],
      [{ type: 'contains', value: 'a', trim: true }, undefined, 'SCORER_OPTION_UNKNOWN', 'trim'],
    ])('%j with expected %j -> %s on %s', (spec, expected, code, field) => {
      expect(refusal(spec, expected)).toContainEqual(expect.objectContaining({ code, field }));
    });
  });
});
