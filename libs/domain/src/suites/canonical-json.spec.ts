import fc from 'fast-check';
import { canonicalJson } from './canonical-json';

describe('canonicalJson', () => {
  it('sorts keys recursively and writes no whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}');
  });

  it('writes numbers in their shortest round-trip form', () => {
    expect(canonicalJson([1.0, 1e0, 10e-1, -0, 0.1, 1e21, 1e-7, 123456789012, 2 ** 53])).toBe(
      '[1,1,1,0,0.1,1e+21,1e-7,123456789012,9007199254740992]',
    );
  });

  it('escapes strings like JSON.stringify and does not normalise Unicode', () => {
    expect(canonicalJson('a"b\\\n\u0001é')).toBe('"a\\"b\\\\\\n\\u0001é"');
    expect(canonicalJson('e\u0301')).not.toBe(canonicalJson('é'));
  });

  it('sorts keys by UTF-16 code units', () => {
    expect(canonicalJson({ b: 1, B: 2, é: 3, a: 4, '\u{1F600}': 5, '\uFB01': 6 })).toBe('{"B":2,"a":4,"b":1,"é":3,"\u{1F600}":5,"\uFB01":6}');
  });

  it('omits undefined properties, as JSON does', () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
  });

  it.each([[Number.NaN], [Number.POSITIVE_INFINITY], [[undefined]], [10n], [new Date(0)], [() => 1], [new Map()]])('refuses %p', (value) => {
    expect(() => canonicalJson(value)).toThrow(expect.objectContaining({ code: 'CANONICAL_JSON_UNSUPPORTED' }));
  });

  it('is independent of key order and parses back to the same value (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        const reordered = JSON.parse(JSON.stringify(value, (_k, v: unknown) =>
          v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v,
        )) as unknown;
        expect(canonicalJson(reordered)).toBe(text);
        expect(canonicalJson(JSON.parse(text))).toBe(text);
      }),
    );
  });
});
