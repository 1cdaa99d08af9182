import { FINDING_REPORTED_V1, FINDING_REPORTED_V1_EXAMPLE as EXAMPLE } from './finding-reported.v1.message';
import { decodeData, describeContract, issuesOf } from './message-contract.testing';

describeContract(FINDING_REPORTED_V1, {
  required: [
    'kind',
    'finding_id',
    'run_id',
    'baseline_run_id',
    'suite',
    'suite_version',
    'subject_kind',
    'subject_id',
    'variant',
    'score_drop',
    'pass_rate_diff',
    'run',
    'baseline',
    'occurred_at',
  ],
  wrong: [
    ['kind', 'regression', 'isIn'],
    ['finding_id', 'f 1', 'isSafeId'],
    ['score_drop', 2, 'isNumberInRange'],
    ['score_drop', '0.6', 'isNumberInRange'],
    ['pass_rate_diff', 'big', 'isObject'],
    ['run', [4, 20], 'isObject'],
    ['baseline', null, 'isObject'],
  ],
});

describe('finding.reported.v1', () => {
  const d = EXAMPLE.pass_rate_diff;

  it('names nested fields', () => {
    const r = decodeData(FINDING_REPORTED_V1, {
      ...EXAMPLE,
      pass_rate_diff: { ...d, method: 'wald', level: 95 },
      run: { passed: -1 },
    });
    expect(issuesOf(r).sort()).toEqual(
      [
        'data.pass_rate_diff.level: isConfidenceLevel',
        'data.pass_rate_diff.method: isIn',
        'data.run.n: required',
        'data.run.passed: isCount',
      ].sort(),
    );
  });

  it('accepts variant null', () => {
    expect(decodeData(FINDING_REPORTED_V1, { ...EXAMPLE, variant: null }).ok).toBe(true);
  });

  it('refuses an interval that contains zero: that is inconclusive_noise, never a finding (G2)', () => {
    const r = decodeData(FINDING_REPORTED_V1, { ...EXAMPLE, pass_rate_diff: { ...d, upper: 0.01 } });
    expect(issuesOf(r)).toEqual(['data.pass_rate_diff: excludesZero']);
  });

  it('checks the difference against both denominators (G3)', () => {
    const r = decodeData(FINDING_REPORTED_V1, { ...EXAMPLE, baseline: { passed: 15, n: 20 } });
    expect(issuesOf(r)).toEqual(['data.pass_rate_diff.diff: equalsRunMinusBaseline']);
    const over = decodeData(FINDING_REPORTED_V1, { ...EXAMPLE, run: { passed: 21, n: 20 } });
    expect(issuesOf(over)).toEqual(['data.run.passed: notAboveN']);
  });

  it('refuses an interval that does not contain its estimate, or is upside down', () => {
    expect(issuesOf(decodeData(FINDING_REPORTED_V1, { ...EXAMPLE, pass_rate_diff: { ...d, lower: -0.5 } }))).toEqual([
      'data.pass_rate_diff: containsEstimate',
    ]);
    expect(
      issuesOf(decodeData(FINDING_REPORTED_V1, { ...EXAMPLE, pass_rate_diff: { ...d, lower: -0.2, upper: -0.7 } })),
    ).toEqual(['data.pass_rate_diff: lowerNotAboveUpper']);
  });

  it('refuses a non-positive score drop and a baseline that is the run', () => {
    expect(issuesOf(decodeData(FINDING_REPORTED_V1, { ...EXAMPLE, score_drop: 0 }))).toEqual([
      'data.score_drop: positive',
    ]);
    expect(issuesOf(decodeData(FINDING_REPORTED_V1, { ...EXAMPLE, baseline_run_id: EXAMPLE.run_id }))).toEqual([
      'data.baseline_run_id: notRunId',
    ]);
  });
});

describe('finding.reported.v1: the paired comparison, added as optional fields (G7)', () => {
  // 200 cases scored in both runs, 12 passed in the baseline only, none in the run only (Newcombe 1998b,
  // method 10: -0.06 [-0.0967, -0.0256]); the independent interval of the same counts contains zero.
  const paired = { diff: -0.06, lower: -0.09674, upper: -0.02558, level: 0.95, method: 'newcombe_paired_10' as const };
  const PAIRED = {
    ...EXAMPLE,
    score_drop: 0.06,
    pass_rate_diff: paired,
    run: { passed: 150, n: 200 },
    baseline: { passed: 162, n: 200 },
    decided_by: 'paired',
    independent_diff: { diff: -0.06, lower: -0.14047, upper: 0.02135, level: 0.95, method: 'newcombe_hybrid_score' },
    paired_diff: { ...paired, baseline_only: 12, run_only: 0, n: 200 },
  };

  it('accepts a paired finding with both intervals, b, c and n', () => {
    expect(decodeData(FINDING_REPORTED_V1, PAIRED).ok).toBe(true);
  });

  it('still accepts a finding without the optional fields (additive change: v1 producers stay valid)', () => {
    expect(decodeData(FINDING_REPORTED_V1, EXAMPLE).ok).toBe(true);
  });

  it('refuses decided_by paired without the paired interval', () => {
    const { paired_diff: _omitted, ...rest } = PAIRED;
    expect(issuesOf(decodeData(FINDING_REPORTED_V1, rest))).toEqual(['data.paired_diff: presentWhenPaired']);
  });

  it('refuses a deciding interval that is not the paired one when the paired one decided', () => {
    const r = decodeData(FINDING_REPORTED_V1, { ...PAIRED, paired_diff: { ...PAIRED.paired_diff, lower: -0.2 } });
    expect(issuesOf(r)).toEqual(['data.pass_rate_diff: equalsDecidingInterval']);
  });

  it('checks the paired difference against its discordant pairs', () => {
    const r = decodeData(FINDING_REPORTED_V1, { ...PAIRED, paired_diff: { ...PAIRED.paired_diff, run_only: 3 } });
    expect(issuesOf(r)).toContain('data.paired_diff.diff: equalsRunOnlyMinusBaselineOnly');
    const over = decodeData(FINDING_REPORTED_V1, { ...PAIRED, paired_diff: { ...PAIRED.paired_diff, baseline_only: 201 } });
    expect(issuesOf(over)).toContain('data.paired_diff.n: notBelowDiscordant');
  });

  it('refuses an independent interval by another method, and an unknown decided_by', () => {
    const r = decodeData(FINDING_REPORTED_V1, { ...PAIRED, independent_diff: { ...PAIRED.independent_diff, method: 'newcombe_paired_10' } });
    expect(issuesOf(r)).toEqual(['data.independent_diff.method: independentMethod']);
    expect(issuesOf(decodeData(FINDING_REPORTED_V1, { ...PAIRED, decided_by: 'both' }))).toEqual(['data.decided_by: isIn']);
  });
});
