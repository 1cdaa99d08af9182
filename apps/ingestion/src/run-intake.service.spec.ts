/**
 * The intake's orchestration (R7), with its adapters faked in memory and the real run model: what it
 * appends and publishes, and in which order. The same behaviour against PostgreSQL and a real bus is
 * `run-intake.int-spec.ts`; these show each rule on its own and fast.
 */
import { DEFAULT_PROJECT } from '@evals/contracts';
import { compileSuite, RunModel, RunRuleError, sampleCaseIds, type RunCommand, type RunEvent, type WorkItem } from '@evals/domain';
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

/**
 * Stored suite versions as the intake reads them: a version's row (`head`) and its cases' scorer facts
 * (`caseScorers`), every read recorded. No `find`: the intake never loads a whole suite version (issue 15).
 */
class MemorySuites {
  readonly reads: string[] = [];
  constructor(private readonly versions: readonly SuiteVersionWithCases[]) {}

  private pick(project: string, key: string, version?: number): SuiteVersionWithCases | null {
    // Issue 30: a suite key is its project's; a version without `project` is `default`'s.
    const of = this.versions.filter((v) => v.suite_key === key && (v.project ?? DEFAULT_PROJECT) === project);
    return (version === undefined ? of.at(-1) : of.find((v) => v.version === version)) ?? null;
  }

  async head(_sql: unknown, project: string, key: string, version?: number) {
    this.reads.push(`head ${key}@${version ?? 'latest'}`);
    const found = this.pick(project, key, version);
    if (!found) return null;
    const { suite_key, version: v, content_hash, default_scorer, pass_threshold, regression_threshold, case_count } = found;
    return { suite_key, version: v, content_hash, default_scorer, pass_threshold, regression_threshold, case_count };
  }

  /** The run-opens of one moment, read together (issue 28); recorded as a `head` each. */
  heads(sql: unknown, requests: ReadonlyArray<{ project: string; suiteKey: string; version?: number }>) {
    return Promise.all(requests.map((r) => this.head(sql, r.project, r.suiteKey, r.version)));
  }

  async caseScorers(_sql: unknown, project: string, key: string, version: number) {
    this.reads.push(`cases ${key}@${version}`);
    return this.pick(project, key, version)!.cases.map((c) => ({ case_id: c.case_id, scorer: c.scorer, expected: c.expected }));
  }
}

function setup(versions: readonly SuiteVersionWithCases[] = [suite]) {
  const streams = new MemoryStreams();
  const work = new RecordingWork(streams);
  const suites = new MemorySuites(versions);
  const intake = new RunIntakeService(streams as unknown as RunStreams, work as unknown as WorkPublisher, suites as unknown as SuiteRepository, {} as DataSource, { hmacSecret: 'k'.repeat(32) });
  return { streams, work, intake, suites };
}

