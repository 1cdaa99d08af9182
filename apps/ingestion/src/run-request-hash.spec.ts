import { canonicalOutputs, requestMessageId, runRequestHash, type RunRequestContent } from './run-request-hash';

const KEY = 'request-hash-key-0123456789-0123456789';

const base: RunRequestContent = {
  suite_key: 'support-triage',
  subject_kind: 'agent',
  subject_id: 'bot',
  source: 'ci',
  outputs: [
    { case_id: 'c2', output: 'two' },
    { case_id: 'c1', output: 'one' },
  ],
};

describe('unit: the run request hash (R7)', () => {
  it('is a sha256 hex digest, the same for the same content whatever the order of the outputs', () => {
    const h = runRequestHash(base, KEY);
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(runRequestHash({ ...base, outputs: [...base.outputs!].reverse() }, KEY)).toBe(h);
    // Absent and null-equivalent defaults are the same content.
    expect(runRequestHash({ ...base, variant: undefined, judge_cache: false }, KEY)).toBe(h);
  });

  it.each<[string, Partial<RunRequestContent>]>([
    ['suite_key', { suite_key: 'other' }],
    ['suite_version (as requested: 1 is not "the latest")', { suite_version: 1 }],
    ['subject_kind', { subject_kind: 'prompt' }],
    ['subject_id', { subject_id: 'someone-else' }],
    ['variant', { variant: 'v2' }],
    ['baseline_run_id', { baseline_run_id: 'ci-0' }],
    ['source', { source: 'inline' }],
    ['sample', { sample: { size: 1, seed: 's' } }],
    ['sample seed', { sample: { size: 1, seed: 't' } }],
    ['judge_cache', { judge_cache: true }],
    ['judge_skip', { judge_skip: 'budget_blocked' }],
    ['one output text', { outputs: [{ case_id: 'c1', output: 'one' }, { case_id: 'c2', output: 'TWO' }] }],
    ['an output less', { outputs: [{ case_id: 'c1', output: 'one' }] }],
    ['an output for another case', { outputs: [{ case_id: 'c1', output: 'one' }, { case_id: 'c3', output: 'two' }] }],
    ['no outputs (they follow over the bus)', { outputs: undefined }],
    ['an empty outputs list', { outputs: [] }],
  ])('changes with %s', (_field, change) => {
    expect(runRequestHash({ ...base, ...change }, KEY)).not.toBe(runRequestHash(base, KEY));
  });

  it('tells "no outputs" from "an empty list" from the sample of another size', () => {
    const none = runRequestHash({ ...base, outputs: undefined }, KEY);
    const empty = runRequestHash({ ...base, outputs: [] }, KEY);
    expect(none).not.toBe(empty);
    expect(runRequestHash({ ...base, sample: { size: 2, seed: 's' } }, KEY)).not.toBe(runRequestHash({ ...base, sample: { size: 1, seed: 's' } }, KEY));
  });

  it('keys each output (D2): without the server\'s key a guessed output cannot be confirmed', () => {
    const one = { ...base, outputs: [{ case_id: 'c1', output: 'yes' }] };
    expect(runRequestHash(one, KEY)).not.toBe(runRequestHash(one, `${KEY}-other`));
  });

  it('sorts outputs by case id in code-unit order, without changing the request', () => {
    const outputs = [
      { case_id: 'b', output: '1' },
      { case_id: 'B', output: '2' },
      { case_id: 'a', output: '3' },
      { case_id: 'é', output: '4' },
    ];
    expect(canonicalOutputs(outputs).map((o) => o.case_id)).toEqual(['B', 'a', 'b', 'é']);
    expect(outputs.map((o) => o.case_id)).toEqual(['b', 'B', 'a', 'é']);
  });

  it('derives the work message id from the run id and the hash: the same request again, the same ids', () => {
    const h = runRequestHash(base, KEY);
    expect(requestMessageId('ci-1', h)).toBe(requestMessageId('ci-1', runRequestHash({ ...base, outputs: [...base.outputs!].reverse() }, KEY)));
    expect(requestMessageId('ci-1', h)).toBe(`ci-1:${h.slice(0, 32)}`);
    expect(requestMessageId('ci-2', h)).not.toBe(requestMessageId('ci-1', h));
    expect(requestMessageId('ci-1', runRequestHash({ ...base, subject_id: 'x' }, KEY))).not.toBe(requestMessageId('ci-1', h));
  });
});
