import { MAX_BATCH_OUTPUTS, MAX_OUTPUT_BYTES } from '../limits';
import { decodeData, describeContract, issuesOf } from './message-contract.testing';
import { OUTPUTS_SUBMITTED_V1 } from './outputs-submitted.v1.message';

describeContract(OUTPUTS_SUBMITTED_V1, {
  required: ['run_id', 'outputs'],
  wrong: [
    ['run_id', 'run 1', 'isSafeId'],
    ['outputs', 'c1', 'isArray'],
    ['outputs', [], 'arrayMinSize'],
  ],
});

const CANARY = 'CANARY-7f3e-outputs-submitted';

describe('evals.outputs.submitted.v1 (issue 28: many outputs of one run in one message)', () => {
  const ok = (i: number) => ({ case_id: `c${i}`, output: `output ${i}` });

  it('decodes a batch of MAX_BATCH_OUTPUTS and refuses one more as a whole (the size is about the message)', () => {
    const full = Array.from({ length: MAX_BATCH_OUTPUTS }, (_, i) => ok(i));
    const r = decodeData(OUTPUTS_SUBMITTED_V1, { run_id: 'r-1', outputs: full });
    expect(r.ok && (r.message.data as unknown as { outputs: unknown[] }).outputs).toHaveLength(MAX_BATCH_OUTPUTS);
    const over = decodeData(OUTPUTS_SUBMITTED_V1, { run_id: 'r-1', outputs: [...full, ok(MAX_BATCH_OUTPUTS)] });
    expect(!over.ok && over.code).toBe('INVALID_PAYLOAD');
    expect(issuesOf(over)).toEqual(['data.outputs: arrayMaxSize']);
  });

  it('takes an invalid output out of the batch and reports it by index, case id and code; the others decode', () => {
    const outputs = [ok(0), { case_id: 'c1', output: CANARY + 'x'.repeat(MAX_OUTPUT_BYTES) }, ok(2), { case_id: 'bad id', output: CANARY }, { case_id: 'c4' }, ok(5)];
    const r = decodeData(OUTPUTS_SUBMITTED_V1, { run_id: 'r-1', outputs });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.message.data).toEqual({ run_id: 'r-1', outputs: [ok(0), ok(2), ok(5)] });
    expect(r.refused).toEqual([
      { index: 1, case_id: 'c1', code: 'OUTPUT_TOO_LARGE', reason: `data.outputs[1].output: maxUtf8Bytes (limit ${MAX_OUTPUT_BYTES} bytes)` },
      { index: 3, case_id: null, code: 'INVALID_PAYLOAD', reason: 'data.outputs[3].case_id: isSafeId' },
      { index: 4, case_id: 'c4', code: 'INVALID_PAYLOAD', reason: 'data.outputs[4].output: required' },
    ]);
    // D1: what is reported names fields and constraints, never an output.
    expect(JSON.stringify(r.refused)).not.toContain('CANARY');
  });

  it('a batch of only invalid outputs is a valid, empty batch with every output reported', () => {
    const r = decodeData(OUTPUTS_SUBMITTED_V1, { run_id: 'r-1', outputs: [{ case_id: 'c0', output: 7 }, 'not an object'] });
    expect(r.ok && r.message.data).toEqual({ run_id: 'r-1', outputs: [] });
    expect(r.ok && r.refused?.map((x) => [x.index, x.code])).toEqual([
      [0, 'INVALID_PAYLOAD'],
      [1, 'INVALID_PAYLOAD'],
    ]);
  });

  it('refuses the whole batch when anything outside its outputs is wrong, even with invalid outputs too', () => {
    const r = decodeData(OUTPUTS_SUBMITTED_V1, { run_id: 'run 1', outputs: [ok(0), { case_id: 'c1', output: 1 }] });
    expect(!r.ok && r.code).toBe('INVALID_PAYLOAD');
    expect(issuesOf(r)).toContain('data.run_id: isSafeId');
    const unknown = decodeData(OUTPUTS_SUBMITTED_V1, { run_id: 'r-1', outputs: [ok(0), { case_id: 'c1', output: 'x', extra: CANARY }] });
    // An unknown key inside an item is that item's problem; at the top it is the message's.
    expect(unknown.ok && unknown.refused?.map((x) => x.index)).toEqual([1]);
    const top = decodeData(OUTPUTS_SUBMITTED_V1, { run_id: 'r-1', outputs: [ok(0)], extra: 1 });
    expect(!top.ok && top.code).toBe('INVALID_PAYLOAD');
  });

  it('keeps two outputs of one case as sent: they are what two single messages are (DUPLICATE_OUTPUT downstream)', () => {
    const r = decodeData(OUTPUTS_SUBMITTED_V1, { run_id: 'r-1', outputs: [ok(0), ok(0)] });
    expect(r.ok && (r.message.data as unknown as { outputs: unknown[] }).outputs).toHaveLength(2);
  });
});
