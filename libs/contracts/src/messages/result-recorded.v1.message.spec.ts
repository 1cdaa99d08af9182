import { MAX_EXTRA_METRICS } from './metrics';
import { decodeData, describeContract, issuesOf } from './message-contract.testing';
import { RESULT_RECORDED_V1, RESULT_RECORDED_V1_EXAMPLE as EXAMPLE } from './result-recorded.v1.message';

describeContract(RESULT_RECORDED_V1, {
  required: [
    'suite',
    'suite_version',
    'subject_kind',
    'subject_id',
    'variant',
    'run_id',
    'score',
    'passed',
    'occurred_at',
    'metrics',
  ],
  wrong: [
    ['suite', 'Support Triage', 'isSuiteKey'],
    ['suite_version', 0, 'isCount'],
    ['variant', 3, 'isSafeId'],
    ['score', 1.01, 'isNumberInRange'],
    ['score', -0.1, 'isNumberInRange'],
    ['score', '0.5', 'isNumberInRange'],
    ['passed', 'true', 'isBoolean'],
    ['passed', 1, 'isBoolean'],
    ['occurred_at', '2025-02-30T00:00:00Z', 'isTimestamp'],
    ['metrics', [], 'isObject'],
    ['metrics', 'good', 'isObject'],
  ],
});

describe('evals.result.recorded.v1', () => {
  const metrics = EXAMPLE.metrics;
  const withMetrics = (m: object) => ({ ...EXAMPLE, metrics: m });

  it('accepts variant null (always present, null when the run has none)', () => {
    const r = decodeData(RESULT_RECORDED_V1, { ...EXAMPLE, variant: null });
    expect(r.ok && r.message.data).toEqual({ ...EXAMPLE, variant: null });
  });

  it.each(['pass_rate', 'passed', 'n', 'pass_rate_ci'])('requires metrics.%s', (key) => {
    const m: Record<string, unknown> = { ...metrics };
    delete m[key];
    expect(issuesOf(decodeData(RESULT_RECORDED_V1, withMetrics(m)))).toEqual([`data.metrics.${key}: required`]);
  });

  it('checks the interval fields', () => {
    const r = decodeData(RESULT_RECORDED_V1, withMetrics({ ...metrics, pass_rate_ci: { lower: -1, upper: 0.9 } }));
    expect(issuesOf(r).sort()).toEqual(['data.metrics.pass_rate_ci.level: required', 'data.metrics.pass_rate_ci.lower: isNumberInRange']);
    const level = decodeData(RESULT_RECORDED_V1, withMetrics({ ...metrics, pass_rate_ci: { ...metrics.pass_rate_ci, level: 1 } }));
    expect(issuesOf(level)).toEqual(['data.metrics.pass_rate_ci.level: isConfidenceLevel']);
  });

  it('refuses an unknown key inside pass_rate_ci', () => {
    const r = decodeData(RESULT_RECORDED_V1, withMetrics({ ...metrics, pass_rate_ci: { ...metrics.pass_rate_ci, mid: 0.5 } }));
    expect(issuesOf(r)).toEqual(['data.metrics.pass_rate_ci: unknownField']);
  });

  it('accepts extra metrics: numbers, booleans, null, identifiers, and small nested objects of those', () => {
    const m = {
      ...metrics,
      mean_score: 0.9,
      missing_outputs: 0,
      judge_used: false,
      judge_model: 'gpt-4o-2024-08-06',
      scorer_versions: { exact: '1.0.0', contains: '1.0.0' },
      score_ci: { lower: 0.5, upper: 0.99, level: 0.95 },
      note: null,
      per_tag: [{ tag_passed: 3, tag_n: 4 }],
    };
    const r = decodeData(RESULT_RECORDED_V1, withMetrics(m));
    expect(issuesOf(r)).toEqual([]);
    expect(r.ok && r.message.data).toEqual(withMetrics(m));
  });

  it('refuses free text in extra metrics (a place for an output to slip into an event, D1)', () => {
    const r = decodeData(RESULT_RECORDED_V1, withMetrics({ ...metrics, sample: 'the agent said: hello there' }));
    expect(issuesOf(r)).toEqual(['data.metrics: metricValue']);
    expect(!r.ok && r.reason).not.toContain('sample');
  });

  it('refuses badly named extra keys without echoing them', () => {
    const r = decodeData(RESULT_RECORDED_V1, withMetrics({ ...metrics, 'Bad Key!': 1 }));
    expect(issuesOf(r)).toEqual(['data.metrics: metricKey']);
    expect(!r.ok && r.reason).not.toContain('Bad Key');
  });

  it('refuses non-finite, deep or too many extra metrics', () => {
    const deep = { a: { b: { c: { d: 1 } } } };
    expect(issuesOf(decodeData(RESULT_RECORDED_V1, withMetrics({ ...metrics, deep })))).toEqual([
      'data.metrics: metricValue',
    ]);
    const many = Object.fromEntries(Array.from({ length: MAX_EXTRA_METRICS + 1 }, (_, i) => [`m${i}`, i]));
    expect(issuesOf(decodeData(RESULT_RECORDED_V1, withMetrics({ ...metrics, ...many })))).toEqual([
      'data.metrics: maxExtraMetrics',
    ]);
  });

  it('checks that the rate is passed / n, within n, and inside its interval', () => {
    expect(issuesOf(decodeData(RESULT_RECORDED_V1, withMetrics({ ...metrics, passed: 9 })))).toEqual([
      'data.metrics.passed: notAboveN',
    ]);
    expect(issuesOf(decodeData(RESULT_RECORDED_V1, withMetrics({ ...metrics, pass_rate: 0.5 })))).toEqual([
      'data.metrics.pass_rate: equalsPassedOverN',
      'data.metrics.pass_rate_ci: containsEstimate',
    ]);
    const flipped = { lower: 0.9, upper: 0.5, level: 0.95 };
    expect(issuesOf(decodeData(RESULT_RECORDED_V1, withMetrics({ ...metrics, pass_rate_ci: flipped })))).toEqual([
      'data.metrics.pass_rate_ci: lowerNotAboveUpper',
    ]);
    expect(issuesOf(decodeData(RESULT_RECORDED_V1, withMetrics({ ...metrics, n: 0, passed: 0 })))).toEqual([
      'data.metrics.n: isCount',
    ]);
  });
});
