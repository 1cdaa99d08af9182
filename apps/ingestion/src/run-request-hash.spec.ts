import { createHash } from 'node:crypto';
import { canonicalJson, detailHash, detailKeyId } from '@evals/domain';
import { canonicalOutputs, hashRunRequest, requestMessageId, runRequestHash, type RunRequestContent } from './run-request-hash';

/** The request hash as it was defined before the outputs were written by hand: stored hashes must still match. */
function referenceHash(request: RunRequestContent, key: string): string {
  const content = {
    suite_key: request.suite_key,
    suite_version: request.suite_version ?? null,
    subject_kind: request.subject_kind,
    subject_id: request.subject_id,
    variant: request.variant ?? null,
    baseline_run_id: request.baseline_run_id ?? null,
    source: request.source,
    sample: request.sample ? { size: request.sample.size, seed: request.sample.seed } : null,
    judge_cache: request.judge_cache === true,
    judge_skip: request.judge_skip ?? null,
    ...(request.judge_throttle ? { judge_throttle: [...request.judge_throttle.case_ids] } : {}),
    outputs: request.outputs ? canonicalOutputs(request.outputs).map((o) => [o.case_id, detailHash(key, o.output)]) : null,
  };
  return createHash('sha256').update(canonicalJson(content), 'utf8').digest('hex');
}

/** A small deterministic generator (no Math.random: a failure must replay). */
function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

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

  it('is the same hash, byte for byte, as the canonical JSON of the whole content (random requests, odd strings)', () => {
    const rnd = lcg(15);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)];
    const strings = ['a', 'é', '"quoted"', 'back\\slash', 'line\nbreak', '\u0000nul', '🙂', '\ud800', 'outputs', '},"x":['];
    for (let i = 0; i < 300; i++) {
      const outputs = rnd() < 0.2 ? undefined : Array.from({ length: Math.floor(rnd() * 6) }, (_, j) => ({ case_id: `${pick(strings)}${j}`, output: pick(strings).repeat(1 + j) }));
      const request: RunRequestContent = {
        suite_key: pick(strings),
        ...(rnd() < 0.5 ? { suite_version: 1 + Math.floor(rnd() * 9) } : {}),
        subject_kind: pick(['agent', 'prompt']),
        subject_id: pick(strings),
        ...(rnd() < 0.5 ? { variant: pick(strings) } : {}),
        ...(rnd() < 0.3 ? { baseline_run_id: pick(strings) } : {}),
        source: pick(['ci', 'inline', 'sandbox'] as const) as RunRequestContent['source'],
        ...(outputs ? { outputs } : {}),
        ...(rnd() < 0.3 ? { sample: { size: 1 + Math.floor(rnd() * 5), seed: pick(strings) } } : {}),
        ...(rnd() < 0.5 ? { judge_cache: rnd() < 0.5 } : {}),
        ...(rnd() < 0.3 ? { judge_skip: pick(strings) } : {}),
        ...(rnd() < 0.3 ? { judge_throttle: { case_ids: [pick(strings), pick(strings)] } } : {}),
      };
      expect(runRequestHash(request, KEY)).toBe(referenceHash(request, KEY));
    }
  });

  it('hands back the outputs it hashed: sorted by case id, each with its keyed hash, and the key id', () => {
    const hashed = hashRunRequest(base, KEY);
    expect(hashed.hash).toBe(runRequestHash(base, KEY));
    expect(hashed.detailKey).toBe(detailKeyId(KEY));
    expect(hashed.outputs).toEqual([
      { case_id: 'c1', output: 'one', detail_hash: detailHash(KEY, 'one') },
      { case_id: 'c2', output: 'two', detail_hash: detailHash(KEY, 'two') },
    ]);
    expect(hashRunRequest({ ...base, outputs: undefined }, KEY).outputs).toBeNull();
  });
});
