import { normalizeFuzzy } from './fuzzy-match.scorer';
import { compile, outcome, refusal } from './test-helpers';

describe('fuzzy_match scorer (S1, issue 29: OpenAI Evals FuzzyMatch)', () => {
  it.each<[string, string]>([
    ['The  Eiffel Tower!', 'eiffel tower'],
    ['an apple, a day', 'apple day'],
    ['theatre', 'theatre'], // only whole words are articles
    ['  ', ''],
  ])('normalizes %j to %j', (text, normalized) => {
    expect(normalizeFuzzy(text)).toBe(normalized);
  });

  it.each<[string | string[], string, boolean, string]>([
    ['Paris', 'It is paris.', true, 'fuzzy_match'], // the value within the output
    ['The city of Paris, France', 'paris', true, 'fuzzy_match'], // the output within the value
    ['Paris', 'Lyon', false, 'no_fuzzy_match'],
    [['Lyon', 'Paris'], 'PARIS', true, 'fuzzy_match'],
    ['the', '', true, 'fuzzy_match'], // both normalize to ''
    ['the', 'x', false, 'no_fuzzy_match'], // '' matches only ''
  ])('value %j, output %j -> %s (%s)', (value, output, passed, label) => {
    expect(outcome(compile({ type: 'fuzzy_match', value }), output)).toEqual([passed, label]);
  });

  it('falls back to the case expected and refuses ignore_case', () => {
    expect(compile({ type: 'fuzzy_match' }, 'Paris').score('paris!').passed).toBe(true);
    expect(refusal({ type: 'fuzzy_match', value: 'a', ignore_case: true })).toContainEqual(expect.objectContaining({ code: 'SCORER_OPTION_UNKNOWN' }));
  });
});
