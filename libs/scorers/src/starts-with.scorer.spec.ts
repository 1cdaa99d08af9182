import { compile, outcome, refusal } from './test-helpers';

describe('starts_with scorer (S1, issue 29: promptfoo starts-with)', () => {
  it.each<[string, string, boolean, string]>([
    ['Hello', 'Hello Sam', true, 'prefix_match'],
    ['Hello', 'Hello', true, 'prefix_match'],
    ['Hello', ' Hello', false, 'prefix_mismatch'], // no trimming
    ['Hello', 'hello', false, 'prefix_mismatch'], // no case folding
    ['Hello', 'Hell', false, 'prefix_mismatch'],
    ['é', 'e\u0301', false, 'prefix_mismatch'], // no normalization
  ])('value %j, output %j -> %s (%s)', (value, output, passed, label) => {
    expect(outcome(compile({ type: 'starts_with', value }), output)).toEqual([passed, label]);
  });

  it('falls back to the case expected', () => {
    expect(outcome(compile({ type: 'starts_with' }, 'ok'), 'ok then')).toEqual([true, 'prefix_match']);
  });

  it.each<[Record<string, unknown>, unknown, string]>([
    [{ type: 'starts_with' }, undefined, 'SCORER_OPTION_MISSING'],
    [{ type: 'starts_with', value: '' }, undefined, 'SCORER_OPTION_INVALID'],
    [{ type: 'starts_with', value: 3 }, undefined, 'SCORER_OPTION_INVALID'],
    [{ type: 'starts_with' }, 3, 'SCORER_EXPECTED_INVALID'],
    [{ type: 'starts_with', value: 'a', trim: true }, undefined, 'SCORER_OPTION_UNKNOWN'],
  ])('refuses %j (expected %j) with %s', (spec, expected, code) => {
    expect(refusal(spec, expected)).toContainEqual(expect.objectContaining({ code }));
  });
});