const request = (over: Partial<OpenRunCommand> = {}): OpenRunCommand => ({
  run_id: 'r1',
  project: DEFAULT_PROJECT,
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

  describe('the suite version a run opens (issue 15: its facts read once, then only its row)', () => {
    /** A second version of `triage`: 40 cases over a mix of scorers (a regex shared by many, exact against each case's expected). */
    const v2: SuiteVersionWithCases = {
      ...suite,
      version: 2,
      content_hash: 'sha256:y',
      pass_threshold: 0.8,
      case_count: 40,
      cases: Array.from({ length: 40 }, (_, i) => ({
        case_id: `k${i}`,
        input: `question ${i}`,
        expected: `answer ${i}`,
        scorer: i % 3 === 0 ? { type: 'regex', pattern: '^ticket-[0-9]+', flags: 'i' } : i % 3 === 1 ? { type: 'contains', value: ['refund'] } : null,
        tags: ['t'],
      })),
    };
    const opened = (streams: MemoryStreams, runId: string) => streams.log.find((e) => e.run_id === runId && e.event.type === 'run.opened')!.event.data as Record<string, any>;

    it("reads the version's cases once; the next opens of that version read only its row", async () => {
      const { streams, intake, suites } = setup([suite, v2]);
      await intake.open(request({ run_id: 'a', outputs: [{ case_id: 'k3', output: 'x' }] }), cause);
      expect(suites.reads).toEqual(['head triage@latest', 'cases triage@2']);
      suites.reads.length = 0;
      await intake.open(request({ run_id: 'b', outputs: [{ case_id: 'k4', output: 'x' }] }), cause);
      await intake.open(request({ run_id: 'c', suite_version: 2, outputs: undefined }), cause);
      expect(suites.reads).toEqual(['head triage@latest', 'head triage@2']);
      // What a run opened with is what the whole suite compiled says (scorer versions, in the same order).
      for (const runId of ['a', 'b', 'c']) {
        expect(opened(streams, runId)).toMatchObject({ suite_key: 'triage', suite_version: 2, suite_content_hash: 'sha256:y', pass_threshold: 0.8, case_count: 40 });
        expect(Object.entries(opened(streams, runId).scorer_versions)).toEqual(Object.entries(compileSuite(v2).scorer_versions));
      }
      // A cached version still refuses a case it does not have.
      expect(await refusal(intake.open(request({ run_id: 'd', outputs: [{ case_id: 'c0', output: 'x' }] }), cause))).toBe('UNKNOWN_CASE');
      expect(suites.reads.filter((r) => r.startsWith('cases'))).toEqual([]);
    });

    it('a run of a version opened before (a ticket after a restart) reads its case ids, not the whole version', async () => {
      const first = setup([suite, v2]);
      await first.intake.open(request({ run_id: 'a', outputs: undefined }), cause);
      // Another intake over the same streams (a restart): its ticket of `a` needs the version's case ids.
      const again = new RunIntakeService(first.streams as unknown as RunStreams, first.work as unknown as WorkPublisher, first.suites as unknown as SuiteRepository, {} as DataSource, { hmacSecret: 'k'.repeat(32) });
      first.suites.reads.length = 0;
      const ticket = await again.ticket('a', DEFAULT_PROJECT);
      expect([...ticket!.allCaseIds]).toEqual(v2.cases.map((c) => c.case_id));
      expect(first.suites.reads).toEqual(['head triage@2', 'cases triage@2']);
    });

    it('a sample is drawn from every case id in suite order; case_count is its size', async () => {
      const { streams, intake } = setup([suite, v2]);
      const sample = { size: 7, seed: 's1' };
      await intake.open(request({ run_id: 's', sample, outputs: undefined }), cause);
      const data = opened(streams, 's');
      expect(data.case_count).toBe(7);
      expect(data.sample).toEqual({ ...sample, case_ids: sampleCaseIds(v2.cases.map((c) => c.case_id), sample) });
    });

    it('an unknown key is SUITE_NOT_FOUND, an unknown version of a known key SUITE_VERSION_NOT_FOUND', async () => {
      const { intake } = setup([suite, v2]);
      expect(await refusal(intake.open(request({ suite_key: 'nope' }), cause))).toBe('SUITE_NOT_FOUND');
      expect(await refusal(intake.open(request({ suite_key: 'nope', suite_version: 1 }), cause))).toBe('SUITE_NOT_FOUND');
      expect(await refusal(intake.open(request({ suite_version: 3 }), cause))).toBe('SUITE_VERSION_NOT_FOUND');
    });

    it('a version this service cannot score is SUITE_INVALID - every time - and records nothing', async () => {
      // One case's expected the exact scorer no longer takes: the version's other 39 cases are fine.
      const stale: SuiteVersionWithCases = { ...v2, version: 3, cases: v2.cases.map((c, i) => (i === 29 ? { ...c, scorer: null, expected: 42 } : c)) };
      expect(() => compileSuite(stale)).toThrow();
      const { streams, intake } = setup([suite, v2, stale]);
      expect(await refusal(intake.open(request({ outputs: [{ case_id: 'k0', output: 'x' }] }), cause))).toBe('SUITE_INVALID');
      expect(await refusal(intake.open(request({ outputs: [{ case_id: 'k0', output: 'x' }] }), cause))).toBe('SUITE_INVALID');
      expect(streams.log).toEqual([]);
    });
  });

  it('a seal over the bus for a run never opened is UNKNOWN_RUN', async () => {
    const { intake } = setup();
    expect(await refusal(intake.seal('ghost', DEFAULT_PROJECT, cause))).toBe('UNKNOWN_RUN');
  });

  describe('projects (issue 30)', () => {
    // The same suite key in two projects, with different cases: each project's runs see their own.
    const teamA: SuiteVersionWithCases = { ...suite, project: 'team-a', content_hash: 'sha256:a', case_count: 2, cases: ['a0', 'a1'].map((case_id) => ({ case_id, input: 'q', expected: 'yes', scorer: null, tags: [] })) };
    const opened = (streams: MemoryStreams, runId: string) => streams.log.find((e) => e.run_id === runId && e.event.type === 'run.opened')!.event.data as unknown as Record<string, unknown>;

    it("run.opened names the project outside default only, and the suite is the project's", async () => {
      const { streams, intake } = setup([suite, teamA]);
      await intake.open(request({ run_id: 'd', outputs: undefined }), cause);
      await intake.open(request({ run_id: 'a', project: 'team-a', outputs: undefined }), cause);
      // A default run's run.opened is what it was before projects: no `project` key at all.
      expect(Object.keys(opened(streams, 'd'))).not.toContain('project');
      expect(opened(streams, 'a')).toMatchObject({ project: 'team-a', suite_content_hash: 'sha256:a', case_count: 2 });
      expect(opened(streams, 'd')).toMatchObject({ suite_content_hash: 'sha256:x', case_count: 3 });
      // A key only another project has is no suite here.
      expect(await refusal(intake.open(request({ run_id: 'b', project: 'team-b', outputs: undefined }), cause))).toBe('SUITE_NOT_FOUND');
    });

    it("another project's run id is RUN_ID_CONFLICT with the message of any conflict, even for the same request", async () => {
      const { streams, intake } = setup([suite, { ...teamA, cases: suite.cases, case_count: 3, content_hash: suite.content_hash }]);
      await intake.open(request({ run_id: 'shared' }), cause);
      const conflictOf = (p: Promise<unknown>) => p.then(() => null, (e: IntakeError) => ({ code: e.code, message: e.message, field: e.field }));
      // The same content from another project: not the same run.
      const cross = await conflictOf(intake.open(request({ run_id: 'shared', project: 'team-a' }), cause));
      // Other content from the run's own project: the model's own conflict.
      const own = await conflictOf(intake.open(request({ run_id: 'shared', outputs: [{ case_id: 'c0', output: 'other' }] }), cause));
      expect(cross).toEqual({ code: 'RUN_ID_CONFLICT', message: expect.any(String), field: 'run_id' });
      expect(cross).toEqual(own);
      expect(streams.types('shared')).toEqual(['run.opened', 'run.sealed']);
    });

    it('an expired run keeps its project: sealed `expired` by the system, still found in its project only', async () => {
      const { streams, work, intake } = setup([suite, teamA]);
      await intake.open(request({ run_id: 'exp-a', project: 'team-a', outputs: undefined }), cause);
      expect(await intake.expire('exp-a', new Date(NOW.getTime() + 60_000), 60)).toBe(true);
      expect(streams.types('exp-a')).toEqual(['run.opened', 'run.sealed']);
      const ticket = (await intake.ticket('exp-a', 'team-a'))!;
      expect(RunModel.runProject(ticket.state)).toBe('team-a');
      expect(ticket.state.seal_reason).toBe('expired');
      expect(await intake.ticket('exp-a', DEFAULT_PROJECT)).toBeNull();
      expect(work.calls.map((c) => [c.kind, c.run_id])).toEqual([['seal', 'exp-a']]);
    });

    it("another project's run has no ticket and takes no seal: both answer as an unknown run", async () => {
      const { streams, work, intake } = setup([suite, teamA]);
      await intake.open(request({ run_id: 'open-a', project: 'team-a', outputs: undefined }), cause);
      expect(await intake.ticket('open-a', DEFAULT_PROJECT)).toBeNull();
      expect(await intake.ticket('open-a', 'team-a')).not.toBeNull();
      const ghost = await intake.seal('ghost', DEFAULT_PROJECT, cause).catch((e: IntakeError) => ({ code: e.code, message: e.message.replace('ghost', '<id>') }));
      const foreign = await intake.seal('open-a', DEFAULT_PROJECT, cause).catch((e: IntakeError) => ({ code: e.code, message: e.message.replace('open-a', '<id>') }));
      expect(foreign).toEqual({ code: 'UNKNOWN_RUN', message: 'no run <id>' });
      expect(foreign).toEqual(ghost);
      expect(streams.types('open-a')).toEqual(['run.opened']);
      expect(work.calls).toEqual([]);
    });
  });
});
