import fc from 'fast-check';
import { checkJson } from './json';
import { jsonValidScorer } from './json-valid.scorer';
import { compile, outcome, refusal } from './test-helpers';

/** JSON.parse's verdict (V8's JSON.parse is iterative: it does not refuse deep valid JSON). */
function nativeValid(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

describe('json_valid scorer (S1)', () => {
  it('has its spec name, a version and its option keys (S4)', () => {
    expect(jsonValidScorer.name).toBe('json_valid');
    expect(jsonValidScorer.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(jsonValidScorer.options).toEqual(['require']);
  });

  describe('S1: the output is one JSON text (RFC 8259)', () => {
    it.each<[string, boolean]>([
      ['{}', true],
      ['[]', true],
      ['{"a":[1,2,{"b":null}],"c":"x"}', true],
      ['"just a string"', true], // any value may be the top level
      ['42', true],
      ['-0', true],
      ['1e400', true], // valid JSON even though no double can hold it
      ['true', true],
      ['null', true],
      [' \t\r\n{} \n', true], // the four JSON whitespace characters
      ['"\\ud800"', true], // an escaped lone surrogate (RFC 8259 8.2)
      ['"\ud800"', true], // a raw one: accepted like JSON.parse does
      ['{"a":1,"a":2}', true], // duplicate names are valid JSON
      ['', false],
      ['   ', false],
      ['\ufeff{}', false], // a BOM is not JSON whitespace
      ['\u00a0{}', false], // nor is NBSP
      ['{} {}', false],
      ['{},', false],
      ["{'a':1}", false],
      ['{a:1}', false],
      ['{"a":1,}', false],
      ['[1,]', false],
      ['[,1]', false],
      ['01', false],
      ['+1', false],
      ['.5', false],
      ['1.', false],
      ['1e', false],
      ['0x1F', false],
      ['NaN', false],
      ['Infinity', false],
      ['-', false],
      ['True', false],
      ['nul', false],
      ['"a\tb"', false], // a raw control character inside a string
      ['"\\x41"', false],
      ['"\\u12G4"', false],
      ['"unterminated', false],
      ['```json\n{}\n```', false], // a code fence is not JSON
      ['// c\n{}', false],
      ['['.repeat(100_000), false],
      ['['.repeat(100_000) + ']'.repeat(100_000), true], // deep but valid: the reader is iterative
    ])('%j -> %s', (output, valid) => {
      expect(outcome(compile({ type: 'json_valid' }), output)).toEqual(valid ? [true, 'valid_json'] : [false, 'invalid_json']);
    });
  });

  describe('S1: require demands the kind of the top-level value', () => {
    it.each<['any' | 'object' | 'array', string, boolean, string]>([
      ['any', '1', true, 'valid_json'],
      ['object', '{"a":1}', true, 'valid_json'],
      ['object', '[{"a":1}]', false, 'wrong_json_type'],
      ['object', '"{}"', false, 'wrong_json_type'],
      ['object', '{', false, 'invalid_json'], // invalid beats wrong type
      ['array', '[]', true, 'valid_json'],
      ['array', ' [1] ', true, 'valid_json'],
      ['array', '{"a":[]}', false, 'wrong_json_type'],
      ['array', 'null', false, 'wrong_json_type'],
    ])('require %s, %j -> passed %s (%s)', (require, output, passed, label) => {
      expect(outcome(compile({ type: 'json_valid', require }), output)).toEqual([passed, label]);
    });
  });

  describe('S1: agrees with JSON.parse (which implements the same grammar) on any text', () => {
    it('valid JSON of any shape, pretty-printed or not', () => {
      fc.assert(
        fc.property(fc.jsonValue(), fc.constantFrom(undefined, 0, 2, '\t'), (value, indent) => {
          const text = JSON.stringify(value, null, indent);
          expect(checkJson(text).valid).toBe(true);
        }),
      );
    });

    it('arbitrary strings built from JSON-ish characters', () => {
      const alphabet = fc.constantFrom(...'{}[]:,"\\/ \t\n\r0123456789-+.eEtrufalsn\u0000\ufeffu'.split(''));
      fc.assert(
        fc.property(fc.array(alphabet, { maxLength: 24 }).map((cs) => cs.join('')), (text) => {
          expect(checkJson(text).valid).toBe(nativeValid(text));
        }),
        { numRuns: 5000 },
      );
    });

    it('valid JSON with one character changed', () => {
      fc.assert(
        fc.property(fc.json(), fc.nat(), fc.string({ minLength: 1, maxLength: 1, unit: 'binary' }), (text, at, ch) => {
          const i = at % (text.length + 1);
          const mutated = text.slice(0, i) + ch + text.slice(i + 1);
          expect(checkJson(mutated).valid).toBe(nativeValid(mutated));
        }),
        { numRuns: 2000 },
      );
    });
  });

  it('S4: refuses an unknown require and unknown options', () => {
    expect(refusal({ type: 'json_valid', require: 'string' })).toEqual([expect.objectContaining({ code: 'SCORER_OPTION_INVALID', field: 'require' })]);
    expect(refusal({ type: 'json_valid', strict: true })).toEqual([expect.objectContaining({ code: 'SCORER_OPTION_UNKNOWN', field: 'strict' })]);
  });
});
