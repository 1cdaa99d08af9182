import type { BusMessage } from './message-bus.port';

/**
 * Acknowledges messages of one consumer that were handled together: the last one confirmed, the others
 * plain. A confirmed ack is a request (reply inbox, timer) per message - one per output was the largest cost
 * of the streamed path after decoding (issue 15). The server handles one connection's acks of one consumer
 * in order, so once the last is confirmed the others are in; one that got lost only redelivers its message,
 * which every consumer of the service recognises as a repeat (at-least-once holds either way).
 */
export async function acknowledgeAll(messages: readonly BusMessage[]): Promise<void> {
  if (messages.length === 0) return;
  for (let i = 0; i < messages.length - 1; i++) messages[i].ack();
  await messages[messages.length - 1].ackConfirmed();
}
