import { exactScorer } from './exact.scorer';
import { compile, outcome, refusal } from './test-helpers';

describe('exact scorer (S1)', () => {
  it('has its spec name, a version and its option keys (S4)', () => {
    expect(exactScorer.name).toBe('exact');
    expect(exactScorer.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(exactScorer.options).toEqual(['trim', 'ignore_case']);
  });

  describe('S1: output equals expected, code unit for code unit by default', () => {
    it.each<[string, string, boolean, string]>([
      ['hello', 'hello', true, 'match'],
      ['hello', 'hello ', false, 'mismatch'],
      ['hello', ' hello', false, 'mismatch'],
      ['hello', 'Hello', false, 'mismatch'],
      ['', '', true, 'match'],
      ['', ' ', false, 'mismatch'],
      ['a\nb', 'a\r\nb', false, 'mismatch'], // no line-ending normalization
      ['é', 'e\u0301', false, 'mismatch'], // no Unicode normalization
      ['a\u0000b', 'a\u0000b', true, 'match'],
      ['\ud800', '\ud800', true, 'match'], // lone surrogate compares as data
    ])('expected %j, output %j -> passed %s (%s)', (expected, output, passed, label) => {
      expect(outcome(compile({ type: 'exact' }, expected), output)).toEqual([passed, label]);
    });
  });

  describe('S1: trim removes surrounding whitespace from both sides', () => {
    it.each<[string, string, boolean]>([
      ['hello', '  hello\n', true],
      ['hello\n', 'hello', true], // a YAML block scalar's trailing newline
      ['hello', '\u00a0hello\u3000', true], // String.prototype.trim: Unicode spaces
      ['hello', '\ufeffhello', true], // and the BOM
      ['hello', 'hel lo', false], // never inside
      ['', '   \t\n', true],
    ])('expected %j, output %j -> %s', (expected, output, passed) => {
      expect(compile({ type: 'exact', trim: true }, expected).score(output).passed).toBe(passed);
    });
  });

  describe('S1: ignore_case is Unicode full case folding (Unicode 14.0, C + F, no locale)', () => {
    it.each<[string, string, boolean]>([
      ['hello', 'HeLLo', true],
      ['straße', 'STRASSE', true], // ß folds to ss
      ['STRASSE', 'straße', true],
      ['straße', 'STRAẞE', true], // capital sharp s too
      ['straße', 'STRASE', false],
      ['ΣΑΣ', 'σας', true], // final sigma folds to sigma
      ['Ǆ', 'ǅ', true], // titlecase digraph
      ['K', '\u212a', true], // Kelvin sign
      ['𐐀', '𐐨', true], // Deseret (astral)
      ['Ꭰ', 'ꭰ', true], // Cherokee
      // Turkish i, without a locale: I -> i, İ -> i + U+0307, ı does not fold.
      ['i', 'I', true],
      ['ı', 'I', false],
      ['ı', 'i', false],
      ['i', 'İ', false],
      ['i\u0307', 'İ', true],
      ['é', 'É', true],
      ['é', 'E\u0301', false], // no normalization
    ])('expected %j vs output %j -> %s', (expected, output, passed) => {
      expect(compile({ type: 'exact', ignore_case: true }, expected).score(output).passed).toBe(passed);
    });

    it('without ignore_case, STRASSE and straße differ', () => {
      expect(outcome(compile({ type: 'exact' }, 'straße'), 'STRASSE')).toEqual([false, 'mismatch']);
    });

    it('combines with trim', () => {
      expect(compile({ type: 'exact', trim: true, ignore_case: true }, ' Straße\n').score('STRASSE  ').passed).toBe(true);
    });
  });

  describe('S4: config is validated when the suite version is created', () => {
    it('refuses a missing expected', () => {
      expect(refusal({ type: 'exact' })).toEqual([expect.objectContaining({ code: 'SCORER_EXPECTED_MISSING', field: 'expected' })]);
    });

    it.each<[unknown]>([[42], [true], [null], [['a']], [{ a: 1 }]])('refuses a non-string expected %j', (expected) => {
      expect(refusal({ type: 'exact' }, expected)).toEqual([expect.objectContaining({ code: 'SCORER_EXPECTED_INVALID', field: 'expected' })]);
    });

    it('refuses non-boolean options and unknown keys, naming each field', () => {
      const issues = refusal({ type: 'exact', trim: 'yes', ignore_case: 1, ignorecase: true }, 'x');
      expect(issues.map((i) => [i.code, i.field])).toEqual([
        ['SCORER_OPTION_UNKNOWN', 'ignorecase'],
        ['SCORER_OPTION_INVALID', 'trim'],
        ['SCORER_OPTION_INVALID', 'ignore_case'],
      ]);
    });

    it('the message never quotes expected (D4)', () => {
      const issues = refusal({ type: 'exact', trim: 'no' }, 12345);
      for (const i of issues) expect(i.message).not.toContain('12345');
    });
  });
});
