import { findsJsonObject } from './contains-json.scorer';
import { compile, outcome, refusal } from './test-helpers';

describe('contains_json scorer (S1, issue 29: promptfoo contains-json without a schema)', () => {
  it.each<[string, boolean, string]>([
    ['{"a": 1}', true, 'json_found'],
    ['Here: {"sku": "M-01", "n": [1, {"b": 2}]} done', true, 'json_found'],
    ['first {not json} then {"ok": true}', true, 'json_found'], // moves on to the next brace
    ['{a: 1}', false, 'no_json'], // YAML flow mappings are not JSON (promptfoo accepts them; documented)
    ['[1, 2]', false, 'no_json'], // only objects count
    ['no braces', false, 'no_json'],
    ['{"a": 1', false, 'no_json'], // never balanced
    ['{"a": "}"}', false, 'no_json'], // naive brace counting balances inside the string, as promptfoo's does
    ['', false, 'no_json'],
  ])('%j -> %s (%s)', (output, passed, label) => {
    expect(outcome(compile({ type: 'contains_json' }), output)).toEqual([passed, label]);
  });

  it('stays linear enough on many unbalanced braces', () => {
    expect(findsJsonObject('{'.repeat(20_000))).toBe(false);
  });

  it('takes no options', () => {
    expect(refusal({ type: 'contains_json', schema: {} })).toContainEqual(expect.objectContaining({ code: 'SCORER_OPTION_UNKNOWN', field: 'schema' }));
  });
});
