import type { BusMessage, ConsumeOptions, MessageBus, Subscription } from './message-bus.port';
import { CONSUMERS, contractSubject, subjectOf, type ConsumerSpec } from './topology';

/**
 * What every MessageBus adapter must do, as the apps rely on it (docs/pipeline.md). Declared once, run by
 * jetstream.bus.int-spec.ts against a real JetStream and by in-process.bus.int-spec.ts against the embedded
 * bus. `open` gives a bus with names no other test uses, its topology not yet ensured.
 */
export interface OpenedBus {
  readonly bus: MessageBus;
  teardown(): Promise<void>;
}

/** Polls until `predicate` holds; fails with `what` after the deadline. */
export async function waitFor(predicate: () => boolean | Promise<boolean>, what = 'condition', timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const text = (message: BusMessage) => new TextDecoder().decode(message.data);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const TEST_TIMEOUT = 30_000;

export function messageBusContract(label: string, open: () => Promise<OpenedBus>): void {
  describe(`MessageBus contract: ${label}`, () => {
    let bus: MessageBus;
    let teardown: () => Promise<void>;
    let subscriptions: Subscription[];

    const subject = (s: string) => subjectOf(bus.names, s);
    const consume = async (consumer: ConsumerSpec, options: ConsumeOptions): Promise<Subscription> => {
      const subscription = await bus.consume(consumer, options);
      let stopped: Promise<void> | undefined;
      const once: Subscription = {
        get busy() {
          return subscription.busy;
        },
        stop: () => (stopped ??= subscription.stop()),
      };
      subscriptions.push(once);
      return once;
    };
    const publishAll = async (s: string, count: number, idPrefix: string) => {
      const seqs: number[] = [];
      for (let i = 0; i < count; i++) seqs.push((await bus.publish(subject(s), `${idPrefix}${i}`, `${idPrefix}${i}`)).seq);
      return seqs;
    };

    beforeEach(async () => {
      ({ bus, teardown } = await open());
      subscriptions = [];
      await bus.ensureTopology();
    });

    afterEach(async () => {
      await Promise.all(subscriptions.map((s) => s.stop()));
      await teardown();
    });

    it('ensures the topology idempotently, keeping what is stored', async () => {
      await bus.publish(subject('evals.work.score'), 'kept', 'kept-1');
      await bus.ensureTopology();
      await bus.ensureTopology();
      expect(await bus.pending(CONSUMERS.scoringWorker)).toBe(1);
      const got: string[] = [];
      await consume(CONSUMERS.scoringWorker, {
        maxBatch: 10,
        handler: async (batch) => {
          for (const m of batch) {
            got.push(text(m));
            m.ack();
          }
        },
      });
      await waitFor(() => got.length === 1, 'the message stored before the second ensureTopology');
      expect(got).toEqual(['kept']);
    }, TEST_TIMEOUT);

    it('de-duplicates a repeated message id: same seq, duplicate true, stored once', async () => {
      const first = await bus.publish(subject('evals.work.score'), 'one', 'm-1');
      const again = await bus.publish(subject('evals.work.score'), 'one again', 'm-1');
      const other = await bus.publish(subject('evals.work.score'), 'two', 'm-2');
      expect(first.duplicate).toBe(false);
      expect(again).toEqual({ seq: first.seq, duplicate: true });
      expect(other).toEqual({ seq: first.seq + 1, duplicate: false });
      expect(await bus.pending(CONSUMERS.scoringWorker)).toBe(2);
      const got: Array<[string, string | null]> = [];
      await consume(CONSUMERS.scoringWorker, {
        maxBatch: 10,
        handler: async (batch) => {
          for (const m of batch) {
            got.push([text(m), m.messageId]);
            m.ack();
          }
        },
      });
      await waitFor(async () => got.length === 2 && (await bus.pending(CONSUMERS.scoringWorker)) === 0, 'both messages handled');
      expect(got).toEqual([
        ['one', 'm-1'],
        ['two', 'm-2'],
      ]);
    }, TEST_TIMEOUT);

    it('hands what is waiting over in batches of at most maxBatch, every message once', async () => {
      const count = 60;
      const seqs = await publishAll('evals.work.score', count, 'b-');
      const deliveries = new Map<number, number>();
      const sizes: number[] = [];
      const wrong: string[] = [];
      await consume(CONSUMERS.scoringWorker, {
        maxBatch: 8,
        handler: async (batch) => {
          sizes.push(batch.length);
          for (const m of batch) {
            deliveries.set(m.seq, (deliveries.get(m.seq) ?? 0) + 1);
            if (m.deliveryCount !== 1 || text(m) !== m.messageId || contractSubject(bus.names, m.subject) !== 'evals.work.score') {
              wrong.push(`${m.seq}:${m.deliveryCount}:${m.messageId}:${m.subject}`);
            }
            m.ack();
          }
        },
      });
      await waitFor(() => deliveries.size === count, 'every message delivered');
      await waitFor(async () => (await bus.pending(CONSUMERS.scoringWorker)) === 0, 'every message acknowledged');
      expect([...deliveries.keys()].sort((a, b) => a - b)).toEqual(seqs);
      expect([...deliveries.values()].every((n) => n === 1)).toBe(true);
      expect(wrong).toEqual([]);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(8);
      expect(Math.max(...sizes)).toBeGreaterThan(1);
    }, TEST_TIMEOUT);

    it('cuts a batch at maxBatchBytes, and hands a message larger than that over alone', async () => {
      const kib = (n: number, tag: string) => tag.padEnd(n * 1024, '.');
      const sizes = [10, 10, 10, 10, 40, 10, 10];
      for (const [i, n] of sizes.entries()) await bus.publish(subject('evals.work.score'), kib(n, `y-${i}`), `y-${i}`);
      const batches: number[][] = [];
      await consume(CONSUMERS.scoringWorker, {
        maxBatch: 100,
        maxBatchBytes: 25 * 1024,
        handler: async (batch) => {
          batches.push(batch.map((m) => Math.round(m.data.length / 1024)));
          for (const m of batch) m.ack();
        },
      });
      await waitFor(() => batches.flat().length === sizes.length, 'every message handled');
      expect(batches.flat()).toEqual(sizes);
      for (const batch of batches) {
        const bytes = batch.reduce((sum, n) => sum + n, 0);
        if (batch.length > 1) expect(bytes).toBeLessThanOrEqual(25);
      }
      expect(batches).toContainEqual([40]);
    }, TEST_TIMEOUT);

    it('a busy subscription holds at most a batch, the next and its prefetch: another process of the durable gets the rest', async () => {
      // Back-pressure (docs/pipeline.md): a process whose handler is busy must stop taking deliveries, or a
      // burst of large work messages piles up in one process's memory while the others idle.
      const count = 120;
      const maxBatch = 5;
      const prefetch = 10;
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const byA = new Set<number>();
      const a = await consume(CONSUMERS.scoringWorker, {
        maxBatch,
        prefetch,
        handler: async (batch) => {
          for (const m of batch) byA.add(m.seq);
          await released;
          for (const m of batch) m.ack();
        },
      });
      const seqs = await publishAll('evals.work.score', count, 'p-');
      await waitFor(() => a.busy > 0, 'the first process busy with a batch');
      const byB = new Set<number>();
      await consume(CONSUMERS.scoringWorker, {
        maxBatch: 10,
        handler: async (batch) => {
          for (const m of batch) {
            byB.add(m.seq);
            m.ack();
          }
        },
      });
      const held = 2 * maxBatch + prefetch;
      // Well inside the consumer's ack wait (60 s): what the busy process took could not come back to B sooner.
      await waitFor(() => byB.size >= count - held, `the second process handles all but at most ${held}`, 15_000);
      release();
      await waitFor(() => byA.size + byB.size === count, 'every message handled');
      await waitFor(async () => (await bus.pending(CONSUMERS.scoringWorker)) === 0, 'every message acknowledged');
      expect([...byA, ...byB].sort((x, y) => x - y)).toEqual(seqs);
      expect([...byA].filter((seq) => byB.has(seq))).toEqual([]);
    }, TEST_TIMEOUT);

    it('redelivers the whole batch of a throwing handler (deliveryCount 2), losing nothing', async () => {
      const seqs = await publishAll('evals.work.score', 5, 'f-');
      let failed: number[] | undefined;
      const reported: number[][] = [];
      const acked = new Map<number, number>();
      await consume(CONSUMERS.scoringWorker, {
        maxBatch: 10,
        retryDelayMs: 50,
        onError: (_error, batch) => reported.push(batch.map((m) => m.seq)),
        handler: async (batch) => {
          if (!failed) {
            failed = batch.map((m) => m.seq);
            throw new Error('transient');
          }
          for (const m of batch) {
            acked.set(m.seq, m.deliveryCount);
            m.ack();
          }
        },
      });
      await waitFor(() => acked.size === seqs.length, 'every message acknowledged after the failure');
      expect(failed!.length).toBeGreaterThan(0);
      expect(reported).toEqual([failed]);
      for (const seq of failed!) expect(acked.get(seq)).toBe(2);
      expect([...acked.keys()].sort((a, b) => a - b)).toEqual(seqs);
      await waitFor(async () => (await bus.pending(CONSUMERS.scoringWorker)) === 0, 'nothing pending');
    }, TEST_TIMEOUT);

    it('redelivers a nak-ed message after its delay', async () => {
      await bus.publish(subject('evals.work.score'), 'later', 'nak-1');
      const times: Array<[number, number]> = [];
      await consume(CONSUMERS.scoringWorker, {
        maxBatch: 1,
        handler: async ([m]) => {
          times.push([m.deliveryCount, Date.now()]);
          if (m.deliveryCount === 1) m.nak(400);
          else m.ack();
        },
      });
      await waitFor(() => times.length === 2, 'the redelivery');
      expect(times.map(([count]) => count)).toEqual([1, 2]);
      expect(times[1][1] - times[0][1]).toBeGreaterThanOrEqual(350);
    }, TEST_TIMEOUT);

    it('honours a filter subject: the regression durable sees only evals.event.run.scored', async () => {
      await bus.publish(subject('evals.event.run.scored'), 's1', 'e-1');
      await bus.publish(subject('evals.event.run.started'), 'x', 'e-2');
      await bus.publish(subject('evals.event.run.scored'), 's2', 'e-3');
      const regression: string[] = [];
      const readModel: string[] = [];
      const collect = (into: string[]) => async (batch: BusMessage[]) => {
        for (const m of batch) {
          into.push(contractSubject(bus.names, m.subject));
          m.ack();
        }
      };
      await consume(CONSUMERS.regression, { maxBatch: 10, handler: collect(regression) });
      await consume(CONSUMERS.readModel, { maxBatch: 10, handler: collect(readModel) });
      await waitFor(() => readModel.length === 3 && regression.length === 2, 'both durables served');
      await waitFor(async () => (await bus.pending(CONSUMERS.regression)) === 0 && (await bus.pending(CONSUMERS.readModel)) === 0, 'both acknowledged');
      expect(regression).toEqual(['evals.event.run.scored', 'evals.event.run.scored']);
      expect(readModel.sort()).toEqual(['evals.event.run.scored', 'evals.event.run.scored', 'evals.event.run.started']);
    }, TEST_TIMEOUT);

    it('deletes a work-queue message once acknowledged: nothing pending, never delivered again', async () => {
      await bus.publish(subject('evals.output.submitted'), 'output', 'o-1');
      expect(await bus.pending(CONSUMERS.ingestion)).toBe(1);
      const first: string[] = [];
      const sub = await consume(CONSUMERS.ingestion, {
        maxBatch: 10,
        handler: async (batch) => {
          for (const m of batch) {
            first.push(text(m));
            await m.ackConfirmed();
          }
        },
      });
      await waitFor(() => first.length === 1, 'the first delivery');
      expect(await bus.pending(CONSUMERS.ingestion)).toBe(0);
      await sub.stop();
      await bus.publish(subject('evals.output.submitted'), 'next', 'o-2');
      const second: string[] = [];
      await consume(CONSUMERS.ingestion, {
        maxBatch: 10,
        handler: async (batch) => {
          for (const m of batch) {
            second.push(text(m));
            m.ack();
          }
        },
      });
      await waitFor(() => second.length === 1, 'the next message');
      await waitFor(async () => (await bus.pending(CONSUMERS.ingestion)) === 0, 'nothing pending');
      expect(first).toEqual(['output']);
      expect(second).toEqual(['next']);
    }, TEST_TIMEOUT);

    it('tells whether everything before a seq is acknowledged (seal ordering)', async () => {
      const a = await bus.publish(subject('evals.work.score'), 'a', 'a');
      expect(await bus.allAcknowledgedBefore(CONSUMERS.scoringWorker, a.seq)).toBe(true);
      await bus.publish(subject('evals.work.score'), 'b', 'b');
      const seal = await bus.publish(subject('evals.work.seal'), 'seal', 'seal');
      expect(await bus.allAcknowledgedBefore(CONSUMERS.scoringWorker, seal.seq)).toBe(false);
      let held: BusMessage | undefined;
      const acked: string[] = [];
      await consume(CONSUMERS.scoringWorker, {
        maxBatch: 10,
        handler: async (batch) => {
          for (const m of batch) {
            if (text(m) === 'b') held = m;
            else {
              await m.ackConfirmed();
              acked.push(text(m));
            }
          }
        },
      });
      await waitFor(() => held !== undefined && acked.length === 2, 'a and the seal acknowledged, b held');
      expect(await bus.allAcknowledgedBefore(CONSUMERS.scoringWorker, seal.seq)).toBe(false);
      await held!.ackConfirmed();
      expect(await bus.allAcknowledgedBefore(CONSUMERS.scoringWorker, seal.seq)).toBe(true);
    }, TEST_TIMEOUT);

    it('shares one durable between two consume() calls, no message handled twice', async () => {
      const count = 60;
      const handledBy = new Map<number, string[]>();
      const handler = (who: string) => async (batch: BusMessage[]) => {
        // Slow enough that neither subscription can take everything alone.
        await new Promise((resolve) => setTimeout(resolve, 5));
        for (const m of batch) {
          handledBy.set(m.seq, [...(handledBy.get(m.seq) ?? []), who]);
          m.ack();
        }
      };
      await consume(CONSUMERS.scoringWorker, { maxBatch: 5, prefetch: 10, handler: handler('A') });
      await consume(CONSUMERS.scoringWorker, { maxBatch: 5, prefetch: 10, handler: handler('B') });
      const seqs = await publishAll('evals.work.score', count, 's-');
      await waitFor(() => handledBy.size === count, 'every message handled');
      await waitFor(async () => (await bus.pending(CONSUMERS.scoringWorker)) === 0, 'every message acknowledged');
      expect([...handledBy.keys()].sort((a, b) => a - b)).toEqual(seqs);
      const all = [...handledBy.values()];
      expect(all.filter((who) => who.length !== 1)).toEqual([]);
      expect(all.filter(([who]) => who === 'A').length).toBeGreaterThan(0);
      expect(all.filter(([who]) => who === 'B').length).toBeGreaterThan(0);
    }, TEST_TIMEOUT);

    it('stop() finishes the batch in hand and hands the unstarted messages back at once', async () => {
      const seqs = await publishAll('evals.work.score', 10, 'h-');
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const first: number[] = [];
      const leaving = await consume(CONSUMERS.scoringWorker, {
        maxBatch: 1,
        prefetch: 20,
        handler: async ([m]) => {
          first.push(m.seq);
          await released;
          m.ack();
        },
      });
      await waitFor(() => first.length === 1 && leaving.busy === 1, 'the first message in hand');
      // Another process of the same durable, idle: it gets what the leaving one hands back.
      const later = new Map<number, number>();
      await consume(CONSUMERS.scoringWorker, {
        maxBatch: 10,
        handler: async (batch) => {
          for (const m of batch) {
            later.set(m.seq, m.deliveryCount);
            m.ack();
          }
        },
      });
      const stopped = leaving.stop();
      release();
      await stopped;
      expect(first).toEqual([seqs[0]]);
      // The ack wait of this durable (60 s) is far past the deadline: only a hand-back gets them here in time.
      await waitFor(() => later.size === 9, 'the other nine, handed back');
      await waitFor(async () => (await bus.pending(CONSUMERS.scoringWorker)) === 0, 'nothing pending');
      expect([...later.keys()].sort((a, b) => a - b)).toEqual(seqs.slice(1));
      // Each went to the leaving subscription first (delivery 1) and came back (delivery 2).
      expect([...later.values()].every((count) => count === 2)).toBe(true);
    }, TEST_TIMEOUT);

    it('stop() with no other subscription running: the next one of the durable gets the unstarted messages at once, each once', async () => {
      const seqs = await publishAll('evals.work.score', 5, 'u-');
      const deliveries: Array<[number, number]> = [];
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const leaving = await consume(CONSUMERS.scoringWorker, {
        maxBatch: 1,
        prefetch: 20,
        handler: async ([m]) => {
          deliveries.push([m.seq, m.deliveryCount]);
          await released;
          m.ack();
        },
      });
      await waitFor(() => leaving.busy === 1, 'the first message in hand');
      // Let the other four reach the subscription's buffer (they come with the first).
      await sleep(100);
      // A single process stopping (a one-replica redeploy): no other subscription of the durable is pulling.
      const stopped = leaving.stop();
      // The batch in hand takes a moment to finish, as a real one would.
      setTimeout(release, 200);
      await stopped;
      expect(deliveries).toEqual([[seqs[0], 1]]);
      // The one in hand acknowledged, the other four owed (a bus that rewound its cursor would owe five).
      const owed = () => bus.pending(CONSUMERS.scoringWorker);
      await waitFor(async () => (await owed()) === 4, 'four owed after the stop', 2_000).catch(() => undefined);
      const owedAfterStop = await owed();
      // The next process comes up a moment later.
      await sleep(500);
      const later: Array<[number, number]> = [];
      await consume(CONSUMERS.scoringWorker, {
        maxBatch: 10,
        handler: async (batch) => {
          for (const m of batch) {
            later.push([m.seq, m.deliveryCount]);
            m.ack();
          }
        },
      });
      // The ack wait of this durable (60 s) is far past this deadline: only a hand-back gets them here in time.
      // On a timeout the assertions below show what did arrive.
      await waitFor(async () => later.length >= 4 && (await owed()) === 0, 'the four handed back', 5_000).catch(() => undefined);
      await sleep(300); // a duplicate would arrive meanwhile
      // Each once more, as a redelivery: none left for the ack wait, none delivered again as new (deliveryCount 1).
      expect({ owedAfterStop, later, owedAtEnd: await owed() }).toEqual({
        owedAfterStop: 4,
        later: seqs.slice(1).map((seq) => [seq, 2]),
        owedAtEnd: 0,
      });
    }, TEST_TIMEOUT);

    it('rejects a publish to a subject no stream takes', async () => {
      await expect(bus.publish(subject('evals.nowhere.at.all'), 'x', 'n-1')).rejects.toThrow();
      expect(bus.healthy).toBe(true);
    }, TEST_TIMEOUT);
  });
}
