import type { JetStreamClient } from '@nats-io/jetstream';
import type { PublishPort } from './run-publisher';

/**
 * The publisher's port on a `@nats-io/jetstream` client. `subjectPrefix` is for isolated environments (the
 * tests' and benchmarks' prefixed streams); production subjects are exactly those of docs/contracts.md.
 */
export function jetStreamPort(js: JetStreamClient, subjectPrefix = ''): PublishPort {
  const prefix = subjectPrefix === '' ? '' : `${subjectPrefix}.`;
  return {
    async publish(subject, payload, messageId) {
      const ack = await js.publish(`${prefix}${subject}`, payload, { msgID: messageId });
      return { duplicate: ack.duplicate };
    },
  };
}
