import { RunModel, type RunOpenedV1 } from '@evals/domain';
import { StreamVersionConflict, type EventStore, type NewEvent, type RunExpiryQueries } from '@evals/persistence';
import type { DataSource } from 'typeorm';
import { RunStreams } from './run-streams';

const opened = {
  run_id: 'r1',
  suite_key: 's',
  suite_version: 1,
  suite_content_hash: 'sha256:x',
  pass_threshold: 0.5,
  regression_threshold: 0.1,
  subject_kind: 'agent',
  subject_id: 'bot',
  variant: null,
  baseline_run_id: null,
  source: 'ci',
  case_count: 2,
  scorer_versions: {},
} as unknown as RunOpenedV1;

/** One stream in memory with the event store's optimistic concurrency; counts its reads. */
function setup() {
  const stream: NewEvent[] = [];
  const counts = { reads: 0, appends: 0 };
  const events = {
    // Loads go through one multi-stream read for what is asked together: r1's stream; any other run is empty.
    readStreams: async (_m: unknown, ids: readonly string[]) => {
      counts.reads++;
      const r1 = stream.map((e, i) => ({ ...e, stream_id: 'run-r1', stream_version: i + 1, position: i + 1 }));
      return new Map(ids.filter((id) => id === 'run-r1' && r1.length > 0).map((id) => [id, r1]));
    },
    // The intake's appends go through GroupedAppends: one appendMany for what is decided together.
    appendMany: async (_m: unknown, appends: ReadonlyArray<{ streamId: string; expectedVersion: number; events: NewEvent[] }>) =>
      appends.map(({ streamId, expectedVersion, events: add }) => {
        if (expectedVersion !== stream.length) throw new StreamVersionConflict(streamId, expectedVersion);
        counts.appends++;
        stream.push(...add);
        return [];
      }),
  } as unknown as EventStore;
  const db = { transaction: async (work: (m: unknown) => Promise<unknown>) => work({}) } as unknown as DataSource;
  let id = 0;
  const streams = new RunStreams(db, events, {} as RunExpiryQueries, { now: () => new Date('2026-12-01T10:00:00Z') }, { uuid: () => `00000000-0000-4000-8000-${String(++id).padStart(12, '0')}` });
  return { streams, stream, counts };
}

const cause = { message_id: 'm1', correlation_id: 'c1' };
const open = { type: 'open' as const, data: opened, request_hash: 'h', outputs: null };

describe('unit: RunStreams.decide (issue 15: the intake reads a run once per step)', () => {
  it('decided on a state the caller just read: no second read, and the run after it folded here equals the stream read back', async () => {
    const { streams, counts } = setup();
    const before = await streams.load('r1');
    const { appended, run } = await streams.decide('r1', open, cause, before);
    expect(appended).toBe(true);
    expect(counts.reads).toBe(1);
    expect(run).toEqual(await streams.load('r1'));
    const received = await streams.decide('r1', { type: 'receive_outputs', run_id: 'r1' }, cause, run);
    expect(received.run).toEqual(await streams.load('r1'));
    expect(RunModel.isSealed(received.run.state)).toBe(false);
    expect(received.run.state.outputs_received).toBe(true);
  });

  it('a stale state conflicts on append and the command is decided again on the stream as it is', async () => {
    const { streams, counts } = setup();
    const stale = await streams.load('r1');
    await streams.decide('r1', open, cause);
    // Another writer opened it meanwhile: the same open again is no append, decided on the real stream.
    const again = await streams.decide('r1', open, cause, stale);
    expect(again.appended).toBe(false);
    expect(again.run.version).toBe(1);
    expect(counts.appends).toBe(1);
  });

  it('a refusal on a stale state is checked on a fresh read: the answer is the stream\'s', async () => {
    const { streams } = setup();
    await streams.decide('r1', open, cause);
    const stale = await streams.load('r1');
    await streams.decide('r1', { type: 'receive_outputs', run_id: 'r1' }, cause);
    // On the stale state (no output received yet) a seal would be EMPTY_RUN; on the stream it seals.
    expect(() => RunModel.decide({ type: 'seal', run_id: 'r1' }, stale.state)).toThrow(/no output/);
    const sealed = await streams.decide('r1', { type: 'seal', run_id: 'r1' }, cause, stale);
    expect(sealed.appended).toBe(true);
    expect(RunModel.isSealed(sealed.run.state)).toBe(true);
  });

  it('issue 28: runs loaded at the same time (a batch\'s lanes) are read in one query, each folded on its own', async () => {
    const { streams, counts } = setup();
    await streams.decide('r1', open, cause);
    const before = counts.reads;
    const [r1, other, again] = await Promise.all([streams.load('r1'), streams.load('r2'), streams.load('r1')]);
    expect(counts.reads - before).toBe(1);
    expect(r1.state.opened?.run_id).toBe('r1');
    expect(again).toEqual(r1);
    expect(other).toEqual({ state: expect.objectContaining({ opened: null }), version: 0 });
  });
});
