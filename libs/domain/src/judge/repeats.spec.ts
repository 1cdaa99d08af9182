import { JudgeError, type JudgeVerdict } from './judge.port';
import { majorityOutcome, selfAgreement, verdictStability } from './repeats';

const v = (verdict: 'pass' | 'fail', score: number): JudgeVerdict => ({
  verdict,
  score,
  model: 'm',
  prompt_version: 'judge-v1',
  usage: { input_tokens: 1, output_tokens: 1 },
  usage_estimated: false,
  cost_usd: 0,
  cached: false,
});

describe('unit: repeated judge verdicts (issue 13)', () => {
  it('the majority decides; the score is the mean of the winning side', () => {
    expect(majorityOutcome([v('pass', 0.9), v('pass', 0.7), v('fail', 0.1)], 0.5)).toEqual({ score: 0.8, passed: true, label: 'judge_pass', repeats: 3, pass_votes: 2, stable: false });
    expect(majorityOutcome([v('fail', 0.2), v('fail', 0.4), v('pass', 0.9)], 0.5)).toMatchObject({ score: 0.30000000000000004, passed: false, label: 'judge_fail', pass_votes: 1, stable: false });
  });

  it('a tie fails', () => {
    expect(majorityOutcome([v('pass', 0.9), v('fail', 0.1)], 0.5)).toMatchObject({ passed: false, pass_votes: 1, stable: false });
  });

  it('agreeing votes are stable; an error votes fail', () => {
    expect(majorityOutcome([v('pass', 0.9), v('pass', 0.9), v('pass', 0.9)], 0.5)).toMatchObject({ passed: true, stable: true });
    const err = new JudgeError('judge_unparseable', 'x');
    expect(majorityOutcome([err, err, v('fail', 0.1)], 0.5)).toMatchObject({ passed: false, stable: true, label: 'judge_unparseable', score: 0.1 / 3 });
    // A pass below min_score is a failed vote (S3).
    expect(majorityOutcome([v('pass', 0.4), v('pass', 0.9)], 0.5)).toMatchObject({ passed: false, stable: false });
  });

  it('stability is the share of stable cases with its Wilson interval (Newcombe 1998, 81/263: 0.2553-0.3662)', () => {
    // Newcombe (1998), Stat Med 17:857, example (c): 81/263 -> Wilson 0.2553 to 0.3662.
    const s = verdictStability({ repeats: 3, cases: 263, stable: 81, unstable_case_ids: ['a'] });
    expect(s.rate).toBeCloseTo(81 / 263, 12);
    expect(s.lower).toBeCloseTo(0.2553, 4);
    expect(s.upper).toBeCloseTo(0.3662, 4);
    expect(verdictStability({ repeats: 2, cases: 0, stable: 0, unstable_case_ids: [] })).toMatchObject({ rate: null, lower: 0, upper: 1 });
  });

  it('calibration self-agreement: items whose k verdicts agree', () => {
    expect(selfAgreement([['pass', 'pass'], ['fail', 'pass'], ['fail', 'fail']])).toMatchObject({ items: 3, agreeing: 2, rate: 2 / 3 });
  });
});
