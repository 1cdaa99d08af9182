import { parseSuiteYaml } from './suite.parser';
import { validateSuite } from './suite.validator';
import { yamlNestingExceeds } from './yaml-depth';

const suite = (over: Record<string, unknown> = {}, caseOver: Record<string, unknown> = {}) => ({
  key: 'k',
  default_scorer: { type: 'exact' },
  pass_threshold: 0.5,
  regression_threshold: 0.1,
  cases: [{ id: 'c1', input: 'q', expected: 'a', ...caseOver }],
  ...over,
});

describe('unit: text a suite cannot store, and documents nested too deeply (S4, issue 16)', () => {
  it.each([
    ['a NUL in the description', suite({ description: 'a\u0000b' }), 'description', /NUL character/],
    ['a NUL in an input', suite({}, { input: 'q\u0000' }), 'cases[0].input', /NUL character/],
    ['a lone high surrogate in an expected value', suite({}, { expected: 'a\ud800' }), 'cases[0].expected', /lone surrogate/],
    ['a lone low surrogate deep in an input', suite({}, { input: { ticket: ['x', '\udc00y'] } }), 'cases[0].input.ticket[1]', /lone surrogate/],
    ['a NUL in a key of an input', suite({}, { input: { 'a\u0000': 'x', b: 'y' } }), 'cases[0].input', /a key contains a NUL/],
  ])('%s is refused with VALUE_NOT_JSON naming the field', (_name, raw, field, message) => {
    const r = validateSuite(raw, 'body');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors[0]).toMatchObject({ code: 'VALUE_NOT_JSON', field });
    expect(r.errors[0]!.message).toMatch(message);
  });

  it('surrogate pairs (emoji) and other control characters are ordinary text', () => {
    expect(validateSuite(suite({ description: 'ok \ud83d\ude00 \u0001' }, { input: 'tab\there \ud83d\udc4d' }), 'body').ok).toBe(true);
  });

  it.each([
    ['flow sequences', '['.repeat(100_000)],
    ['flow mappings', '{"a":'.repeat(50_000) + '1' + '}'.repeat(50_000)],
    ['block sequences', '- '.repeat(20_000) + 'x'],
    ['block mappings', Array.from({ length: 3000 }, (_, i) => `${' '.repeat(i)}k:`).join('\n')],
  ])('YAML nested too deeply (%s): one plain problem, found before parsing, no engine message', (_name, text) => {
    const r = parseSuiteYaml(text, 'deep.yaml');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatchObject({ code: 'YAML_UNSUPPORTED', file: 'deep.yaml' });
    expect(r.errors[0]!.message).toBe('the document is nested more than 128 levels deep');
    expect(JSON.stringify(r)).not.toMatch(/call stack|RangeError/i);
  });

  it('the nesting estimate skips quoted scalars, comments and block scalars, and counts compact sequences', () => {
    const levels = (n: number) => Array.from({ length: n }, (_, i) => `${' '.repeat(i * 2)}k${i}:`).join('\n') + ' x';
    expect([yamlNestingExceeds(levels(120)), yamlNestingExceeds(levels(140))]).toEqual([false, true]);
    expect([yamlNestingExceeds(`${'- '.repeat(100)}x`), yamlNestingExceeds(`${'- '.repeat(130)}x`)]).toEqual([false, true]);
    expect(yamlNestingExceeds(`a: ${'['.repeat(130)}`)).toBe(true);
    for (const text of [`a: "${'['.repeat(500)}"`, `a: '${'{'.repeat(500)}'`, `a: don't ${'['.repeat(5)}`, `r: |\n  ${'['.repeat(500)}\n  more\nb: 1`, `r: >-\n  ${'{'.repeat(500)}`, `a: 1 # ${'['.repeat(500)}`]) {
      expect(yamlNestingExceeds(text)).toBe(false);
    }
  });
});
