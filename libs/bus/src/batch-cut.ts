/**
 * How much one micro-batch may hold. Counting messages alone is not enough: a work message of a streamed run
 * carries up to 384 KiB, so 500 of them - one worker batch by count - would be 190 MB in hand before a byte
 * of it is decoded. Both buses cut their batches here, so they agree on what a batch is.
 */
export const DEFAULT_MAX_BATCH_BYTES = 8 * 1024 * 1024;

export interface BatchLimits {
  readonly maxBatch: number;
  readonly maxBatchBytes: number;
}

/**
 * How many of `sizes` (payload bytes, in delivery order) the next batch takes: up to `maxBatch` and up to
 * `maxBatchBytes` in all, but always at least one, so a message larger than the byte limit is still handled
 * (alone) rather than stuck.
 */
export function batchLength(sizes: readonly number[], limits: BatchLimits): number {
  const most = Math.min(sizes.length, limits.maxBatch);
  let bytes = 0;
  for (let i = 0; i < most; i++) {
    bytes += sizes[i];
    if (bytes > limits.maxBatchBytes) return Math.max(i, 1);
  }
  return most;
}
