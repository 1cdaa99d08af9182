import { JudgeError, estimateTokens, isJudgeError, judgeCost, judgeOutcome, judgePassed, type JudgeVerdict } from './judge.port';

const verdict = (v: 'pass' | 'fail', score: number): JudgeVerdict => ({
  verdict: v,
  score,
  model: 'm-2024-01-01',
  prompt_version: 'judge-v1',
  usage: { input_tokens: 1, output_tokens: 1 },
  usage_estimated: false,
  cost_usd: 0,
  cached: false,
});

describe('S3: passed = verdict is pass and score >= min_score', () => {
  it.each([
    ['pass', 0.5, 0.5, true],
    ['pass', 0.49, 0.5, false],
    ['pass', 1, 1, true],
    ['fail', 1, 0.5, false],
    ['fail', 0.9, 0, false],
    ['pass', 0, 0, true],
  ] as const)('verdict %s score %d min %d -> %s', (v, score, min, expected) => {
    expect(judgePassed({ verdict: v, score }, min)).toBe(expected);
  });

  it('judgeOutcome labels from a fixed vocabulary; an error is a failure carrying its code (J3)', () => {
    expect(judgeOutcome(verdict('pass', 0.9), 0.5)).toEqual({ score: 0.9, passed: true, label: 'judge_pass' });
    expect(judgeOutcome(verdict('pass', 0.3), 0.5)).toEqual({ score: 0.3, passed: false, label: 'judge_below_min_score' });
    expect(judgeOutcome(verdict('fail', 0.9), 0.5)).toEqual({ score: 0.9, passed: false, label: 'judge_fail' });
    const err = new JudgeError('judge_unparseable', 'the reply had no verdict', { reason: 'no_verdict' });
    expect(judgeOutcome(err, 0.5)).toEqual({ score: 0, passed: false, label: 'judge_unparseable' });
    expect(isJudgeError(err)).toBe(true);
    expect(err.message).toBe('judge_unparseable: the reply had no verdict');
  });
});

describe('usage and cost', () => {
  it('estimates ceil(chars / 4) tokens', () => {
    expect(estimateTokens(0)).toBe(0);
    expect(estimateTokens(1)).toBe(1);
    expect(estimateTokens(4)).toBe(1);
    expect(estimateTokens(5)).toBe(2);
  });

  it('prices per million tokens', () => {
    expect(judgeCost({ input_tokens: 1_000_000, output_tokens: 500_000 }, { input_per_mtok_usd: 2.5, output_per_mtok_usd: 10 })).toBeCloseTo(7.5, 12);
    expect(judgeCost({ input_tokens: 120, output_tokens: 30 }, { input_per_mtok_usd: 2.5, output_per_mtok_usd: 10 })).toBeCloseTo(0.0006, 12);
  });
});
