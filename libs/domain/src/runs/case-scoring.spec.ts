import { compileSuite, missingOutputEvidence, scoreCase, SuiteCompileError } from './case-scoring';
import { detailHash } from './detail-hash';

const suite = {
  suite_key: 'support',
  version: 1,
  default_scorer: { type: 'contains', value: 'refund' },
  cases: [
    { case_id: 'a', expected: null, scorer: null },
    { case_id: 'b', expected: 'Paris', scorer: { type: 'exact', trim: true } },
    { case_id: 'j', expected: null, scorer: { type: 'llm_judge', rubric: 'Is it polite?' } },
  ],
};
const ctx = { runId: 'r1', hmacSecret: 's'.repeat(32), scoredAt: '2026-11-30T00:00:00.000Z' };

describe('unit: scoring a case into evidence (R1, R3, D1, D2)', () => {
  const compiled = compileSuite(suite);

  it('compiles each case with its own scorer or the default, and records scorer versions', () => {
    expect(compiled.cases.get('a')!.scorer.name).toBe('contains');
    expect(compiled.cases.get('b')!.scorer.name).toBe('exact');
    expect(Object.keys(compiled.scorer_versions).sort()).toEqual(['contains', 'exact', 'llm_judge']);
  });

  it('keeps only score, verdict, label, the keyed hash and the length - never the output (D1, D2)', () => {
    const output = 'We will refund you. CANARY-123 jane@example.com';
    const e = scoreCase(compiled.cases.get('a')!, output, ctx);
    expect(e).toMatchObject({ run_id: 'r1', case_id: 'a', passed: true, score: 1, output_chars: output.length });
    expect(e.detail_hash).toBe(detailHash(ctx.hmacSecret, output));
    expect(JSON.stringify(e)).not.toContain('CANARY-123');
    expect(scoreCase(compiled.cases.get('b')!, ' Paris\n', ctx)).toMatchObject({ passed: true, label: 'match' });
    expect(scoreCase(compiled.cases.get('b')!, 'Lyon', ctx)).toMatchObject({ passed: false, score: 0 });
  });

  it('takes the keyed hash from the caller when given one (made once, by the ingestion), else computes it', () => {
    const output = 'a refund';
    const given = 'f'.repeat(64);
    expect(scoreCase(compiled.cases.get('a')!, output, ctx, given)).toEqual({ ...scoreCase(compiled.cases.get('a')!, output, ctx), detail_hash: given });
    expect(scoreCase(compiled.cases.get('j')!, output, ctx, given).detail_hash).toBe(given);
    expect(scoreCase(compiled.cases.get('a')!, output, ctx, undefined).detail_hash).toBe(detailHash(ctx.hmacSecret, output));
  });

  it('gives the same evidence, key order included, for every case of a repeated label (labels are redacted once)', () => {
    const first = scoreCase(compiled.cases.get('b')!, 'Lyon', ctx);
    const again = scoreCase(compiled.cases.get('b')!, 'Lyon', ctx);
    expect(JSON.stringify(again)).toBe(JSON.stringify(first));
    expect(Object.keys(first)).toEqual(['run_id', 'case_id', 'scorer', 'scorer_version', 'detail_hash', 'output_chars', 'scored_at', 'score', 'passed', 'label']);
  });

  it('fails a judge case while no judge is configured: never a silent pass', () => {
    expect(scoreCase(compiled.cases.get('j')!, 'thank you', ctx)).toMatchObject({ passed: false, label: 'judge_not_configured' });
  });

  it('fails a case with no output as missing_output (R1)', () => {
    expect(missingOutputEvidence(compiled.cases.get('a')!, ctx)).toMatchObject({ passed: false, score: 0, label: 'missing_output', detail_hash: null });
  });

  it('refuses to compile a stored suite whose scorer config no longer validates', () => {
    expect(() => compileSuite({ ...suite, cases: [{ case_id: 'x', expected: null, scorer: { type: 'regex', pattern: '(a)\\1' } }] })).toThrow(SuiteCompileError);
  });
});
