import { JudgeError, type JudgeVerdict } from '../judge/judge.port';
import { compileSuite, judgeRequestFor, judgeSkippedEvidence, judgedCaseEvidence, scoreCase } from './case-scoring';
import { detailHash } from './detail-hash';

const suite = {
  suite_key: 'support',
  version: 1,
  default_scorer: { type: 'llm_judge', rubric: 'Offers a refund politely.', min_score: 0.7 },
  cases: [
    { case_id: 'j', input: 'Where is my money?', expected: 'a refund', scorer: null },
    { case_id: 'o', input: { order: 42, lang: 'fr' }, scorer: null },
    { case_id: 'n', input: null, expected: null, scorer: null },
    { case_id: 'x', input: 'q', expected: 'yes', scorer: { type: 'exact' } },
  ],
};
const ctx = { runId: 'r1', hmacSecret: 's'.repeat(32), scoredAt: '2026-11-30T00:00:00.000Z' };
const call = { model: 'gpt-4o-2024-08-06', promptVersion: 'judge-v1', cacheUsed: false };
const OUTPUT = 'We will refund you. CANARY-42';

function verdict(v: 'pass' | 'fail', score: number, extra: Partial<JudgeVerdict> = {}): JudgeVerdict {
  return { verdict: v, score, model: call.model, prompt_version: 'judge-v1', usage: { input_tokens: 300, output_tokens: 50 }, usage_estimated: false, cost_usd: 0.00125, cached: false, ...extra };
}

describe('unit: llm_judge cases into evidence (S3, J2, J3, D1)', () => {
  const compiled = compileSuite(suite);

  it('builds the judge request from the rubric, the task input (text, or canonical JSON) and expected as authored', () => {
    expect(judgeRequestFor(compiled.cases.get('j')!, OUTPUT)).toEqual({ output: OUTPUT, rubric: 'Offers a refund politely.', expected: 'a refund', input: 'Where is my money?' });
    expect(judgeRequestFor(compiled.cases.get('o')!, 'x')).toEqual({ output: 'x', rubric: 'Offers a refund politely.', input: '{"lang":"fr","order":42}' });
    // A JSON null expected is a value; a null input is no input.
    expect(judgeRequestFor(compiled.cases.get('n')!, 'x')).toEqual({ output: 'x', rubric: 'Offers a refund politely.', expected: null });
    expect(judgeRequestFor(compiled.cases.get('x')!, 'yes')).toBeNull();
    expect(compiled.cases.get('x')!.judge).toBeUndefined();
  });

  it('a verdict gives its score and the S3 pass rule (min_score), with the pin, tokens and cost', () => {
    const e = judgedCaseEvidence(compiled.cases.get('j')!, OUTPUT, verdict('pass', 0.9), call, ctx);
    expect(e).toMatchObject({ case_id: 'j', scorer: 'llm_judge', score: 0.9, passed: true, label: 'judge_pass', output_chars: OUTPUT.length });
    expect(e.detail_hash).toBe(detailHash(ctx.hmacSecret, OUTPUT));
    expect(e.judge).toEqual({ judge_model: call.model, prompt_version: 'judge-v1', judge_cost_usd: 0.00125, judge_input_tokens: 300, judge_output_tokens: 50, judge_cached: null });
    expect(judgedCaseEvidence(compiled.cases.get('j')!, OUTPUT, verdict('pass', 0.6), call, ctx)).toMatchObject({ passed: false, label: 'judge_below_min_score', score: 0.6 });
    expect(judgedCaseEvidence(compiled.cases.get('j')!, OUTPUT, verdict('fail', 0.95), call, ctx)).toMatchObject({ passed: false, label: 'judge_fail' });
    expect(JSON.stringify(e)).not.toContain('CANARY-42');
  });

  it('J3: an error is a failed case labelled with its code, never a pass; an unparseable reply keeps its cost', () => {
    const unparseable = new JudgeError('judge_unparseable', 'no verdict', { reason: 'verdict_not_last', usage: { input_tokens: 310, output_tokens: 80 }, cost_usd: 0.0016 });
    const e = judgedCaseEvidence(compiled.cases.get('j')!, OUTPUT, unparseable, call, ctx);
    expect(e).toMatchObject({ score: 0, passed: false, label: 'judge_unparseable' });
    expect(e.judge).toMatchObject({ judge_model: call.model, prompt_version: 'judge-v1', judge_cost_usd: 0.0016, judge_input_tokens: 310, judge_output_tokens: 80 });
    const missing = judgedCaseEvidence(compiled.cases.get('j')!, OUTPUT, new JudgeError('judge_credential_missing', 'no key'), call, ctx);
    expect(missing).toMatchObject({ passed: false, label: 'judge_credential_missing', judge: { judge_cost_usd: 0, judge_input_tokens: 0 } });
  });

  it('J6: records whether the verdict was a cache hit, a miss, or the cache was not used', () => {
    const used = { ...call, cacheUsed: true };
    expect(judgedCaseEvidence(compiled.cases.get('j')!, OUTPUT, verdict('pass', 0.9, { cached: true, cost_usd: 0 }), used, ctx).judge).toMatchObject({ judge_cached: true, judge_cost_usd: 0 });
    expect(judgedCaseEvidence(compiled.cases.get('j')!, OUTPUT, verdict('pass', 0.9), used, ctx).judge!.judge_cached).toBe(false);
    expect(judgedCaseEvidence(compiled.cases.get('j')!, OUTPUT, new JudgeError('judge_timeout', 't'), used, ctx).judge!.judge_cached).toBe(false);
  });

  it('GT4: a skipped judge case fails with the given label and records no judge', () => {
    const e = judgeSkippedEvidence(compiled.cases.get('j')!, OUTPUT, 'budget_blocked', ctx);
    expect(e).toMatchObject({ score: 0, passed: false, label: 'budget_blocked', output_chars: OUTPUT.length });
    expect(e.judge).toBeUndefined();
    // Without a judge the case still fails, never a silent pass (GT2).
    expect(scoreCase(compiled.cases.get('j')!, OUTPUT, ctx)).toMatchObject({ passed: false, label: 'judge_not_configured' });
  });

  it('refuses to build judge evidence for a case that is not llm_judge', () => {
    expect(() => judgedCaseEvidence(compiled.cases.get('x')!, 'yes', verdict('pass', 1), call, ctx)).toThrow(TypeError);
  });
});
