import { PRODUCTION_NAMES } from '@evals/bus';
import { decodeWork, detailHash, detailKeyId, type ScoreWorkV1, type WorkItem } from '@evals/domain';
import { WorkPublisher } from './work-publisher';

const KEY = 'publisher-key-0123456789abcdef0123456789';

function publisher() {
  const sent: Array<{ subject: string; data: ScoreWorkV1; id: string }> = [];
  const bus = {
    publish: async (subject: string, payload: Uint8Array | string, id: string) => {
      const decoded = decodeWork(payload);
      if (!decoded.ok) throw new Error(decoded.reason);
      sent.push({ subject, data: decoded.message.data as ScoreWorkV1, id });
      return { seq: sent.length, duplicate: false };
    },
  };
  return { work: new WorkPublisher(bus, PRODUCTION_NAMES, { now: () => new Date('2026-12-01T00:00:00Z') }), sent };
}

const cause = { message_id: 'req-1', correlation_id: 'corr-1' };
const keyed = (case_id: string, output: string) => ({ case_id, output, detail_hash: detailHash(KEY, output) });

describe('unit: work messages carry the ingestion\'s keyed hashes, under a named key', () => {
  it('with a key id: every message names it and every item keeps its hash (the worker need not hash again)', async () => {
    const { work, sent } = publisher();
    const items = Array.from({ length: 1_200 }, (_, i) => keyed(`c${i}`, `out ${i}`));
    await work.forward('run-1', items, cause, detailKeyId(KEY));
    expect(sent.map((s) => s.id)).toEqual(['req-1:score:0', 'req-1:score:1', 'req-1:score:2']);
    for (const s of sent) expect(s.data.detail_key).toBe(detailKeyId(KEY));
    expect(sent.flatMap((s) => s.data.items)).toEqual(items);
  });

  it('without one (the streamed path): no key id, and a stray hash is left out rather than vouched for', async () => {
    const { work, sent } = publisher();
    const items: WorkItem[] = [{ case_id: 'a', output: 'x' }, keyed('b', 'y')];
    await work.forward('run-1', items, cause);
    expect(sent).toHaveLength(1);
    expect(sent[0].data).toEqual({ run_id: 'run-1', items: [{ case_id: 'a', output: 'x' }, { case_id: 'b', output: 'y' }] });
  });

  it('counts the hashes in a message\'s size: large keyed outputs still split under the byte bound', async () => {
    const { work, sent } = publisher();
    const big = 'é'.repeat(60_000);
    await work.forward('run-1', Array.from({ length: 8 }, (_, i) => keyed(`c${i}`, big)), cause, detailKeyId(KEY));
    expect(sent.length).toBeGreaterThan(1);
    for (const s of sent) expect(Buffer.byteLength(JSON.stringify(s.data))).toBeLessThan(1024 * 1024);
  });
});
