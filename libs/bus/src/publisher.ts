import type { JetStreamClient } from '@nats-io/jetstream';

/** The one way this service puts bytes on JetStream: always with a message id, so retries de-duplicate. */
export interface MessagePublisher {
  publish(subject: string, payload: Uint8Array | string, messageId: string): Promise<{ seq: number; duplicate: boolean }>;
}

export class JetStreamPublisher implements MessagePublisher {
  constructor(
    private readonly js: JetStreamClient,
    private readonly timeoutMs = 5_000,
  ) {}

  async publish(subject: string, payload: Uint8Array | string, messageId: string): Promise<{ seq: number; duplicate: boolean }> {
    const ack = await this.js.publish(subject, payload, { msgID: messageId, timeout: this.timeoutMs });
    return { seq: ack.seq, duplicate: ack.duplicate };
  }
}
