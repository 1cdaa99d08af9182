import type { JetStreamManager } from '@nats-io/jetstream';

/**
 * True when every message of the consumer's stream before `streamSeq` has been acknowledged. A seal uses
 * it to wait for the outputs published before it, which other processes of the same durable consumer may
 * still be handling (docs/pipeline.md).
 */
export async function allAcknowledgedBefore(jsm: JetStreamManager, stream: string, durable: string, streamSeq: number): Promise<boolean> {
  const info = await jsm.consumers.info(stream, durable);
  return info.ack_floor.stream_seq >= streamSeq - 1;
}
