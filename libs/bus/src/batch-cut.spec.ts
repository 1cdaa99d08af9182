import { batchLength } from './batch-cut';

describe('batchLength (unit)', () => {
  const limits = { maxBatch: 4, maxBatchBytes: 100 };

  it('takes up to maxBatch messages while their bytes fit', () => {
    expect(batchLength([10, 10, 10, 10, 10, 10], limits)).toBe(4);
    expect(batchLength([10, 10], limits)).toBe(2);
    expect(batchLength([], limits)).toBe(0);
  });

  it('cuts before the message that would take the batch over maxBatchBytes', () => {
    expect(batchLength([40, 40, 40], limits)).toBe(2);
    expect(batchLength([50, 50, 1], limits)).toBe(2);
    expect(batchLength([100, 1], limits)).toBe(1);
  });

  it('takes a message larger than the byte limit alone, so it is never stuck', () => {
    expect(batchLength([500, 10], limits)).toBe(1);
    expect(batchLength([10, 500], limits)).toBe(1);
  });
});
