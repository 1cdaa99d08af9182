import type { BusMessage } from '@evals/bus';
import type { ScoreWorkV1, SealWorkV1, WorkMetadata } from '@evals/domain';
import { besideTheirOutputs } from './scoring.service';
import type { Received } from './work-settler';

const metadata: WorkMetadata = { message_id: 'm', correlation_id: 'c', causation_id: 'm', occurred_at: '2026-12-07T00:00:00.000Z' };
const msg = (seq: number) => ({ seq }) as unknown as BusMessage;
const score = (seq: number, run_id: string): Received<ScoreWorkV1> => ({ msg: msg(seq), data: { run_id, items: [] }, metadata });
const seal = (seq: number, run_id: string): Received<SealWorkV1> => ({ msg: msg(seq), data: { run_id }, metadata });
const seqsOf = (picked: ReadonlyArray<Received<SealWorkV1>>) => picked.map((s) => s.msg.seq);

describe('besideTheirOutputs (issue 28: which seals of a batch are sealed in its scoring transaction)', () => {
  it('picks a seal behind its own run\'s outputs, whatever other runs\' messages lie between', () => {
    const scores = [score(10, 'a'), score(11, 'b'), score(13, 'b')];
    const seals = [seal(12, 'a'), seal(14, 'b')];
    expect(seqsOf(besideTheirOutputs([...scores, ...seals].map((r) => r.msg), scores, seals))).toEqual([12, 14]);
  });

  it('leaves a seal whose run has no output before it in the batch (its outputs came earlier, or come after it)', () => {
    const scores = [score(10, 'a'), score(12, 'b')];
    const seals = [seal(11, 'b'), seal(13, 'c')];
    expect(seqsOf(besideTheirOutputs([...scores, ...seals].map((r) => r.msg), scores, seals))).toEqual([]);
  });

  it('stops at a sequence missing from the batch (another process holds it) or a message that did not decode', () => {
    const scores = [score(10, 'a'), score(11, 'b'), score(14, 'c')];
    const seals = [seal(12, 'a'), seal(15, 'c')];
    // 13 is not in the batch: the seal of c, above it, waits for the ack floor the way without fusion.
    expect(seqsOf(besideTheirOutputs([...scores, ...seals].map((r) => r.msg), scores, seals))).toEqual([12]);
    // 13 is in the batch but undecodable (dead-lettered): the same.
    expect(seqsOf(besideTheirOutputs([...scores, ...seals].map((r) => r.msg).concat(msg(13)), scores, seals))).toEqual([12]);
  });

  it('takes the first seal of a run only; a batch with no outputs or no seal has none', () => {
    const scores = [score(10, 'a')];
    const seals = [seal(12, 'a'), seal(11, 'a')];
    expect(seqsOf(besideTheirOutputs([...scores, ...seals].map((r) => r.msg), scores, seals))).toEqual([11]);
    expect(besideTheirOutputs([msg(1)], [], [seal(1, 'a')])).toEqual([]);
    expect(besideTheirOutputs([msg(1)], [score(1, 'a')], [])).toEqual([]);
  });
});
