import { detailHash, detailKeyId } from './detail-hash';
import { decodeWork, encodeWork, WORK_SUBJECTS, type ScoreWorkV1 } from './work-messages';

const KEY = 'work-key-0123456789abcdef0123456789';
const metadata = { message_id: 'm1', correlation_id: 'c1', causation_id: 'm0', occurred_at: '2026-12-01T00:00:00.000Z' };
const score = (data: ScoreWorkV1) => encodeWork({ type: WORK_SUBJECTS.score, version: 1, data, metadata });
const raw = (data: object) => JSON.stringify({ schema: 'evals.work.score.v1', type: WORK_SUBJECTS.score, version: 1, data, metadata });

describe('unit: evals.work.score v1 with the ingestion\'s keyed hashes (additive)', () => {
  it('decodes a message without hashes as before, and one with a key id and hashes', () => {
    const plain = decodeWork(score({ run_id: 'r', items: [{ case_id: 'a', output: 'x' }] }));
    expect(plain).toEqual({ ok: true, message: expect.objectContaining({ data: { run_id: 'r', items: [{ case_id: 'a', output: 'x' }] } }) });
    const keyed = { run_id: 'r', detail_key: detailKeyId(KEY), items: [{ case_id: 'a', output: 'x', detail_hash: detailHash(KEY, 'x') }, { case_id: 'b', output: 'y' }] };
    const decoded = decodeWork(score(keyed));
    expect(decoded.ok && decoded.message.data).toEqual(keyed);
  });

  it.each<[string, object, string]>([
    ['a hash without a key id', { run_id: 'r', items: [{ case_id: 'a', output: 'x', detail_hash: 'a'.repeat(64) }] }, 'data.items[0].detail_hash: not a keyed hash'],
    ['a hash that is not sha256 hex', { run_id: 'r', detail_key: 'k1', items: [{ case_id: 'a', output: 'x' }, { case_id: 'b', output: 'y', detail_hash: 'A'.repeat(64) }] }, 'data.items[1].detail_hash: not a keyed hash'],
    ['a short hash', { run_id: 'r', detail_key: 'k1', items: [{ case_id: 'a', output: 'x', detail_hash: 'ab' }] }, 'data.items[0].detail_hash: not a keyed hash'],
    ['a hash that is not a string', { run_id: 'r', detail_key: 'k1', items: [{ case_id: 'a', output: 'x', detail_hash: 7 }] }, 'data.items[0].detail_hash: not a keyed hash'],
    ['an empty key id', { run_id: 'r', detail_key: '', items: [] }, 'data.detail_key: not a key id'],
    ['a key id that is not a string', { run_id: 'r', detail_key: 1, items: [] }, 'data.detail_key: not a key id'],
  ])('refuses %s, naming the field only (D1)', (_what, data, reason) => {
    expect(decodeWork(raw(data))).toEqual({ ok: false, reason });
  });
});
