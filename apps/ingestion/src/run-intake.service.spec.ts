/**
 * The intake's orchestration (R7), with its adapters faked in memory and the real run model: what it
 * appends and publishes, and in which order. The same behaviour against PostgreSQL and a real bus is
 * `run-intake.int-spec.ts`; these show each rule on its own and fast.
 */
import { RunModel, RunRuleError, type RunCommand, type RunEvent, type WorkItem } from '@evals/domain';
import type { SuiteRepository, SuiteVersionWithCases } from '@evals/persistence';
import type { DataSource } from 'typeorm';
import { IntakeError } from './intake-error';
import { RunIntakeService, type OpenRunCommand } from './run-intake.service';
import type { Causation, RunStreams } from './run-streams';
import type { WorkPublisher } from './work-publisher';

const NOW = new Date('2026-12-01T10:00:00.000Z');

/** Run streams in memory, written only through the real model, as RunStreams writes them. */
class MemoryStreams {
  readonly log: Array<{ run_id: string; event: RunEvent; at: string }> = [];
  now = NOW;

  async load(runId: string) {
    const events = this.log.filter((e) => e.run_id === runId).map((e) => ({ event: e.event, occurred_at: e.at }));
    return { state: RunModel.foldRun(events), version: events.length };
  }

  async decideAndAppend(runId: string, command: RunCommand, cause: Causation): Promise<boolean> {
    return (await this.decide(runId, command, cause)).appended;
  }

  /** Always decided on the stream as it is (a `known` state is only an optimisation of the real one). */
  async decide(runId: string, command: RunCommand, _cause: Causation) {
    const decided = RunModel.decide(command, (await this.load(runId)).state);
    for (const event of decided) this.log.push({ run_id: runId, event, at: this.now.toISOString() });
    return { appended: decided.length > 0, run: await this.load(runId) };
  }

  types(runId: string): string[] {
    return this.log.filter((e) => e.run_id === runId).map((e) => e.event.type);
  }
}

/** The bus as the intake sees it: every publish recorded in order, the Nth failing when asked. */
class RecordingWork {
  readonly calls: Array<{ kind: 'forward' | 'seal'; run_id: string; cases: string[]; message_id: string; streamLength: number }> = [];
  failOn: number | null = null;
  constructor(private readonly streams: MemoryStreams) {}

  async forward(runId: string, items: readonly WorkItem[], cause: Causation): Promise<void> {
    this.record('forward', runId, items.map((i) => i.case_id), cause);
  }

  async seal(runId: string, cause: Causation): Promise<void> {
    this.record('seal', runId, [], cause);
  }

  private record(kind: 'forward' | 'seal', run_id: string, cases: string[], cause: Causation): void {
    if (this.failOn !== null && this.calls.length + 1 === this.failOn) {
      this.failOn = null;
      throw Object.assign(new Error('timeout'), { name: 'TimeoutError' });
    }
    this.calls.push({ kind, run_id, cases, message_id: cause.message_id, streamLength: this.streams.types(run_id).length });
  }
}

const suite: SuiteVersionWithCases = {
  suite_key: 'triage',
  version: 1,
  content_hash: 'sha256:x',
  description: null,
  default_scorer: { type: 'exact' },
  pass_threshold: 0.5,
  regression_threshold: 0.1,
  golden_fixtures: false,
  case_count: 3,
  cases: ['c0', 'c1', 'c2'].map((case_id) => ({ case_id, input: 'q', expected: 'yes', scorer: null, tags: [] })),
};

function setup() {
  const streams = new MemoryStreams();
  const work = new RecordingWork(streams);
  const suites = { find: async (_sql: unknown, key: string) => (key === 'triage' ? suite : null) } as unknown as SuiteRepository;
  const intake = new RunIntakeService(streams as unknown as RunStreams, work as unknown as WorkPublisher, suites, {} as DataSource, { hmacSecret: 'k'.repeat(32) });
  return { streams, work, intake };
}

