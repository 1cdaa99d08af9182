/**
 * Properties every deterministic scorer holds on any candidate output (S5, D1), checked on the raw
 * scorer functions (each must be total on its own) and through the registry's compiled wrapper.
 */
import fc from 'fast-check';
import { ALL_LABELS, scorers, validateScorerSpec, type DeterministicScorerName } from './registry';
import type { ScoreResult } from './scorer';

interface Subject {
  readonly title: string;
  readonly name: DeterministicScorerName;
  readonly raw: (output: string) => ScoreResult;
  readonly compiled: (output: string) => ScoreResult;
  readonly labels: readonly string[];
}

const DEEP_OBJECT = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;

/** One configuration per option a scorer has, so every code path is exercised. */
const SPECS: readonly [Record<string, unknown> & { type: DeterministicScorerName }, unknown][] = [
  [{ type: 'exact' }, 'hello'],
  [{ type: 'exact', trim: true, ignore_case: true }, 'Straße'],
  [{ type: 'contains', value: ['a', 'ß'] }, undefined],
  [{ type: 'contains', ignore_case: true }, ['STRASSE', 'İ', '𐐀']],
  [{ type: 'not_contains', value: '\u0000' }, undefined],
  [{ type: 'not_contains', value: ['ı', 'σ'], ignore_case: true }, undefined],
  [{ type: 'regex', pattern: '(a+)+$' }, undefined],
  [{ type: 'regex', pattern: '^\\s*\\{.*\\}\\s*$', flags: 'ims' }, undefined],
  [{ type: 'regex', pattern: '\\p{L}\\d', flags: 'i' }, undefined],
  [{ type: 'json_valid' }, undefined],
  [{ type: 'json_valid', require: 'object' }, undefined],
  [{ type: 'json_valid', require: 'array' }, undefined],
  [{ type: 'json_equal' }, { a: [1, 'x', null, { b: true }], c: 1.5 }],
  [{ type: 'json_equal' }, '{"a":[1e400, -0, "\\ud800"]}'],
  [{ type: 'json_equal' }, DEEP_OBJECT],
  [{ type: 'numeric_range', min: 0, max: 10 }, undefined],
  [{ type: 'numeric_range', min: -1, extract: 'first' }, undefined],
  [{ type: 'numeric_range', max: 1e9, extract: 'whole' }, undefined],
];

const SUBJECTS: readonly Subject[] = SPECS.map(([spec, expected]) => {
  const ctx = expected === undefined ? {} : { expected };
  const entry = scorers[spec.type];
  const { type: _t, ...raw } = spec;
  void _t;
  const config = entry.validate(raw, ctx);
  const compiled = validateScorerSpec(spec, ctx);
  if (!config.ok || !compiled.ok || compiled.scorer.kind !== 'deterministic') throw new Error(`bad spec ${JSON.stringify(spec)}`);
  const scorer = compiled.scorer;
  return {
    title: JSON.stringify(spec),
    name: spec.type,
    raw: (output) => (entry.score as (o: string, c: unknown, x: object) => ScoreResult)(output, config.config, ctx),
    compiled: (output) => scorer.score(output),
    labels: entry.labels,
  };
});

/** The invariants of one result. */
function checkResult(subject: Subject, result: ScoreResult): void {
  expect(result.score === 0 || result.score === 1).toBe(true); // in [0, 1], binary (S1)
  expect(result.passed).toBe(result.score === 1);
  expect(subject.labels).toContain(result.label); // a fixed vocabulary (D1)
}

function checkAll(output: string): void {
  for (const subject of SUBJECTS) {
    const raw = subject.raw(output); // would throw out of the test if a scorer were not total
    checkResult(subject, raw);
    expect(subject.compiled(output)).toEqual(raw); // the wrapper never had to step in
  }
}

