import { MAX_INLINE_OUTPUTS, MAX_OUTPUT_BYTES } from '../limits';
import { decodeData, describeContract, issuesOf } from './message-contract.testing';
import { RUN_REQUESTED_V1, RUN_REQUESTED_V1_EXAMPLE as EXAMPLE } from './run-requested.v1.message';

describeContract(RUN_REQUESTED_V1, {
  required: ['run_id', 'suite_key', 'subject_kind', 'subject_id', 'source'],
  wrong: [
    ['run_id', 7, 'isSafeId'],
    ['run_id', 'run id', 'isSafeId'],
    ['suite_key', 'Support-Triage', 'isSuiteKey'],
    ['suite_key', 'a'.repeat(129), 'isSuiteKey'],
    ['suite_version', 0, 'isCount'],
    ['suite_version', 1.5, 'isCount'],
    ['suite_version', '3', 'isCount'],
    ['suite_version', 2_147_483_648, 'isCount'],
    ['subject_kind', 'Agent', 'isToken'],
    ['subject_id', { id: 'x' }, 'isSafeId'],
    ['variant', 12, 'isSafeId'],
    ['baseline_run_id', '', 'isSafeId'],
    ['source', 'cron', 'isIn'],
    ['source', 'CI', 'isIn'],
    ['outputs', 'not-a-list', 'isArray'],
  ],
});

describe('evals.run.requested.v1', () => {
  const minimal = {
    run_id: 'r-1',
    suite_key: 'support-triage',
    subject_kind: 'agent',
    subject_id: 'support-bot',
    source: 'sandbox',
  };

  it('accepts the minimal message: suite_version, variant, baseline and outputs are optional', () => {
    const r = decodeData(RUN_REQUESTED_V1, minimal);
    expect(r.ok && r.message.data).toEqual(minimal);
  });

  it.each(['sandbox', 'ci', 'inline', 'session_sample'])('accepts source %s', (source) => {
    expect(decodeData(RUN_REQUESTED_V1, { ...minimal, source }).ok).toBe(true);
  });

  it('treats null optional fields as absent (producers in other languages send None as null)', () => {
    const r = decodeData(RUN_REQUESTED_V1, { ...minimal, variant: null, baseline_run_id: null, suite_version: null });
    expect(r.ok && r.message.data).toEqual(minimal);
  });

  it('accepts an empty outputs list and an empty output string (scored as a bad answer, not refused)', () => {
    expect(decodeData(RUN_REQUESTED_V1, { ...minimal, outputs: [] }).ok).toBe(true);
    expect(decodeData(RUN_REQUESTED_V1, { ...minimal, outputs: [{ case_id: 'c', output: '' }] }).ok).toBe(true);
  });

  it('names the index and field of a bad inline output', () => {
    const r = decodeData(RUN_REQUESTED_V1, {
      ...minimal,
      outputs: [{ case_id: 'a', output: 'ok' }, { output: 'x' }, 'loose string', { case_id: 'd', output: 5 }],
    });
    expect(!r.ok && r.code).toBe('INVALID_PAYLOAD');
    expect(issuesOf(r)).toEqual(
      expect.arrayContaining(['data.outputs[1].case_id: required', 'data.outputs[2]: isObject', 'data.outputs[3].output: isString']),
    );
  });

  // Found by the hostile HTTP campaign (seed 858661430): `outputs: [[]]` passed as valid - class-validator's
  // nested validation takes a list inside the list as a list of outputs - and ended in an INTERNAL error.
  it('refuses a list where an inline output belongs, at its index, whatever the list holds', () => {
    for (const inner of [[], [1], [{ case_id: 'a', output: 'ok' }], [[]]]) {
      const r = decodeData(RUN_REQUESTED_V1, { ...minimal, outputs: [{ case_id: 'a', output: 'ok' }, inner] });
      expect(!r.ok && r.code).toBe('INVALID_PAYLOAD');
      expect(issuesOf(r)).toEqual(['data.outputs[1]: isObject']);
    }
    const mixed = decodeData(RUN_REQUESTED_V1, { ...minimal, outputs: [{ output: 'x' }, []] });
    expect(issuesOf(mixed)).toEqual(expect.arrayContaining(['data.outputs[0].case_id: required', 'data.outputs[1]: isObject']));
  });

  it('refuses an unknown field inside an inline output', () => {
    const r = decodeData(RUN_REQUESTED_V1, { ...minimal, outputs: [{ case_id: 'a', output: 'ok', score: 1 }] });
    expect(issuesOf(r)).toEqual(['data.outputs[0]: unknownField']);
  });

  it('refuses two inline outputs for the same case', () => {
    const r = decodeData(RUN_REQUESTED_V1, {
      ...minimal,
      outputs: [
        { case_id: 'a', output: '1' },
        { case_id: 'b', output: '2' },
        { case_id: 'a', output: '3' },
      ],
    });
    expect(issuesOf(r)).toEqual(['data.outputs[2].case_id: uniqueCaseId']);
  });

  it('refuses a baseline that is the run itself', () => {
    const r = decodeData(RUN_REQUESTED_V1, { ...minimal, baseline_run_id: minimal.run_id });
    expect(issuesOf(r)).toEqual(['data.baseline_run_id: notRunId']);
  });

  it('measures inline outputs in UTF-8 bytes: OUTPUT_TOO_LARGE one byte over, accepted at the limit', () => {
    const atLimit = 'é'.repeat(MAX_OUTPUT_BYTES / 2); // 2 bytes each
    expect(decodeData(RUN_REQUESTED_V1, { ...minimal, outputs: [{ case_id: 'a', output: atLimit }] }).ok).toBe(true);
    const r = decodeData(RUN_REQUESTED_V1, { ...minimal, outputs: [{ case_id: 'a', output: `${atLimit}x` }] });
    expect(!r.ok && r.code).toBe('OUTPUT_TOO_LARGE');
    expect(issuesOf(r)).toEqual(['data.outputs[0].output: maxUtf8Bytes']);
  });

  it(`refuses more than ${MAX_INLINE_OUTPUTS} inline outputs`, () => {
    const outputs = Array.from({ length: MAX_INLINE_OUTPUTS + 1 }, (_, i) => ({ case_id: `c${i}`, output: '' }));
    const r = decodeData(RUN_REQUESTED_V1, { ...minimal, outputs });
    expect(issuesOf(r)).toEqual(['data.outputs: arrayMaxSize']);
  });

  it('reports every problem at once', () => {
    const r = decodeData(RUN_REQUESTED_V1, { suite_key: 'BAD KEY', source: 'x', subject_kind: 'agent' });
    expect(issuesOf(r).sort()).toEqual(
      ['data.run_id: required', 'data.suite_key: isSuiteKey', 'data.subject_id: required', 'data.source: isIn'].sort(),
    );
  });

  it('keeps the example valid', () => {
    expect(decodeData(RUN_REQUESTED_V1, EXAMPLE).ok).toBe(true);
  });
});
