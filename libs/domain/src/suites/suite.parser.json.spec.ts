import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import { parseDocument } from 'yaml';
import { suiteContentHash } from './suite-hash';
import { readJsonSuite } from './suite.json-reader';
import { parseSuiteYaml, parseWhole } from './suite.parser';
import type { SuiteValidation } from './suite.validator';

/**
 * Issue 15: a suite written as JSON is read by JSON.parse instead of the YAML reader. It must give exactly
 * what the YAML reader gives - the same suite, the same content hash, the same problems at the same lines
 * and columns (S4, V3) - or decline, so that the YAML reader answers.
 */

/** The whole-document YAML reader's options (suite.parser.ts), for comparing raw values. */
const YAML_OPTIONS = { prettyErrors: false, version: '1.2', schema: 'core', uniqueKeys: true, intAsBigInt: true, logLevel: 'error' } as const;

/** Compiled scorers carry functions: compare what they are, not their closures. */
function plain(v: unknown): unknown {
  return v === undefined ? undefined : JSON.parse(JSON.stringify(v));
}

/** What the validator's first pass does to numbers: safe bigints become numbers (others stay: it refuses them), -0 becomes 0. */
function normalized(v: unknown): unknown {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v;
  if (typeof v === 'number') return Object.is(v, -0) ? 0 : v;
  if (Array.isArray(v)) return v.map(normalized);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v)) Object.defineProperty(out, k, { value: normalized((v as Record<string, unknown>)[k]), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return v;
}

/**
 * Node's deep strict equality (prototypes, -0 vs 0, own keys): Jest's toStrictEqual compares the
 * `constructor` property, which a mapping with the key `constructor` has as its own value.
 */
function expectIdentical(actual: unknown, expected: unknown): void {
  if (isDeepStrictEqual(actual, expected)) return;
  expect(actual).toEqual(expected); // for the diff
  throw new Error(`not deep-strict-equal: ${String(JSON.stringify(actual))?.slice(0, 500)} vs ${String(JSON.stringify(expected))?.slice(0, 500)}`);
}

function expectSameResult(fast: SuiteValidation, yaml: SuiteValidation): void {
  expect(fast.ok).toBe(yaml.ok);
  if (fast.ok && yaml.ok) {
    expectIdentical(fast.suite, yaml.suite);
    expect(suiteContentHash(fast.suite)).toBe(suiteContentHash(yaml.suite));
    expect(plain(fast.scorers)).toEqual(plain(yaml.scorers));
  } else if (!fast.ok && !yaml.ok) {
    expectIdentical(fast.errors, yaml.errors);
  }
}

/** Through the public entry point (JSON fast path) and through the whole-document YAML reader. */
function checkBothPaths(text: string): { fast: boolean; ok: boolean } {
  const fast = parseSuiteYaml(text, 'gen.suite.json');
  const yaml = parseWhole(text, 'gen.suite.json') as SuiteValidation;
  expectSameResult(fast, yaml);
  const light = parseSuiteYaml(text, 'gen.suite.json', { scorers: false });
  const lightYaml = parseWhole(text, 'gen.suite.json', { scorers: false });
  expectIdentical(light, lightYaml);
  const raw = readJsonSuite(text);
  if (raw !== undefined) {
    // The reader only answers for text the YAML reader reads without a problem, to the same value.
    const doc = parseDocument(text, YAML_OPTIONS);
    expect(doc.errors).toEqual([]);
    expect(doc.warnings).toEqual([]);
    expectIdentical(normalized(raw), normalized(doc.toJS()));
  }
  return { fast: raw !== undefined, ok: fast.ok };
}

// --- generated JSON text, built token by token so that literals can be written as a person might ---

const oddTexts = ['', 'a', 'b', '__proto__', '<<', 'constructor', 'ü', '😀', '\u2028', '\u0085', '\ud800', '\udc00x', '\u0000', '\u007f', '1', '0', 'id', 'key', '#', ': ', '- x', '&a', '*a', '"', '\\', '\t', '\n'];
const someText = fc.oneof(fc.string({ maxLength: 12 }), fc.string({ unit: 'grapheme', maxLength: 6 }), fc.string({ unit: 'binary', maxLength: 6 }), fc.constantFrom(...oddTexts));
/** A JSON string literal, sometimes with every UTF-16 unit escaped as \uXXXX (as some writers do). */
const rawString = fc.tuple(someText, fc.integer({ min: 0, max: 3 })).map(([s, how]) =>
  how === 0 ? `"${Array.from({ length: s.length }, (_, i) => `\\u${s.charCodeAt(i).toString(16).padStart(4, '0')}`).join('')}"` : how === 1 ? JSON.stringify(s).replace(/\//g, '\\/') : JSON.stringify(s),
);
const rawKey = fc.oneof({ weight: 12, arbitrary: rawString }, { weight: 1, arbitrary: fc.constantFrom('"a"', '"\\u0061"', '"b"', '"id"', '"__proto__"', '"1"', '"0"') });
const rawNumber = fc.oneof(
  { weight: 8, arbitrary: fc.integer().map(String) },
  { weight: 4, arbitrary: fc.constantFrom('0', '-0', '-0.0', '1.0', '1e2', '1E+2', '-1e-2', '0.1', '1.5e-7', '9007199254740991', '-9007199254740991', '100000000000000000000.0', '1e400', '-1e400') },
  { weight: 4, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)) },
  // Beyond 2^53: refused by the YAML reader (bigint), rounded by JSON.parse.
  { weight: 1, arbitrary: fc.oneof(fc.constantFrom('12345678901234567890', '-9007199254740993', '9007199254740992', '123456789012345678'), fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String)) },
);
/** `arb` about once in `n` draws, else null. */
const sometimes = <T>(arb: fc.Arbitrary<T>, n: number): fc.Arbitrary<T | null> => fc.oneof({ weight: n - 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: arb });
const rawScalar = fc.oneof(rawString, rawNumber, fc.constantFrom('true', 'false', 'null'));
const { rawValue } = fc.letrec<{ rawValue: string; rawArray: string; rawObject: string }>((tie) => ({
  rawValue: fc.oneof({ depthSize: 'small', withCrossShrink: true }, rawScalar, tie('rawArray'), tie('rawObject')),
  rawArray: fc.array(tie('rawValue'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
  // Distinct as written; equal once read now and then ("a" and "\u0061"), besides the duplicates added below.
  rawObject: fc.uniqueArray(fc.tuple(rawKey, tie('rawValue')), { maxLength: 4, selector: ([k]) => k }).map((entries) => `{${entries.map(([k, v]) => `${k}:${v}`).join(',')}}`),
}));

/** Mostly valid cases (so that the fast path answers), with arbitrary inputs and now and then anything. */
const rawCase = fc
  .record({
    id: fc.oneof({ weight: 12, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.nat({ max: 3 }).map((n) => `"c${n}"`) }, { weight: 1, arbitrary: rawScalar }),
    input: fc.oneof({ weight: 3, arbitrary: rawString }, { weight: 2, arbitrary: rawValue }),
    expected: fc.oneof({ weight: 8, arbitrary: rawValue }, { weight: 1, arbitrary: fc.constant(undefined) }),
    tags: sometimes(fc.array(fc.oneof(fc.constantFrom('"t1"', '"group-2"', '"x.y:z"'), rawString), { maxLength: 3 }).map((t) => `[${t.join(',')}]`), 2),
    extra: sometimes(fc.tuple(rawKey, rawValue), 8),
  })
  .map(({ id, input, expected, tags, extra }) => {
    const entries = [`"id":${id}`, `"input":${input}`]; // '' = a unique id, filled in by the suite
    if (expected !== undefined) entries.push(`"expected":${expected}`);
    if (tags !== null) entries.push(`"tags":${tags}`);
    if (extra !== null) entries.push(`${extra[0]}:${extra[1]}`);
    return `{${entries.join(',')}}`;
  });

const rawSuite = fc
  .record({
    key: fc.oneof({ weight: 6, arbitrary: fc.constant('"gen-suite"') }, { weight: 1, arbitrary: rawScalar }),
    scorer: fc.oneof({ weight: 8, arbitrary: fc.constant('{"type":"json_equal"}') }, { weight: 1, arbitrary: fc.constantFrom('{"type":"exact","trim":true}', '{"type": "contains", "value": "x"}', '{"type":"exact","type":"exact"}') }),
    pass: fc.oneof({ weight: 6, arbitrary: fc.constantFrom('0.8', '1', '0', '1.0', '8e-1', '-0') }, { weight: 1, arbitrary: rawNumber }),
    regression: fc.constantFrom('0.05', '0', '5e-2', '1'),
    description: sometimes(rawString, 2),
    cases: fc.array(rawCase, { minLength: 1, maxLength: 6 }),
    extra: sometimes(fc.tuple(rawKey, rawValue), 6),
    duplicateTop: sometimes(fc.constantFrom('"key":"gen-suite"', '"\\u006bey":"gen-suite"', '"pass_threshold":0.8'), 8),
  })
  .map(({ key, scorer, pass, regression, description, cases, extra, duplicateTop }) => {
    const entries = [`"key":${key}`, `"default_scorer":${scorer}`, `"pass_threshold":${pass}`, `"regression_threshold":${regression}`];
    if (description !== null) entries.push(`"description":${description}`);
    if (extra !== null) entries.push(`${extra[0]}:${extra[1]}`);
    if (duplicateTop !== null) entries.push(duplicateTop);
    entries.push(`"cases":[${cases.map((c, i) => c.replace('"id":,', `"id":"case-${i}",`)).join(',')}]`);
    return `{${entries.join(',')}}`;
  });

const WHITESPACE = ['', ' ', '\n', '  ', '\r\n', '\t', '\n    ', '\n\n'];

/** Whitespace between tokens (outside strings), chosen by `seed`. */
function spaced(compact: string, seed: number): string {
  let s = seed >>> 0;
  const pick = (): string => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return WHITESPACE[(s >>> 16) % WHITESPACE.length]!;
  };
  let out = '';
  let inString = false;
  for (let i = 0; i < compact.length; i++) {
    const c = compact[i]!;
    if (inString) {
      out += c;
      if (c === '\\') out += compact[++i];
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    if (c === '}' || c === ']' || c === ':' || c === ',') out += pick();
    out += c;
    if (c === '{' || c === '[' || c === ':' || c === ',') out += pick();
  }
  return out;
}

const jsonText = fc
  .record({
    suite: rawSuite,
    seed: fc.integer(),
    prefix: fc.constantFrom('', '\uFEFF', '\n', '  ', '\uFEFF\n ', '\t', '\r\n'),
    suffix: fc.constantFrom('', '\n', '\n\n  ', '\r\n'),
    mutation: sometimes(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom('', '}', ',', '"', ':', '1', 'x', '\n', '#', '&a ', '*a', '\t', ' - ', '{', ']', '\\')), 5),
  })
  .map(({ suite, seed, prefix, suffix, mutation }) => {
    let text = prefix + spaced(suite, seed) + suffix;
    if (mutation !== null) {
      const at = Math.floor(mutation[0] * text.length);
      text = mutation[1] === '' ? text.slice(0, at) : text.slice(0, at) + mutation[1] + text.slice(at);
    }
    return text;
  });

/** Valid suites, mostly: any JSON values (fc.jsonValue: -0, unicode, nesting) as inputs and expected values. */
const validJsonText = fc
  .record({
    cases: fc.array(fc.record({
      input: fc.oneof(fc.string({ unit: 'grapheme', minLength: 1 }), fc.dictionary(fc.string({ minLength: 1 }), fc.jsonValue({ maxDepth: 2 }), { minKeys: 1 })),
      // Not a string: json_equal reads a string `expected` as JSON text.
      expected: fc.oneof(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 })), fc.array(fc.jsonValue({ maxDepth: 2 })), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.boolean()), tags: fc.array(fc.constantFrom('t1', 'group-2', 'x.y:z'), { maxLength: 2 }) }), { minLength: 1, maxLength: 8 }),
    indent: fc.constantFrom(undefined, 2, 4, '\t'),
    seed: fc.integer(),
    crlf: fc.boolean(),
    bom: fc.boolean(),
  })
  .map(({ cases, indent, seed, crlf, bom }) => {
    const suite = { key: 'gen-suite', default_scorer: { type: 'json_equal' }, pass_threshold: 0.8, regression_threshold: 0.05, cases: cases.map((c, i) => ({ id: `case-${i}`, input: c.input, expected: c.expected, tags: [...new Set(c.tags)] })) };
    let text = indent === undefined ? spaced(JSON.stringify(suite), seed) : JSON.stringify(suite, null, indent);
    if (crlf) text = text.replace(/\r?\n/g, '\r\n');
    return (bom ? '\uFEFF' : '') + text;
  });

