import { compile, outcome, refusal } from './test-helpers';

describe('not scorer (S1, issue 29: promptfoo not-* assertions)', () => {
  it.each<[Record<string, unknown>, string, boolean, string]>([
    [{ type: 'regex', pattern: '\\d{16}' }, 'no card', true, 'negation_held'],
    [{ type: 'regex', pattern: '\\d{16}' }, '4111111111111111', false, 'negated_check_passed'],
    [{ type: 'json_valid' }, 'not json', true, 'negation_held'],
    [{ type: 'starts_with', value: 'Hi' }, 'Hi there', false, 'negated_check_passed'],
  ])('not %j on %j -> %s (%s)', (scorer, output, passed, label) => {
    expect(outcome(compile({ type: 'not', scorer }), output)).toEqual([passed, label]);
  });

  it('inverts a scorer that uses the case expected', () => {
    expect(compile({ type: 'not', scorer: { type: 'exact' } }, 'ok').score('ok').passed).toBe(false);
  });

  it.each<[Record<string, unknown>, string, string]>([
    [{ type: 'not' }, 'SCORER_OPTION_MISSING', 'scorer'],
    [{ type: 'not', scorer: { type: 'regex' } }, 'SCORER_OPTION_MISSING', 'scorer.pattern'],
    [{ type: 'not', scorer: { type: 'llm_judge', rubric: 'x' } }, 'SCORER_OPTION_INVALID', 'scorer'],
    [{ type: 'not', scorer: { type: 'json_valid' }, value: 'a' }, 'SCORER_OPTION_UNKNOWN', 'value'],
  ])('refuses %j with %s on %s', (spec, code, field) => {
    expect(refusal(spec)).toContainEqual(expect.objectContaining({ code, field }));
  });
});
