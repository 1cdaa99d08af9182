import fc from 'fast-check';
import { CASE_FOLDING, CASE_FOLDING_UNICODE_VERSION, foldCase } from './case-folding';
import { CASE_FOLDING_MAPPING_COUNT } from './case-folding.data';

const hex = (s: string) => [...s].map((c) => (c.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')).join(' ');

describe('Unicode full case folding, the ignore_case rule of exact / contains / not_contains (S1)', () => {
  it('is the pinned Unicode 14.0.0 table (C + F statuses), complete', () => {
    expect(CASE_FOLDING_UNICODE_VERSION).toBe('14.0.0');
    expect(CASE_FOLDING.size).toBe(CASE_FOLDING_MAPPING_COUNT);
    expect(CASE_FOLDING.size).toBe(1530);
  });

  it.each<[string, string]>([
    ['HeLLo', 'hello'],
    ['Straße', 'strasse'],
    ['STRASSE', 'strasse'],
    ['ẞ', 'ss'],
    ['ΣΑΣ', 'σασ'],
    ['σας', 'σασ'], // final sigma folds to sigma, no context rule
    ['ΐ', 'ι\u0308\u0301'], // F: one code point to three
    ['ﬁ', 'fi'],
    ['I', 'i'],
    ['ı', 'ı'], // dotless i does not fold (no Turkic mappings)
    ['İ', 'i\u0307'],
    ['\u212a', 'k'], // Kelvin sign
    ['ǅ', 'ǆ'],
    ['ꭰ', 'Ꭰ'], // Cherokee folds to the capital (stability)
    ['𐐀', '𐐨'], // astral
    ['\ud800X\udc00', '\ud800x\udc00'], // lone surrogates pass through
    ['a\u0000B', 'a\u0000b'],
    ['é', 'é'],
    ['E\u0301', 'e\u0301'], // no normalization
    ['', ''],
  ])('%j folds to %j', (input, folded) => {
    expect(hex(foldCase(input))).toBe(hex(folded));
  });

  it('agrees with the simple case folding of /iu regexes (Node ICU) on every one-code-point mapping', () => {
    let checked = 0;
    for (const [from, to] of CASE_FOLDING) {
      if ([...to].length !== 1) continue;
      const escaped = `\\u{${(to.codePointAt(0) as number).toString(16)}}`;
      expect({ from: hex(from), ok: new RegExp(`^${escaped}$`, 'iu').test(from) }).toEqual({ from: hex(from), ok: true });
      checked++;
    }
    expect(checked).toBeGreaterThan(1400);
  });

  it('is idempotent and total for any string, and equals toLowerCase on ASCII (S5)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }), fc.string()), (s) => {
        const once = foldCase(s);
        expect(foldCase(once)).toBe(once);
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary-ascii' }), (s) => {
        expect(foldCase(s)).toBe(s.toLowerCase());
      }),
    );
  });

  it('folds a 10 MiB string of any kind without throwing', () => {
    const mib10 = 10 * 1024 * 1024;
    expect(foldCase('É'.repeat(mib10))).toBe('é'.repeat(mib10));
    expect(foldCase('ß'.repeat(mib10 / 2)).length).toBe(mib10);
    expect(foldCase('\ud800'.repeat(mib10)).length).toBe(mib10);
  }, 60_000);
});
