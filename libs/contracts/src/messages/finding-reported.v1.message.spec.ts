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
