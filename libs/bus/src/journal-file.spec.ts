import { encodeRecord, pubRecordBytes, type JournalRecord } from './journal-file';

describe('journal-file: the size of a publish record, counted without encoding it', () => {
  it.each<Extract<JournalRecord, { k: 'pub' }>>([
    { k: 'pub', seq: 1, s: 'evals.work.score', id: 'run-1:score:0', t: 1_764_500_000_000, d: Buffer.from('{"a":1}').toString('base64') },
    { k: 'pub', seq: 123_456_789, s: 'p.evals.run.requested', id: null, t: 0, d: '' },
    { k: 'pub', seq: 7, s: 'evals.work.seal', id: 'quote " back\\slash é ✓ \u0001', t: 42, d: Buffer.from('x'.repeat(1000)).toString('base64') },
  ])('matches the encoded line: %#', (record) => {
    expect(pubRecordBytes(record)).toBe(Buffer.byteLength(encodeRecord(record, 0)));
  });
});
