import { MAX_OUTPUT_BYTES } from '../limits';
import { decodeData, describeContract, issuesOf } from './message-contract.testing';
import { OUTPUT_SUBMITTED_V1 } from './output-submitted.v1.message';

describeContract(OUTPUT_SUBMITTED_V1, {
  required: ['run_id', 'case_id', 'output'],
  wrong: [
    ['run_id', null, 'isSafeId'],
    ['case_id', 'case 1', 'isSafeId'],
    ['case_id', 3, 'isSafeId'],
    ['output', 42, 'isString'],
    ['output', null, 'isString'],
    ['output', { text: 'hi' }, 'isString'],
    ['output', ['a'], 'isString'],
  ],
});

describe('evals.output.submitted.v1', () => {
  const base = { run_id: 'r-1', case_id: 'c-1' };

  it('accepts any string output, including empty, multi-line, emoji and JSON text', () => {
    for (const output of ['', 'line1\nline2', '👍🏽 ok', '{"a":1}', '\u0000\u001f', 'x'.repeat(1000)]) {
      const r = decodeData(OUTPUT_SUBMITTED_V1, { ...base, output });
      expect(r.ok && r.message.data).toEqual({ ...base, output });
    }
  });

  it('accepts an output of exactly MAX_OUTPUT_BYTES and refuses one byte more with OUTPUT_TOO_LARGE', () => {
    expect(decodeData(OUTPUT_SUBMITTED_V1, { ...base, output: 'a'.repeat(MAX_OUTPUT_BYTES) }).ok).toBe(true);
    const r = decodeData(OUTPUT_SUBMITTED_V1, { ...base, output: 'a'.repeat(MAX_OUTPUT_BYTES + 1) });
    expect(!r.ok && r.code).toBe('OUTPUT_TOO_LARGE');
    expect(!r.ok && r.reason).toBe(`data.output: maxUtf8Bytes (limit ${MAX_OUTPUT_BYTES} bytes)`);
  });

  it('counts bytes, not characters: 4-byte characters reach the limit at a quarter of the length', () => {
    const emoji = '😀'.repeat(MAX_OUTPUT_BYTES / 4 + 1);
    expect(emoji.length).toBeLessThan(MAX_OUTPUT_BYTES);
    const r = decodeData(OUTPUT_SUBMITTED_V1, { ...base, output: emoji });
    expect(!r.ok && r.code).toBe('OUTPUT_TOO_LARGE');
  });

  it('says OUTPUT_TOO_LARGE even when other fields are also wrong, and lists them all', () => {
    const r = decodeData(OUTPUT_SUBMITTED_V1, { case_id: 'c', output: 'a'.repeat(MAX_OUTPUT_BYTES + 1) });
    expect(!r.ok && r.code).toBe('OUTPUT_TOO_LARGE');
    expect(issuesOf(r).sort()).toEqual(['data.output: maxUtf8Bytes', 'data.run_id: required']);
  });
});
