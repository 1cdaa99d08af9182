import { notContainsScorer } from './not-contains.scorer';
import { compile, outcome, refusal } from './test-helpers';

describe('not_contains scorer (S1)', () => {
  it('has its spec name, a version and its option keys (S4)', () => {
    expect(notContainsScorer.name).toBe('not_contains');
    expect(notContainsScorer.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(notContainsScorer.options).toEqual(['value', 'ignore_case']);
  });

  describe('S1: no value is a substring', () => {
    it.each<[string | string[], string, boolean, string]>([
      ['password', 'Here is the answer.', true, 'none_present'],
      ['password', 'your password is', false, 'forbidden_value'],
      ['password', 'your PASSWORD is', true, 'none_present'], // case-sensitive by default
      [['ssn', 'password'], 'no secrets', true, 'none_present'],
      [['ssn', 'password'], 'the ssn', false, 'forbidden_value'],
      ['x', '', true, 'none_present'], // empty output contains nothing
    ])('value %j in %j -> passed %s (%s)', (value, output, passed, label) => {
      expect(outcome(compile({ type: 'not_contains', value }), output)).toEqual([passed, label]);
    });
  });

  describe('S1: ignore_case folds both sides (Unicode full case folding)', () => {
    it.each<[string, string, boolean]>([
      ['password', 'your PASSWORD is', false],
      ['straße', 'STRASSE', false],
      ['ı', 'I', true], // dotless i does not fold, so it is not found
    ])('value %j in %j -> %s', (value, output, passed) => {
      expect(compile({ type: 'not_contains', value, ignore_case: true }).score(output).passed).toBe(passed);
    });
  });

  it('S1: falls back to the case expected when value is absent', () => {
    expect(outcome(compile({ type: 'not_contains' }, ['a', 'b']), 'xyz b')).toEqual([false, 'forbidden_value']);
  });

  describe('S4: config is validated like contains', () => {
    it.each<[Record<string, unknown>, unknown, string, string]>([
      [{ type: 'not_contains' }, undefined, 'SCORER_OPTION_MISSING', 'value'],
      [{ type: 'not_contains', value: '' }, undefined, 'SCORER_OPTION_INVALID', 'value'],
      [{ type: 'not_contains', value: [1] }, undefined, 'SCORER_OPTION_INVALID', 'value[0]'],
      [{ type: 'not_contains' }, true, 'SCORER_EXPECTED_INVALID', 'expected'],
      [{ type: 'not_contains', value: 'a', pattern: 'b' }, undefined, 'SCORER_OPTION_UNKNOWN', 'pattern'],
    ])('%j with expected %j -> %s on %s', (spec, expected, code, field) => {
      expect(refusal(spec, expected)).toContainEqual(expect.objectContaining({ code, field }));
    });
  });
});
