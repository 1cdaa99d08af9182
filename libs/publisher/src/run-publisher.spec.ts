import { decodeMessage, MAX_OUTPUT_BYTES, messageProject, SUBJECTS } from '@evals/contracts';
import { EvalsPublisher, type PublishPort } from './run-publisher';

/** A bus that stores what it is given, in order, resolving each publish when `release` says so. */
function fakeBus(options: { hold?: boolean } = {}) {
  const stored: Array<{ subject: string; payload: string; id: string }> = [];
  const waiting: Array<() => void> = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const port: PublishPort = {
    publish(subject, payload, id) {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const store = () => {
        inFlight--;
        stored.push({ subject, payload, id });
      };
      if (!options.hold || subject !== SUBJECTS.OUTPUTS_SUBMITTED) {
        store();
        return Promise.resolve({ duplicate: false });
      }
      return new Promise((resolve) => waiting.push(() => (store(), resolve({ duplicate: false }))));
    },
  };
  return { port, stored, release: () => waiting.splice(0).forEach((go) => go()), pending: () => waiting.length, maxInFlight: () => maxInFlight };
}

const opening = { run_id: 'run-28', suite_key: 'support', subject_kind: 'agent', subject_id: 'bot', source: 'sandbox' as const };
const now = () => new Date('2026-12-03T12:00:00Z');