const request = (over: Partial<OpenRunCommand> = {}): OpenRunCommand => ({
  run_id: 'r1',
  suite_key: 'triage',
  subject_kind: 'agent',
  subject_id: 'bot',
  source: 'ci',
  outputs: [
    { case_id: 'c1', output: 'yes' },
    { case_id: 'c0', output: 'no' },
  ],
  ...over,
});
const cause = { message_id: 'req-1', correlation_id: 'req-1' };

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (error) {
    if (error instanceof IntakeError || error instanceof RunRuleError) return error.code;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('unit: the run intake (R7)', () => {
  it('opens, publishes every output, and only then seals: run.opened, work, run.sealed, seal', async () => {
    const { streams, work, intake } = setup();
    const { created } = await intake.open(request(), cause);
    expect(created).toBe(true);
    expect(streams.types('r1')).toEqual(['run.opened', 'run.sealed']);
    // Outputs were on the bus while the stream held only run.opened; the seal after run.sealed.
    expect(work.calls.map((c) => [c.kind, c.streamLength])).toEqual([
      ['forward', 1],
      ['seal', 2],
    ]);
    // Forwarded in case-id order, so a retry in another order builds the same messages.
    expect(work.calls[0].cases).toEqual(['c0', 'c1']);
  });

  it('an empty outputs list is EMPTY_RUN and records nothing', async () => {
    const { streams, work, intake } = setup();
    expect(await refusal(intake.open(request({ outputs: [] }), cause))).toBe('EMPTY_RUN');
    expect(streams.log).toEqual([]);
    expect(work.calls).toEqual([]);
  });

  it('the same request again is the same run; other content under the same id is RUN_ID_CONFLICT', async () => {
    const { streams, work, intake } = setup();
    await intake.open(request(), cause);
    const again = await intake.open(request({ outputs: [...request().outputs!].reverse() }), { message_id: 'req-2', correlation_id: 'req-2' });
    expect(again.created).toBe(false);
    expect(streams.types('r1')).toEqual(['run.opened', 'run.sealed']);
    // The retry publishes under the same message ids (derived from the request, not the cause).
    expect(work.calls[2].message_id).toBe(work.calls[0].message_id);
    expect(await refusal(intake.open(request({ outputs: [{ case_id: 'c0', output: 'yes' }] }), cause))).toBe('RUN_ID_CONFLICT');
    expect(await refusal(intake.open(request({ subject_id: 'other' }), cause))).toBe('RUN_ID_CONFLICT');
  });

  it('a bus failure while forwarding answers BUS_UNAVAILABLE (retryable) and leaves the run unsealed; the retry completes it', async () => {
    const { streams, work, intake } = setup();
    work.failOn = 1;
    const error = await intake.open(request(), cause).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IntakeError);
    expect(error).toMatchObject({ code: 'BUS_UNAVAILABLE', status: 503, retryAfterSeconds: 2 });
    expect(streams.types('r1')).toEqual(['run.opened']);
    await intake.open(request(), cause);
    expect(streams.types('r1')).toEqual(['run.opened', 'run.sealed']);
    expect(work.calls.map((c) => c.kind)).toEqual(['forward', 'seal']);
  });

  it('refuses an unknown case and a second output for a case before anything is recorded', async () => {
    const { streams, intake } = setup();
    expect(await refusal(intake.open(request({ outputs: [{ case_id: 'nope', output: 'x' }] }), cause))).toBe('UNKNOWN_CASE');
    expect(
      await refusal(
        intake.open(
          request({
            outputs: [
              { case_id: 'c0', output: 'x' },
              { case_id: 'c0', output: 'y' },
            ],
          }),
          cause,
        ),
      ),
    ).toBe('DUPLICATE_OUTPUT');
    expect(streams.log).toEqual([]);
  });

  it('an explicit baseline must be a compared run of the same suite', async () => {
    const { intake } = setup();
    expect(await refusal(intake.open(request({ baseline_run_id: 'never' }), cause))).toBe('BASELINE_NOT_FOUND');
  });

  it('expires an open run only when its time is up, then hands the seal to the workers', async () => {
    const { streams, work, intake } = setup();
    await intake.open(request({ outputs: undefined }), cause);
    expect(streams.types('r1')).toEqual(['run.opened']);
    expect(await refusal(intake.expire('r1', new Date(NOW.getTime() + 59_000), 60))).toBe('RUN_NOT_EXPIRED');
    expect(await intake.expire('r1', new Date(NOW.getTime() + 60_000), 60)).toBe(true);
    expect(streams.log.at(-1)!.event).toEqual({ type: 'run.sealed', version: 1, data: { run_id: 'r1', reason: 'expired' } });
    expect(work.calls.map((c) => c.kind)).toEqual(['seal']);
    // Sealed already: a second sweep decides nothing; the seal goes out under the same id (a duplicate the bus drops).
    expect(await intake.expire('r1', new Date(NOW.getTime() + 120_000), 60)).toBe(false);
    expect(streams.types('r1')).toEqual(['run.opened', 'run.sealed']);
    expect(new Set(work.calls.map((c) => c.message_id)).size).toBe(1);
  });

  it('a seal over the bus for a run never opened is UNKNOWN_RUN', async () => {
    const { intake } = setup();
    expect(await refusal(intake.seal('ghost', cause))).toBe('UNKNOWN_RUN');
  });
});
