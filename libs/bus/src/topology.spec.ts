import { AckPolicy, DeliverPolicy, DiscardPolicy, RetentionPolicy, StorageType, type JetStreamManager } from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import { CONSUMERS, STREAMS, ensureConsumer, streamConfig } from './topology';

const names = { streamPrefix: 'T_', subjectPrefix: 't' };

/**
 * topology.ts writes the NATS client's constants by value, so that the all-in-one never loads the client
 * (issue 15). What must hold: every value is the client's own - a typo would create streams with another
 * retention, or a consumer with another ack policy, and only a server would notice.
 */
describe('unit: the JetStream topology spells the client constants right', () => {
  it('streams: work queues and limits as the client names them, file or memory storage, old messages discarded, ages in nanoseconds', () => {
    const byName = Object.fromEntries(STREAMS.map((spec) => [spec.name, streamConfig(names, spec)]));
    expect(byName.EVALS_INBOUND!.retention).toBe(RetentionPolicy.Workqueue);
    expect(byName.EVALS_WORK!.retention).toBe(RetentionPolicy.Workqueue);
    expect(byName.EVALS_EVENTS!.retention).toBe(RetentionPolicy.Limits);
    expect(byName.EVALS_OUTBOUND!.retention).toBe(RetentionPolicy.Limits);
    for (const config of Object.values(byName)) {
      expect(config.storage).toBe(StorageType.File);
      expect(config.discard).toBe(DiscardPolicy.Old);
      expect(config.duplicate_window).toBe(nanos(120_000));
    }
    expect(byName.EVALS_OUTBOUND!.max_age).toBe(nanos(14 * 24 * 3600 * 1000));
    expect(streamConfig(names, STREAMS[0]!, { storage: 'memory', duplicateWindowSeconds: 5 })).toMatchObject({ storage: StorageType.Memory, duplicate_window: nanos(5_000) });
  });

  it('consumers: explicit acks, delivered from the start, the ack wait in nanoseconds', async () => {
    const added: Array<{ stream: string; config: Record<string, unknown> }> = [];
    const jsm = {
      consumers: {
        info: () => Promise.reject(new Error('consumer not found')),
        add: (stream: string, config: Record<string, unknown>) => {
          added.push({ stream, config });
          return Promise.resolve({});
        },
      },
    } as unknown as JetStreamManager;
    await ensureConsumer(jsm, names, CONSUMERS.regression);
    expect(added).toEqual([
      {
        stream: 'T_EVALS_EVENTS',
        config: expect.objectContaining({
          durable_name: 'regression',
          ack_policy: AckPolicy.Explicit,
          deliver_policy: DeliverPolicy.All,
          ack_wait: nanos(CONSUMERS.regression.ackWaitSeconds * 1000),
          filter_subject: 't.evals.event.run.scored',
        }),
      },
    ]);
  });
});