const anyString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }), // any code units, lone surrogates included
  fc.string({ unit: 'grapheme', maxLength: 60 }),
  fc.string({ unit: fc.constantFrom('a', 'A', 'ß', 'İ', 'ı', '\u0000', '\ud800', '\udc00', ' ', '\n', '1', '-', '.', 'e', '{', '}', '[', ']', '"', ':', ',') }),
  fc.json(),
  fc.jsonValue().map((v) => JSON.stringify(v, null, 2)),
  fc.double().map(String),
  fc.tuple(fc.string(), fc.double(), fc.string()).map(([a, n, b]) => `${a}${n}${b}`),
);

describe('every deterministic scorer, on any output (S5, D1)', () => {
  it('S5: never throws, returns a binary score with a matching passed, on arbitrary strings', () => {
    fc.assert(fc.property(anyString, (output) => checkAll(output)), { numRuns: 1000 });
  }, 120_000);

  it('D1: the label never carries any part of the output', () => {
    // A marker longer than any label, planted anywhere in otherwise arbitrary output.
    const marker = fc.stringMatching(/^[A-Za-z0-9_]{20,40}$/);
    fc.assert(
      fc.property(anyString, marker, anyString, (before, secret, after) => {
        const output = `${before}${secret}${after}`;
        for (const subject of SUBJECTS) {
          const result = subject.compiled(output);
          expect(ALL_LABELS.has(result.label)).toBe(true);
          expect(JSON.stringify(result)).not.toContain(secret);
        }
      }),
      { numRuns: 500 },
    );
  }, 120_000);

  it.each<[string, string]>([
    ['empty', ''],
    ['NUL bytes', '\u0000'.repeat(1000)],
    ['lone surrogates', '\ud800\udc00\udc00\ud800x\ud800'],
    ['deep unclosed arrays', '['.repeat(100_000)],
    ['deep closed arrays', '['.repeat(100_000) + ']'.repeat(100_000)],
    ['deep objects', DEEP_OBJECT],
    ['deep objects, one digit off', DEEP_OBJECT.replace('1', '2')],
    ['deep mixed, unclosed', '{"a":['.repeat(50_000)],
  ])('S5: %s', (_what, output) => {
    checkAll(output);
  }, 60_000);

  it('S5: deep nesting is read, not refused: json_valid passes and json_equal compares at depth 100 000', () => {
    const valid = SUBJECTS.find((s) => s.title === '{"type":"json_valid"}') as Subject;
    const deepEqual = SUBJECTS.find((s) => s.name === 'json_equal' && s.title === '{"type":"json_equal"}' && s.compiled(DEEP_OBJECT).passed);
    expect(valid.compiled(DEEP_OBJECT)).toEqual({ score: 1, passed: true, label: 'valid_json' });
    expect(valid.compiled('['.repeat(100_000))).toEqual({ score: 0, passed: false, label: 'invalid_json' });
    expect(deepEqual?.compiled(DEEP_OBJECT.replace('1', '2'))).toEqual({ score: 0, passed: false, label: 'not_equal' });
  }, 60_000);

  describe('S5: 10 MiB outputs', () => {
    const MIB10 = 10 * 1024 * 1024;
    it.each<[string, () => string]>([
      ['ASCII letters', () => 'a'.repeat(MIB10)],
      ['non-ASCII letters', () => 'Éß'.repeat(MIB10 / 2)],
      ['NUL bytes', () => '\u0000'.repeat(MIB10)],
      ['lone surrogates', () => '\ud800'.repeat(MIB10)],
      ['digits', () => '9'.repeat(MIB10)],
      ['a JSON array of numbers', () => `[${'1,'.repeat(MIB10 / 2 - 1)}1]`],
      ['a JSON string', () => `"${'x'.repeat(MIB10 - 2)}"`],
      ['a huge exponent', () => `1e${'9'.repeat(MIB10 - 2)}`],
      ['opening brackets', () => '['.repeat(MIB10)],
    ])('%s', (_what, make) => {
      checkAll(make());
    }, 120_000);
  });
});
