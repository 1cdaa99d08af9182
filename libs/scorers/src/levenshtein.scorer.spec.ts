import fc from 'fast-check';
import { withinDistance } from './levenshtein.scorer';
import { compile, outcome, refusal } from './test-helpers';

/** The textbook full-matrix distance, to check the bounded one against. */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
  }
  return d[a.length][b.length];
}

describe('levenshtein scorer (S1, issue 29: promptfoo levenshtein)', () => {
  it.each<[string, number | undefined, string, boolean, string]>([
    ['Canberra', 1, 'Canbera', true, 'within_distance'],
    ['Canberra', 1, 'Canbrea', false, 'too_distant'], // a transposition is two edits
    ['Canberra', undefined, 'Canberra!!!!!', true, 'within_distance'], // default 5
    ['Canberra', undefined, 'Canberra!!!!!!', false, 'too_distant'],
    ['', 0, '', true, 'within_distance'],
    ['abc', 0, 'abd', false, 'too_distant'],
    ['😀', 1, '😁', true, 'within_distance'], // one differing UTF-16 unit
    ['😀', 1, 'x', false, 'too_distant'], // two units against one
  ])('value %j max %s output %j -> %s (%s)', (value, max, output, passed, label) => {
    const spec = max === undefined ? { type: 'levenshtein', value } : { type: 'levenshtein', value, max_distance: max };
    expect(outcome(compile(spec), output)).toEqual([passed, label]);
  });

  it('the bounded computation agrees with the full one', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 }), fc.integer({ min: 0, max: 8 }), (a, b, max) => {
        expect(withinDistance(a, b, max)).toBe(distance(a, b) <= max);
      }),
      { numRuns: 500 },
    );
  });

  it.each<[Record<string, unknown>, unknown, string]>([
    [{ type: 'levenshtein' }, undefined, 'SCORER_OPTION_MISSING'],
    [{ type: 'levenshtein', value: 1 }, undefined, 'SCORER_OPTION_INVALID'],
    [{ type: 'levenshtein', value: 'a', max_distance: -1 }, undefined, 'SCORER_OPTION_INVALID'],
    [{ type: 'levenshtein', value: 'a', max_distance: 0.5 }, undefined, 'SCORER_OPTION_INVALID'],
    [{ type: 'levenshtein' }, ['a'], 'SCORER_EXPECTED_INVALID'],
  ])('refuses %j (expected %j) with %s', (spec, expected, code) => {
    expect(refusal(spec, expected)).toContainEqual(expect.objectContaining({ code }));
  });
});
