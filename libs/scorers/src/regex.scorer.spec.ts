import { findUnsupportedConstruct, regexScorer } from './regex.scorer';
import { compile, outcome, refusal } from './test-helpers';

describe('regex scorer (S1, S2)', () => {
  it('has its spec name, a version and its option keys (S4)', () => {
    expect(regexScorer.name).toBe('regex');
    expect(regexScorer.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(regexScorer.options).toEqual(['pattern', 'flags']);
  });

  describe('S1: pattern matches somewhere, unanchored unless the pattern anchors', () => {
    it.each<[string, string | undefined, string, boolean]>([
      ['refund', undefined, 'a refund was issued', true],
      ['^refund', undefined, 'a refund was issued', false],
      ['^a refund', undefined, 'a refund was issued', true],
      ['issued$', undefined, 'a refund was issued', true],
      ['issued$', undefined, 'a refund was issued\n', false], // RE2: $ is the very end without m
      ['issued\\n?$', undefined, 'a refund was issued\n', true],
      ['\\Aa\\b', undefined, 'a refund', true],
      ['^\\d{3}-\\d{4}$', undefined, '555-1234', true],
      ['^\\d+$', undefined, '١٢٣', false], // \d is ASCII in RE2
      ['\\p{Nd}+', undefined, '١٢٣', true], // Unicode classes work
      ['x*', undefined, '', true], // may match the empty output
      ['.', undefined, '', false],
      ['^$', undefined, '', true],
      ['a.c', undefined, 'a\nc', false], // . excludes \n without s
      ['\\x{1F600}', undefined, 'smile 😀', true],
      ['(?i)REFUND', undefined, 'a refund', true], // inline flags
      ['(?P<n>\\d+) items', undefined, '12 items', true], // named groups, RE2 spelling
      ['(?<n>\\d+) items', undefined, '12 items', true], // ... and the JS spelling
      // flags
      ['REFUND', 'i', 'a refund', true],
      ['REFUND', '', 'a refund', false],
      ['^b$', undefined, 'a\nb\nc', false],
      ['^b$', 'm', 'a\nb\nc', true],
      ['a.c', 's', 'a\nc', true],
      ['^A.C$', 'ims', 'x\na\nc\ny', true],
      ['SS', 'i', 'straße', false], // RE2 simple case folding: ß is not SS (unlike ignore_case)
      ['k', 'i', '\u212a', true], // but Kelvin sign folds to k
    ])('/%s/%s on %j -> %s', (pattern, flags, output, passed) => {
      const spec = flags === undefined ? { type: 'regex', pattern } : { type: 'regex', pattern, flags };
      expect(outcome(compile(spec), output)).toEqual(passed ? [true, 'match'] : [false, 'no_match']);
    });

    it('matches across lone surrogates and NUL bytes without throwing (S5)', () => {
      const s = compile({ type: 'regex', pattern: 'b' });
      expect(s.score('\ud800\u0000b\udc00').passed).toBe(true);
      expect(s.score('\ud800\u0000\udc00').passed).toBe(false);
    });
  });

  describe('S2: linear time, and what RE2 cannot take is refused at validation', () => {
    it('(a+)+$ on 50 000 a then b does not match, and 5x the input takes far less than 25x the time', () => {
      const scorer = compile({ type: 'regex', pattern: '(a+)+$' });
      const small = `${'a'.repeat(50_000)}b`;
      const large = `${'a'.repeat(250_000)}b`;
      // Best of several runs each, after a warm-up: robust to a noisy 2-core machine.
      const best = (s: string): number => {
        let min = Infinity;
        for (let k = 0; k < 7; k++) {
          const t0 = process.hrtime.bigint();
          expect(scorer.score(s)).toEqual({ score: 0, passed: false, label: 'no_match' });
          min = Math.min(min, Number(process.hrtime.bigint() - t0));
        }
        return min;
      };
      best(small);
      const tSmall = best(small);
      const tLarge = best(large);
      // Linear growth gives a ratio near 5; a backtracking engine would not finish at all. 20 leaves room
      // for noise, and a floor on tSmall keeps timer granularity from inflating the ratio.
      expect(tLarge / Math.max(tSmall, 200_000)).toBeLessThan(20);
    }, 60_000);

    it.each<[string, string]>([
      ['(a)\\1', 'back reference'],
      ['(?P<x>a)\\k<x>', 'back reference'],
      ['(?=a)', 'look-ahead'],
      ['a(?!b)', 'negative look-ahead'],
      ['(?<=a)b', 'look-behind'],
      ['(?<!a)b', 'negative look-behind'],
      ['(?>a+)b', 'atomic group'],
      ['a++', 'possessive quantifier'],
      ['a{2}+', 'possessive quantifier'],
    ])('refuses %s with REGEX_UNSUPPORTED naming the %s', (pattern, construct) => {
      const issues = refusal({ type: 'regex', pattern });
      expect(issues).toHaveLength(1);
      expect(issues[0]).toMatchObject({ code: 'REGEX_UNSUPPORTED', field: 'pattern' });
      expect(issues[0]?.message).toContain(construct);
    });

    it.each<[string]>([['['], ['a{1001}'], ['(a'], ['*a'], ['a**']])('refuses the malformed %j with REGEX_INVALID', (pattern) => {
      expect(refusal({ type: 'regex', pattern })).toEqual([expect.objectContaining({ code: 'REGEX_INVALID', field: 'pattern' })]);
    });

    it('does not mistake escaped or bracketed syntax for unsupported constructs', () => {
      expect(findUnsupportedConstruct('\\(?=a\\)')).toBeUndefined();
      expect(findUnsupportedConstruct('[(?=]')).toBeUndefined();
      expect(findUnsupportedConstruct('[]\\1]')).toBeUndefined();
      expect(findUnsupportedConstruct('(?<name>a)')).toBeUndefined();
      expect(findUnsupportedConstruct('a+?')).toBeUndefined();
      expect(compile({ type: 'regex', pattern: '\\(\\?=a\\)' }).score('(?=a)').passed).toBe(true);
    });
  });

  describe('S4: options are validated', () => {
    it.each<[Record<string, unknown>, string, string]>([
      [{ type: 'regex' }, 'SCORER_OPTION_MISSING', 'pattern'],
      [{ type: 'regex', pattern: '' }, 'SCORER_OPTION_INVALID', 'pattern'],
      [{ type: 'regex', pattern: 42 }, 'SCORER_OPTION_INVALID', 'pattern'],
      [{ type: 'regex', pattern: 'a', flags: 'g' }, 'SCORER_OPTION_INVALID', 'flags'],
      [{ type: 'regex', pattern: 'a', flags: 'u' }, 'SCORER_OPTION_INVALID', 'flags'],
      [{ type: 'regex', pattern: 'a', flags: 'ii' }, 'SCORER_OPTION_INVALID', 'flags'],
      [{ type: 'regex', pattern: 'a', flags: ['i'] }, 'SCORER_OPTION_INVALID', 'flags'],
      [{ type: 'regex', pattern: 'a', options: { flags: 'i' } }, 'SCORER_OPTION_UNKNOWN', 'options'],
    ])('%j -> %s on %s', (spec, code, field) => {
      expect(refusal(spec)).toContainEqual(expect.objectContaining({ code, field }));
    });

    it('keeps the compiled pattern and normalized flags in the typed config', () => {
      const result = regexScorer.validate({ pattern: '^a', flags: 'si' }, {});
      expect(result.ok).toBe(true);
      if (result.ok) {
        expect(result.config.flags).toBe('is');
        expect(result.config.compiled.test('A')).toBe(true);
      }
    });

    it('the empty flags string means no flags', () => {
      expect(compile({ type: 'regex', pattern: 'A', flags: '' }).score('a').passed).toBe(false);
    });
  });
});
