import { decodeData, describeContract, issuesOf } from './message-contract.testing';
import { SESSION_SIGNAL_V1, SESSION_SIGNAL_V1_EXAMPLE as EXAMPLE, SEVERITIES } from './session-signal.v1.message';

describeContract(SESSION_SIGNAL_V1, {
  required: [
    'session_id',
    'subject_kind',
    'subject_id',
    'state',
    'finding_count',
    'max_severity',
    'tokens_in',
    'tokens_out',
    'cost_usd',
    'occurred_at',
  ],
  wrong: [
    ['session_id', 'sess 1', 'isSafeId'],
    ['state', 'Completed', 'isToken'],
    ['state', 'x'.repeat(65), 'isToken'],
    ['finding_count', -1, 'isCount'],
    ['finding_count', 1.5, 'isCount'],
    ['finding_count', '1', 'isCount'],
    ['max_severity', 'severe', 'isIn'],
    ['tokens_in', -3, 'isCount'],
    ['tokens_out', 2 ** 53, 'isCount'],
    ['cost_usd', -0.01, 'isNonNegativeNumber'],
    ['cost_usd', '0.01', 'isNonNegativeNumber'],
    ['occurred_at', '2025-03-01', 'isTimestamp'],
    ['occurred_at', '2025-03-01 12:00:00Z', 'isTimestamp'],
    ['occurred_at', 1740830400000, 'isTimestamp'],
  ],
});

describe('evals.session.signal.v1', () => {
  it('has no field that could carry output text (D3)', () => {
    expect(Object.keys(EXAMPLE).sort()).toEqual(
      [
        'cost_usd',
        'finding_count',
        'max_severity',
        'occurred_at',
        'session_id',
        'state',
        'subject_id',
        'subject_kind',
        'tokens_in',
        'tokens_out',
      ].sort(),
    );
  });

  it.each(SEVERITIES.filter((s) => s !== 'none'))('accepts max_severity %s with findings', (max_severity) => {
    expect(decodeData(SESSION_SIGNAL_V1, { ...EXAMPLE, finding_count: 2, max_severity }).ok).toBe(true);
  });

  it('accepts a clean session: no finding, severity none, zero cost', () => {
    const r = decodeData(SESSION_SIGNAL_V1, { ...EXAMPLE, finding_count: 0, max_severity: 'none', cost_usd: 0 });
    expect(r.ok).toBe(true);
  });

  it('refuses a severity that contradicts the finding count', () => {
    expect(issuesOf(decodeData(SESSION_SIGNAL_V1, { ...EXAMPLE, finding_count: 0, max_severity: 'high' }))).toEqual([
      'data.max_severity: consistentWithFindingCount',
    ]);
    expect(issuesOf(decodeData(SESSION_SIGNAL_V1, { ...EXAMPLE, finding_count: 3, max_severity: 'none' }))).toEqual([
      'data.max_severity: consistentWithFindingCount',
    ]);
  });
});
