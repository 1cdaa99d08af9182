import { compile, outcome, refusal } from './test-helpers';

describe('contains_any scorer (S1, issue 29: promptfoo contains-any / icontains-any)', () => {
  it.each<[string | string[], boolean, string, boolean, string]>([
    [['billing', 'payments'], false, 'sent to payments', true, 'contains_one'],
    [['billing', 'payments'], false, 'sent to support', false, 'missing_all'],
    [['billing', 'payments'], false, 'sent to PAYMENTS', false, 'missing_all'],
    [['billing', 'payments'], true, 'sent to PAYMENTS', true, 'contains_one'],
    ['refund', false, 'a refund', true, 'contains_one'],
    [['SS'], true, 'Straße', true, 'contains_one'], // full case folding, as contains
    [['x'], false, '', false, 'missing_all'],
  ])('value %j ignore_case %s in %j -> %s (%s)', (value, ignoreCase, output, passed, label) => {
    expect(outcome(compile({ type: 'contains_any', value, ignore_case: ignoreCase }), output)).toEqual([passed, label]);
  });

  it('falls back to the case expected list', () => {
    expect(compile({ type: 'contains_any' }, ['a', 'zz']).score('zz top').passed).toBe(true);
  });

  it.each<[Record<string, unknown>, string]>([
    [{ type: 'contains_any', value: [] }, 'SCORER_OPTION_INVALID'],
    [{ type: 'contains_any', value: [''] }, 'SCORER_OPTION_INVALID'],
    [{ type: 'contains_any' }, 'SCORER_OPTION_MISSING'],
  ])('refuses %j with %s', (spec, code) => {
    expect(refusal(spec)).toContainEqual(expect.objectContaining({ code }));
  });
});
