import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  ALL_LABELS,
  bindScorer,
  deterministicScorerNames,
  getScorer,
  scorerNames,
  scorers,
  validateScorerSpec,
  type CompiledScorer,
} from './registry';
import { fail, pass, type Scorer } from './scorer';
import { compile, refusal } from './test-helpers';

describe('scorer registry (S4)', () => {
  it('registers the deterministic scorers of S1 (with the promptfoo equivalents of issue 29) and llm_judge (S3)', () => {
    expect(scorerNames).toEqual([
      'exact', 'contains', 'not_contains', 'regex', 'json_valid', 'json_equal', 'numeric_range',
      'starts_with', 'contains_any', 'contains_json', 'levenshtein', 'fuzzy_match', 'all', 'not', 'llm_judge',
    ]);
    expect(deterministicScorerNames).toHaveLength(14);
    for (const name of deterministicScorerNames) expect(scorers[name].kind).toBe('deterministic');
    expect(scorers.llm_judge.kind).toBe('judge');
  });

  it('has one file per scorer, named after it, and a semver version for each', () => {
    for (const name of scorerNames) {
      const file = path.join(__dirname, `${name.replace(/_/g, '-')}.scorer.ts`);
      expect({ name, exists: fs.existsSync(file) }).toEqual({ name, exists: true });
      expect(scorers[name].name).toBe(name);
      expect(scorers[name].version).toMatch(/^\d+\.\d+\.\d+$/);
    }
  });

  it('getScorer finds by name, and nothing for unknown or inherited names', () => {
    expect(getScorer('regex')).toBe(scorers.regex);
    expect(getScorer('nope')).toBeUndefined();
    expect(getScorer('toString')).toBeUndefined();
    expect(getScorer('__proto__')).toBeUndefined();
  });

  it('every label is a short snake_case word from a fixed vocabulary (D1, D2)', () => {
    for (const label of ALL_LABELS) expect(label).toMatch(/^[a-z]+(_[a-z]+)*$/);
    for (const name of deterministicScorerNames) {
      const labels = scorers[name].labels;
      expect(new Set(labels).size).toBe(labels.length);
    }
  });

  describe('validateScorerSpec: options flat next to type', () => {
    it('compiles a deterministic spec into a bound, total score function', () => {
      const result = validateScorerSpec({ type: 'exact', trim: true }, { expected: 'ok' });
      expect(result.ok).toBe(true);
      if (!result.ok || result.scorer.kind !== 'deterministic') throw new Error('unreachable');
      expect(result.scorer).toMatchObject({ kind: 'deterministic', name: 'exact', version: scorers.exact.version });
      expect(result.scorer.score(' ok ')).toEqual({ score: 1, passed: true, label: 'match' });
      // the expected is bound at validation: a different ctx at score time does not change it
      expect(result.scorer.score('ok', { expected: 'other' }).passed).toBe(true);
    });

    it.each<[unknown, string, string]>([
      [null, 'SCORER_SPEC_INVALID', ''],
      ['exact', 'SCORER_SPEC_INVALID', ''],
      [['exact'], 'SCORER_SPEC_INVALID', ''],
      [{}, 'SCORER_UNKNOWN', 'type'],
      [{ type: 'fuzzy' }, 'SCORER_UNKNOWN', 'type'],
      [{ type: 'Exact' }, 'SCORER_UNKNOWN', 'type'],
      [{ type: 'constructor' }, 'SCORER_UNKNOWN', 'type'],
      [{ type: 3 }, 'SCORER_UNKNOWN', 'type'],
      [{ type: 'regex', pattern: 'a', options: { flags: 'i' } }, 'SCORER_OPTION_UNKNOWN', 'options'],
      [JSON.parse('{"type":"json_valid","__proto__":{"require":"array"}}'), 'SCORER_OPTION_UNKNOWN', '__proto__'],
    ])('refuses %j with %s on %j', (spec, code, field) => {
      expect(refusal(spec, 'x')).toContainEqual(expect.objectContaining({ code, field }));
    });

    it('lists every problem at once, each naming its field', () => {
      const issues = refusal({ type: 'numeric_range', min: 'a', max: [], extract: 'all', unit: 'ms' });
      expect(issues.map((i) => i.field).sort()).toEqual(['extract', 'max', 'min', 'unit']);
    });

    it('never throws, even on a spec whose properties throw when read', () => {
      const hostile = { type: 'exact' };
      Object.defineProperty(hostile, 'trim', {
        enumerable: true,
        get() {
          throw new Error('boom');
        },
      });
      expect(refusal(hostile, 'x')).toEqual([expect.objectContaining({ code: 'SCORER_SPEC_INVALID' })]);
    });

    it('the compiled union is discriminated on kind (types)', () => {
      const result = validateScorerSpec({ type: 'contains', value: 'a' }, {});
      if (result.ok) {
        const scorer: CompiledScorer = result.scorer;
        if (scorer.kind === 'deterministic') expect(scorer.score('a').passed).toBe(true);
        // @ts-expect-error config exists only on the judge variant
        expect(scorer.config).toBeUndefined();
      }
    });
  });

  describe('S5: the compiled score is the last line of defence', () => {
    const base: Omit<Scorer<object>, 'score'> = {
      kind: 'deterministic',
      name: 'exact',
      version: '0.0.0',
      options: [],
      labels: ['match', 'mismatch'],
      validate: () => ({ ok: true, config: {} }),
    };

    it('turns an exception into scorer_error', () => {
      const throwing: Scorer<object> = {
        ...base,
        score() {
          throw new RangeError('Maximum call stack size exceeded');
        },
      };
      expect(bindScorer(throwing, {}).score('x')).toEqual({ score: 0, passed: false, label: 'scorer_error' });
    });

    it.each([
      ['a label outside the vocabulary (it might quote the output, D1)', { score: 0, passed: false, label: 'secret output' }],
      ['a score above 1', { score: 2, passed: true, label: 'match' }],
      ['a NaN score', { score: NaN, passed: false, label: 'mismatch' }],
      ['passed disagreeing with the score', { score: 0, passed: true, label: 'match' }],
    ])('turns %s into scorer_error', (_what, bad) => {
      const broken: Scorer<object> = { ...base, score: () => bad };
      expect(bindScorer(broken, {}).score('x')).toEqual({ score: 0, passed: false, label: 'scorer_error' });
    });

    it('gives invalid_output for a non-string output from an untyped caller', () => {
      const scorer = compile({ type: 'exact' }, 'x');
      for (const bad of [undefined, null, 42, {}, Buffer.from('x')]) {
        expect(scorer.score(bad as unknown as string)).toEqual({ score: 0, passed: false, label: 'invalid_output' });
      }
    });

    it('passes good results through unchanged', () => {
      const fine: Scorer<object> = { ...base, score: (o) => (o === 'a' ? pass('match') : fail('mismatch')) };
      expect(bindScorer(fine, {}).score('a')).toEqual({ score: 1, passed: true, label: 'match' });
      expect(bindScorer(fine, {}).score('b')).toEqual({ score: 0, passed: false, label: 'mismatch' });
    });
  });
});