describe('a JSON suite is read natively, with exactly the YAML reader answers (issue 15, S4, V3)', () => {
  it('generated suites - valid and invalid, duplicate keys, big integers, -0, unicode, nesting - give the same results both ways', () => {
    const seen = { fast: 0, valid: 0, fastValid: 0, runs: 0 };
    fc.assert(
      fc.property(jsonText, (text) => {
        const r = checkBothPaths(text);
        seen.runs++;
        if (r.fast) seen.fast++;
        if (r.ok) seen.valid++;
        if (r.fast && r.ok) seen.fastValid++;
      }),
      { numRuns: 300 },
    );
    if (process.env['JSON_SPEC_DEBUG']) console.log(seen);
    // The property must exercise both the fast path and the fallback (valid suites: the next property).
    expect(seen.fast).toBeGreaterThan(seen.runs / 5);
    expect(seen.fast).toBeLessThan(seen.runs);
  });

  it('generated valid suites (any JSON values as inputs and expected values) are read natively, to the same suite and hash', () => {
    const seen = { fastValid: 0, runs: 0 };
    fc.assert(
      fc.property(validJsonText, (text) => {
        const r = checkBothPaths(text);
        seen.runs++;
        if (r.fast && r.ok) seen.fastValid++;
      }),
      { numRuns: 120 },
    );
    if (process.env['JSON_SPEC_DEBUG']) console.log(seen);
    expect(seen.fastValid).toBeGreaterThan(seen.runs / 3);
  });

  it('a key written twice (also as an escape) is refused as the YAML reader refuses it, with its line and column', () => {
    for (const text of ['{"key": "a", "key": "b", "cases": []}', '{\n  "key": "a",\n  "k\\u0065y": "a"\n}', '{"key":"s","default_scorer":{"type":"exact"},"cases":[{"id":"c1","input":"x","input":"y"}]}']) {
      expect(readJsonSuite(text)).toBeUndefined();
      const result = parseSuiteYaml(text, 'dup.suite.json');
      expect(result.ok).toBe(false);
      if (result.ok) continue;
      expect(result.errors.some((e) => /unique/i.test(e.message) && typeof e.line === 'number' && typeof e.column === 'number')).toBe(true);
      expect(result).toEqual(parseWhole(text, 'dup.suite.json'));
    }
  });

  it('an integer beyond 2^53 falls back to the YAML reader and is refused, not rounded', () => {
    const text = '{"key":"s","default_scorer":{"type":"json_equal"},"cases":[{"id":"c1","input":"x","expected":{"n":12345678901234567890}}]}';
    expect(readJsonSuite(text)).toBeUndefined();
    const result = parseSuiteYaml(text, 'big.suite.json');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors.map((e) => e.code)).toContain('VALUE_IMPRECISE');
    expect(readJsonSuite(text.replace('12345678901234567890', '9007199254740991'))).toBeDefined();
  });

  it('-0, floats, escapes and non-ASCII text: read natively, the same suite and hash as through YAML', () => {
    const text = '\uFEFF{"key":"s","default_scorer":{"type":"json_equal"},"pass_threshold":0.8,"regression_threshold":0.05,"cases":[{"id":"c1","input":"caf\\u00e9 😀 \\/ \\t","expected":{"a":-0,"b":-0.0,"c":1.0,"d":1e2,"e":[0.1,-1E-2],"__x":"ü"}}]}\n';
    expect(readJsonSuite(text)).toBeDefined();
    const result = parseSuiteYaml(text, 'n.suite.json');
    expect(result.ok).toBe(true);
    if (result.ok) expect(Object.is((result.suite.cases[0]!.expected as Record<string, unknown>)['a'], 0)).toBe(true);
    checkBothPaths(text);
  });

  it('a suite with problems is answered by the YAML reader (positions from its syntax tree)', () => {
    const text = '{\n  "key": "s",\n  "default_scorer": {"type": "json_equal"},\n  "pass_threshold": 0.8,\n  "regression_threshold": 0.05,\n  "cases": [\n    {"id": "c1", "input": "x", "expected": 1, "colour": "red"}\n  ]\n}\n';
    expect(readJsonSuite(text)).toBeDefined();
    const result = parseSuiteYaml(text, 'p.suite.json');
    expect(result).toEqual(parseWhole(text, 'p.suite.json'));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors[0]).toMatchObject({ field: 'cases[0].colour', line: 7 });
  });

  it('1 000 cases, pretty-printed: the fast path answers, the same suite and hash as through YAML', () => {
    const suite = {
      key: 'big-json',
      default_scorer: { type: 'exact', trim: true },
      pass_threshold: 0.8,
      regression_threshold: 0.05,
      cases: Array.from({ length: 1000 }, (_, i) => ({ id: `c${i}`, input: i % 3 === 0 ? { task: 'route', ticket: `ticket ${i}`, n: i } : `question ${i}`, expected: `answer ${i}`, tags: [`group-${i % 7}`] })),
    };
    const text = JSON.stringify(suite, null, 2);
    expect(readJsonSuite(text)).toBeDefined();
    expect(checkBothPaths(text)).toEqual({ fast: true, ok: true });
  });
});