describe('unit: @evals/publisher (issue 28)', () => {
  it('opens, publishes the outputs in batches of at most batchOutputs, and seals last; every message decodes', async () => {
    const bus = fakeBus();
    const publisher = new EvalsPublisher(bus.port, { sessionId: 's1', batchOutputs: 4, now });
    const run = await publisher.open(opening);
    for (let i = 0; i < 10; i++) await run.output(`c${i}`, `answer ${i}`);
    const summary = await run.seal();
    expect(summary).toEqual({ run_id: 'run-28', outputs: 10, batches: 3, duplicates: 0 });
    expect(bus.stored.map((m) => m.subject)).toEqual([SUBJECTS.RUN_REQUESTED, SUBJECTS.OUTPUTS_SUBMITTED, SUBJECTS.OUTPUTS_SUBMITTED, SUBJECTS.OUTPUTS_SUBMITTED, SUBJECTS.RUN_SEALED]);
    const decoded = bus.stored.map((m) => decodeMessage(m.subject, m.payload));
    expect(decoded.every((d) => d.ok && !d.refused)).toBe(true);
    const outputs = decoded.flatMap((d) => (d.ok && d.message.type === SUBJECTS.OUTPUTS_SUBMITTED ? d.message.data.outputs.map((o) => o.case_id) : []));
    expect(outputs).toEqual(Array.from({ length: 10 }, (_, i) => `c${i}`));
    // Ids name the run, the publisher's session and the part: unique, and the same on a retry of one message.
    expect(bus.stored.map((m) => m.id)).toEqual(['run-28:s1:open', 'run-28:s1:b1', 'run-28:s1:b2', 'run-28:s1:b3', 'run-28:s1:seal']);
    expect(decoded.every((d) => d.ok && d.message.metadata.occurred_at === '2026-12-03T12:00:00.000Z' && d.message.metadata.correlation_id === 'run-28')).toBe(true);
  });

  it('cuts a batch before it would pass batchBytes; an output larger than that goes alone', async () => {
    const bus = fakeBus();
    const run = await new EvalsPublisher(bus.port, { sessionId: 's1', batchBytes: 1000, now }).open(opening);
    await run.output('a', 'x'.repeat(400));
    await run.output('b', 'x'.repeat(400));
    await run.output('big', 'x'.repeat(5000));
    await run.output('c', 'x');
    await run.seal();
    const sizes = bus.stored.filter((m) => m.subject === SUBJECTS.OUTPUTS_SUBMITTED).map((m) => (JSON.parse(m.payload).data.outputs as Array<{ case_id: string }>).map((o) => o.case_id));
    expect(sizes).toEqual([['a', 'b'], ['big'], ['c']]);
  });

  it('waits while maxInFlight batches are unstored (back-pressure), and seals only once every batch is stored', async () => {
    const bus = fakeBus({ hold: true });
    const run = await new EvalsPublisher(bus.port, { sessionId: 's1', batchOutputs: 1, maxInFlight: 2, now }).open(opening);
    await run.output('c0', 'a');
    await run.output('c1', 'b');
    let third = false;
    const adding = run.output('c2', 'c').then(() => (third = true));
    await new Promise((r) => setImmediate(r));
    expect(third).toBe(false); // two batches in flight: the third waits
    expect(bus.pending()).toBe(2);
    bus.release();
    await adding;
    let sealed = false;
    const sealing = run.seal().then(() => (sealed = true));
    await new Promise((r) => setImmediate(r));
    expect(sealed).toBe(false);
    expect(bus.stored.some((m) => m.subject === SUBJECTS.RUN_SEALED)).toBe(false);
    bus.release();
    await sealing;
    expect(bus.stored.at(-1)!.subject).toBe(SUBJECTS.RUN_SEALED);
    expect(bus.maxInFlight()).toBe(2);
  });

  it('refuses an invalid output at output(), naming its case and never the output (D1); a failed publish fails the run', async () => {
    const bus = fakeBus();
    const run = await new EvalsPublisher(bus.port, { sessionId: 's1', now }).open(opening);
    const canary = 'CANARY-publisher-1f0a';
    await expect(run.output('c1', canary + 'x'.repeat(MAX_OUTPUT_BYTES))).rejects.toMatchObject({ code: 'OUTPUT_TOO_LARGE', reason: expect.stringContaining('case c1') });
    await expect(run.output('bad id', canary)).rejects.toMatchObject({ code: 'INVALID_PAYLOAD' });
    const failing = new EvalsPublisher({ publish: async (subject) => { if (subject === SUBJECTS.OUTPUTS_SUBMITTED) throw new Error('no responders'); return { duplicate: false }; } }, { sessionId: 's2', batchOutputs: 1, now });
    const doomed = await failing.open(opening);
    await doomed.output('c1', 'a');
    await expect(doomed.seal()).rejects.toThrow('no responders');
    expect(() => new EvalsPublisher(bus.port, { sessionId: 'has space' })).toThrow();
  });

  describe('issue 30: the project of the run', () => {
    async function publishRun(publisher: EvalsPublisher, bus: ReturnType<typeof fakeBus>, project?: string) {
      const run = await publisher.open(opening, undefined, project === undefined ? {} : { project });
      await run.output('c0', 'a');
      await run.output('c1', 'b');
      await run.seal();
      return bus.stored.map((m) => JSON.parse(m.payload) as { metadata: Record<string, unknown> });
    }

    it('writes the project as metadata.project on every message it publishes (open, batches, seal)', async () => {
      const bus = fakeBus();
      const sent = await publishRun(new EvalsPublisher(bus.port, { sessionId: 's1', batchOutputs: 1, project: 'team-a', now }), bus);
      expect(sent).toHaveLength(4);
      expect(sent.map((m) => m.metadata['project'])).toEqual(['team-a', 'team-a', 'team-a', 'team-a']);
      // The service reads it back as the run's project; the subjects stay the bare inbound ones.
      const decoded = bus.stored.map((m) => decodeMessage(m.subject, m.payload));
      expect(decoded.map((d) => (d.ok ? messageProject(d.message.metadata) : 'refused'))).toEqual(['team-a', 'team-a', 'team-a', 'team-a']);
      expect(bus.stored.map((m) => m.subject)).toEqual([SUBJECTS.RUN_REQUESTED, SUBJECTS.OUTPUTS_SUBMITTED, SUBJECTS.OUTPUTS_SUBMITTED, SUBJECTS.RUN_SEALED]);
    });

    it('writes nothing without a project, nor for default: the messages are those of a publisher before projects', async () => {
      const plain = fakeBus();
      const before = await publishRun(new EvalsPublisher(plain.port, { sessionId: 's1', now }), plain);
      expect(before.every((m) => !('project' in m.metadata))).toBe(true);
      const named = fakeBus();
      await publishRun(new EvalsPublisher(named.port, { sessionId: 's1', project: 'default', now }), named);
      expect(named.stored.map((m) => m.payload)).toEqual(plain.stored.map((m) => m.payload));
    });

    it("a run's own project wins over the publisher's, for that run only", async () => {
      const bus = fakeBus();
      const publisher = new EvalsPublisher(bus.port, { sessionId: 's1', project: 'team-a', now });
      const other = await publishRun(publisher, bus, 'team-b');
      expect(other.map((m) => m.metadata['project'])).toEqual(['team-b', 'team-b', 'team-b']);
      const bus2 = fakeBus();
      const again = await publishRun(new EvalsPublisher(bus2.port, { sessionId: 's1', project: 'team-a', now }), bus2, 'default');
      expect(again.every((m) => !('project' in m.metadata))).toBe(true);
    });

    it('refuses a project that is not a project id before publishing anything', async () => {
      const bus = fakeBus();
      for (const bad of ['Team-A', 'a.b', 'a:b', '', '-a', 'x'.repeat(64)]) {
        expect(() => new EvalsPublisher(bus.port, { sessionId: 's1', project: bad })).toThrow(expect.objectContaining({ code: 'INVALID_ENVELOPE' }));
        await expect(new EvalsPublisher(bus.port, { sessionId: 's1' }).open(opening, undefined, { project: bad })).rejects.toMatchObject({ code: 'INVALID_ENVELOPE' });
      }
      expect(bus.stored).toHaveLength(0);
    });
  });
});
