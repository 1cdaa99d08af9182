/**
 * The seal's decisions (R1, R2, R7, GT3, D3) on fakes: a run's stream and its evidence in memory, behind a
 * transaction that rolls both back on a throw, and the real run model folding the stream. The same seal on
 * PostgreSQL and JetStream is scoring.service.int-spec.ts; these show each decision on its own and fast.
 */
import type { BusMessage } from '@evals/bus';
import {
  compileSuite,
  encodeWork,
  MAX_LISTED_MISSING,
  RunModel,
  RunRuleError,
  runStreamId,
  WORK_SUBJECTS,
  type CaseEvidence,
  type RunCommand,
  type RunEvent,
  type RunJudgeUsageV1,
  type RunOpenedV1,
  type RunScoredV1,
} from '@evals/domain';
import { StreamVersionConflict, type DeadLetter, type DeadLetterRepository, type EventStore, type NewEvent, type StoredEvent, type SuiteVersions, type SuiteVersionWithCases } from '@evals/persistence';
import type { DataSource } from 'typeorm';
import { EventStamper } from './event-stamper';
import type { OutputScorer } from './output-scorer';
import { RunCatalog } from './run-catalog';
import type { RunEvidence } from './run-evidence';
import { RunSealer, withInserted } from './run-sealer';
import { ScoringService } from './scoring.service';
import { workerSettings } from './settings';
import { WorkSettler } from './work-settler';

const NOW = new Date('2026-12-01T10:00:00.000Z');
const NAMES = { streamPrefix: 'T_', subjectPrefix: 't' };
const SEAL_CAUSE = { message_id: 'seal-1', correlation_id: 'req-1', causation_id: 'req-1', occurred_at: NOW.toISOString() };

/** Run streams in memory, with the store's optimistic concurrency (StreamVersionConflict). */
class MemoryEvents {
  streams = new Map<string, StoredEvent[]>();
  private position = 0;

  /** Queries made (one per call, as the store's). */
  reads = 0;

  async readStream(_sql: unknown, streamId: string): Promise<StoredEvent[]> {
    return this.streams.get(streamId) ?? [];
  }

  async readStreams(_sql: unknown, streamIds: readonly string[]): Promise<Map<string, StoredEvent[]>> {
    this.reads++;
    return new Map(streamIds.filter((id) => this.streams.has(id)).map((id) => [id, this.streams.get(id)!]));
  }

  async appendMany(sql: unknown, appends: ReadonlyArray<{ streamId: string; expectedVersion: number; events: readonly NewEvent[] }>): Promise<StoredEvent[][]> {
    const stored = [];
    for (const a of appends) stored.push(await this.append(sql, a.streamId, a.expectedVersion, a.events));
    return stored;
  }

  async append(_sql: unknown, streamId: string, expectedVersion: number, events: readonly NewEvent[]): Promise<StoredEvent[]> {
    if (events.length === 0) return [];
    const stream = this.streams.get(streamId) ?? [];
    if (stream.length !== expectedVersion) throw new StreamVersionConflict(streamId, expectedVersion);
    const stored = events.map((e, i) => ({ ...e, position: ++this.position, stream_id: streamId, stream_version: expectedVersion + i + 1 }));
    this.streams.set(streamId, [...stream, ...stored]);
    return stored;
  }

  /** The run's events, appended through the real model as the intake appends them. */
  async decide(runId: string, command: RunCommand): Promise<void> {
    const stream = await this.readStream(null, runStreamId(runId));
    const state = RunModel.foldRun(stream.map((e) => ({ event: e as unknown as RunEvent, occurred_at: e.metadata.occurred_at })));
    const metadata = { message_id: `m${this.position + 1}`, correlation_id: runId, causation_id: runId, occurred_at: NOW.toISOString() };
    await this.append(null, runStreamId(runId), stream.length, RunModel.decide(command, state).map((e) => ({ ...e, metadata })));
  }

  types(runId: string): string[] {
    return (this.streams.get(runStreamId(runId)) ?? []).map((e) => e.type);
  }
}

/** A run's evidence in memory, as RunEvidence answers for it: the first row of a case wins. */
class MemoryEvidence {
  rows: CaseEvidence[] = [];
  /** What `judgeUsage` answers, and how often it was asked. */
  usage: RunJudgeUsageV1 | null = null;
  usageReads = 0;
  readonly locks: string[] = [];

  async lockExclusiveAll(_tx: unknown, runIds: readonly string[]): Promise<void> {
    this.locks.push(...runIds);
  }

  async insert(_tx: unknown, rows: readonly CaseEvidence[]): Promise<CaseEvidence[]> {
    const fresh = rows.filter((r) => !this.rows.some((e) => e.run_id === r.run_id && e.case_id === r.case_id));
    this.rows.push(...fresh);
    return fresh;
  }

  /** Queries made (one per call, as the repository's). */
  summaryReads = 0;

  async summaries(_sql: unknown, runIds: readonly string[]) {
    this.summaryReads++;
    return new Map(
      runIds.map((id) => {
        const rows = this.of(id);
        return [id, { case_ids: new Set(rows.map((e) => e.case_id)), n: rows.length, passed: rows.filter((e) => e.passed).length, score_sum: rows.reduce((s, e) => s + e.score, 0) }];
      }),
    );
  }

  async judgeUsage(): Promise<RunJudgeUsageV1 | null> {
    this.usageReads++;
    return this.usage;
  }

  /** No case judged with repeats here (issue 13's stability is covered by test/e2e/judge-budget.e2e-spec.ts). */
  async judgeStability(): Promise<null> {
    return null;
  }

  of(runId: string): CaseEvidence[] {
    return this.rows.filter((e) => e.run_id === runId);
  }
}

/** A transaction over both: what the work wrote is rolled back when it throws. */
function memoryDb(events: MemoryEvents, evidence: MemoryEvidence): DataSource {
  return {
    transaction: async <T>(work: (tx: unknown) => Promise<T>): Promise<T> => {
      const saved = { streams: new Map(events.streams), rows: [...evidence.rows] };
      try {
        return await work({});
      } catch (error) {
        events.streams = saved.streams;
        evidence.rows = saved.rows;
        throw error;
      }
    },
  } as unknown as DataSource;
}

/** A suite version whose cases are `ids` (in that order), scored `exact`, and `judged` ones by `llm_judge`. */
function suiteOf(ids: readonly string[], judged: readonly string[] = []): SuiteVersionWithCases {
  const rubric = { type: 'llm_judge', rubric: 'The answer offers a refund politely.' };
  const cases = [
    ...ids.map((case_id) => ({ case_id, input: 'q', expected: 'yes', scorer: null, tags: [] })),
    ...judged.map((case_id) => ({ case_id, input: 'q', expected: 'a refund', scorer: rubric, tags: [] })),
  ];
  return { suite_key: 'triage', version: 1, content_hash: 'sha256:x', description: null, default_scorer: { type: 'exact' }, pass_threshold: 0.5, regression_threshold: 0.1, golden_fixtures: false, case_count: cases.length, cases };
}

function opened(runId: string, suite: SuiteVersionWithCases, over: Partial<RunOpenedV1> = {}): RunOpenedV1 {
  const compiled = compileSuite(suite);
  return {
    run_id: runId,
    suite_key: suite.suite_key,
    suite_version: suite.version,
    suite_content_hash: suite.content_hash,
    pass_threshold: suite.pass_threshold,
    regression_threshold: suite.regression_threshold,
    subject_kind: 'agent',
    subject_id: 'bot',
    variant: null,
    baseline_run_id: null,
    source: 'ci',
    case_count: suite.cases.length,
    scorer_versions: compiled.scorer_versions,
    ...over,
  };
}

/** Evidence of a case scored from an output (passed or not). */
function scored(runId: string, caseId: string, passed: boolean): CaseEvidence {
  return { run_id: runId, case_id: caseId, scorer: 'exact', scorer_version: '1', score: passed ? 1 : 0, passed, label: passed ? 'match' : 'mismatch', detail_hash: 'h', output_chars: 3, scored_at: NOW.toISOString() };
}

function setup() {
  const events = new MemoryEvents();
  const evidence = new MemoryEvidence();
  const db = memoryDb(events, evidence);
  let next = 0;
  const stamper = new EventStamper({ now: () => NOW }, { uuid: () => `00000000-0000-4000-8000-${String(++next).padStart(12, '0')}` });
  const sealer = new RunSealer(db, events as unknown as EventStore, evidence as unknown as RunEvidence, stamper);
  /** Opens (and seals, unless told) a run of `suite` through the real model. */
  const run = async (runId: string, suite: SuiteVersionWithCases, over: Partial<RunOpenedV1> = {}, seal = true) => {
    await events.decide(runId, { type: 'open', data: opened(runId, suite, over), request_hash: `h-${runId}`, outputs: null });
    // Sealed as an HTTP request seals: with the count of outputs it carried.
    if (seal) await events.decide(runId, { type: 'seal', run_id: runId, received: 1 });
  };
  /** The `run.scored` the seal appended. */
  const result = (runId: string): RunScoredV1 => events.streams.get(runStreamId(runId))!.find((e) => e.type === 'run.scored')!.data as RunScoredV1;
  return { events, evidence, db, sealer, run, result };
}

describe('unit: the seal (R1, R2, R7)', () => {
  it('R1/R2: every case without evidence is scored missing_output, in suite order; run.scored counts the evidence', async () => {
    const { events, evidence, sealer, run, result } = setup();
    const suite = suiteOf(['z', 'c', 'a', 'm', 'b']);
    await run('r1', suite);
    evidence.rows.push(scored('r1', 'c', true), scored('r1', 'm', false));

    expect(await sealer.seal('r1', compileSuite(suite), SEAL_CAUSE)).toBe(true);

    expect(evidence.of('r1').filter((e) => e.label === 'missing_output').map((e) => [e.case_id, e.passed, e.score, e.detail_hash])).toEqual([
      ['a', false, 0, null],
      ['b', false, 0, null],
      ['z', false, 0, null],
    ]);
    expect(result('r1')).toEqual({ run_id: 'r1', n: 5, passed: 1, score_sum: 1, missing_count: 3, missing_case_ids: ['z', 'a', 'b'] });
    expect(events.types('r1')).toEqual(['run.opened', 'run.sealed', 'run.scored']);
    // Caused by the seal message, under the run's correlation; the run's lock was held exclusively.
    expect(events.streams.get(runStreamId('r1'))![2].metadata).toMatchObject({ causation_id: 'seal-1', correlation_id: 'req-1', occurred_at: NOW.toISOString() });
    expect(evidence.locks).toEqual(['r1']);
  });

  it('R7: a run sealed by expiry says so on its run.scored (its EvalResult carries it whatever the delivery order)', async () => {
    const { events, sealer, run, result } = setup();
    const suite = suiteOf(['a', 'b']);
    await run('r-exp', suite, {}, false);
    await events.decide('r-exp', { type: 'expire', run_id: 'r-exp', now: new Date(NOW.getTime() + 3_600_000).toISOString(), ttl_seconds: 3600 });
    await run('r-own', suite);
    expect(await sealer.seal('r-exp', compileSuite(suite), SEAL_CAUSE)).toBe(true);
    expect(await sealer.seal('r-own', compileSuite(suite), SEAL_CAUSE)).toBe(true);
    expect(result('r-exp')).toMatchObject({ missing_count: 2, expired: true });
    expect(result('r-own').expired).toBeUndefined();
  });

  it('GT3: a sampled gate run misses only the cases of its sample that have no evidence', async () => {
    const { evidence, sealer, run, result } = setup();
    const suite = suiteOf(['c0', 'c1', 'c2', 'c3', 'c4']);
    await run('r1', suite, { case_count: 3, sample: { size: 3, seed: 's', case_ids: ['c1', 'c3', 'c4'] } });
    evidence.rows.push(scored('r1', 'c3', true));

    await sealer.seal('r1', compileSuite(suite), SEAL_CAUSE);

    expect(result('r1')).toMatchObject({ n: 3, passed: 1, missing_count: 2, missing_case_ids: ['c1', 'c4'] });
    expect(evidence.of('r1').map((e) => e.case_id).sort()).toEqual(['c1', 'c3', 'c4']);
  });

  it('D3: a monitor run has no fixed case list - nothing is missing at its seal', async () => {
    const { evidence, sealer, run, result } = setup();
    const suite = suiteOf(['escalated', 'resolved']);
    await run('window-1', suite, { source: 'session_sample' });
    evidence.rows.push(scored('window-1', 'escalated@s1', true), scored('window-1', 'escalated@s2', false), scored('window-1', 'resolved@s1', true));

    await sealer.seal('window-1', compileSuite(suite), SEAL_CAUSE);

    expect(result('window-1')).toEqual({ run_id: 'window-1', n: 3, passed: 2, score_sum: 2, missing_count: 0, missing_case_ids: [] });
    expect(evidence.of('window-1')).toHaveLength(3);
  });

  it('a run scored already decides nothing: a redelivered seal appends nothing and writes no evidence', async () => {
    const { events, evidence, sealer, run } = setup();
    const suite = suiteOf(['c0', 'c1']);
    await run('r1', suite);
    expect(await sealer.seal('r1', compileSuite(suite), SEAL_CAUSE)).toBe(true);
    const rows = evidence.rows.length;
    // Compared since (the regression app's decision): still nothing to decide.
    for (const phase of ['scored', 'compared']) {
      if (phase === 'compared') await events.decide('r1', { type: 'record_comparison', run_id: 'r1', verdict: 'no_baseline' });
      expect(await sealer.seal('r1', compileSuite(suite), { ...SEAL_CAUSE, message_id: 'seal-2' })).toBe(false);
    }
    expect(events.types('r1')).toEqual(['run.opened', 'run.sealed', 'run.scored', 'run.compared']);
    expect(evidence.rows).toHaveLength(rows);
  });

  it('R7: a run still open awaits its seal; sealing it anyway is refused RUN_NOT_SEALED by the model and rolls back every row', async () => {
    const { events, evidence, sealer, run } = setup();
    const suite = suiteOf(['c0', 'c1']);
    expect(await sealer.awaitsSeal('never')).toBe(false);
    await run('r1', suite, {}, false);
    expect(await sealer.awaitsSeal('r1')).toBe(true);

    const error = await sealer.seal('r1', compileSuite(suite), SEAL_CAUSE).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunRuleError);
    expect((error as RunRuleError).code).toBe('RUN_NOT_SEALED');
    // The missing_output rows the transaction wrote before the model refused are gone with it.
    expect(evidence.rows).toEqual([]);
    expect(events.types('r1')).toEqual(['run.opened']);

    await events.decide('r1', { type: 'seal', run_id: 'r1', received: 1 });
    expect(await sealer.awaitsSeal('r1')).toBe(false);
  });

  it('the missing list is capped at MAX_LISTED_MISSING (the first, in suite order); the count is not', async () => {
    const { sealer, run, result } = setup();
    const ids = Array.from({ length: MAX_LISTED_MISSING + 5 }, (_, i) => `case-${String(MAX_LISTED_MISSING + 5 - i).padStart(5, '0')}`);
    const suite = suiteOf(ids);
    await run('r1', suite);

    await sealer.seal('r1', compileSuite(suite), SEAL_CAUSE);

    const data = result('r1');
    expect(data.missing_count).toBe(MAX_LISTED_MISSING + 5);
    expect(data.missing_case_ids).toEqual(ids.slice(0, MAX_LISTED_MISSING));
    expect(data).toMatchObject({ n: MAX_LISTED_MISSING + 5, passed: 0, score_sum: 0 });
  });

  it('R2: the aggregate is of the evidence read before the insert plus the missing_output rows, as a read after it counted', async () => {
    const { evidence, sealer, run, result } = setup();
    const suite = suiteOf(['a', 'b', 'c', 'd']);
    await run('r1', suite);
    evidence.rows.push({ ...scored('r1', 'a', true), score: 0.1 }, { ...scored('r1', 'b', true), score: 0.2 }, { ...scored('r1', 'c', false), score: -0 });
    await sealer.seal('r1', compileSuite(suite), SEAL_CAUSE);
    expect(result('r1')).toMatchObject({ n: 4, passed: 2, missing_case_ids: ['d'] });
    expect(result('r1').score_sum).toBe(0.1 + 0.2 + -0 + 0);
    expect(evidence.summaryReads).toBe(1);
  });

  it('withInserted: adds the rows the seal wrote to what the run held; a sum of zeros is +0 as PostgreSQL adds it', () => {
    expect(withInserted({ n: 2, passed: 1, score_sum: 0.30000000000000004 }, [{ ...scored('r', 'x', false), score: 0 }])).toEqual({ n: 3, passed: 1, score_sum: 0.30000000000000004 });
    expect(Object.is(withInserted({ n: 1, passed: 0, score_sum: -0 }, [{ ...scored('r', 'x', false), score: 0 }]).score_sum, 0)).toBe(true);
    expect(withInserted({ n: 0, passed: 0, score_sum: 0 }, [])).toEqual({ n: 0, passed: 0, score_sum: 0 });
  });

  describe('seals asked for together are decided together (issue 28)', () => {
    it('three runs sealed at once: one transaction, one stream read, every run locked, each run its own result', async () => {
      const { evidence, events, sealer, run, result } = setup();
      const suite = suiteOf(['a', 'b', 'c']);
      for (const id of ['r1', 'r2', 'r3']) await run(id, suite);
      evidence.rows.push(scored('r1', 'a', true), scored('r2', 'a', true), scored('r2', 'b', true), scored('r3', 'c', false));
      const readsBefore = events.reads;

      const appended = await Promise.all(['r1', 'r2', 'r3'].map((id) => sealer.seal(id, compileSuite(suite), SEAL_CAUSE)));

      expect(appended).toEqual([true, true, true]);
      expect(sealer.transactions).toBe(1);
      expect(events.reads - readsBefore).toBe(1);
      // Their evidence read once: the case ids and the aggregates in one query.
      expect(evidence.summaryReads).toBe(1);
      expect([...evidence.locks].sort()).toEqual(['r1', 'r2', 'r3']);
      expect(result('r1')).toMatchObject({ n: 3, passed: 1, missing_case_ids: ['b', 'c'] });
      expect(result('r2')).toMatchObject({ n: 3, passed: 2, missing_case_ids: ['c'] });
      expect(result('r3')).toMatchObject({ n: 3, passed: 0, missing_case_ids: ['a', 'b'] });
      // Each run's missing rows cross on its own stream, none of another run's.
      for (const id of ['r1', 'r2', 'r3']) {
        const missing = events.streams.get(`${runStreamId(id)}.missing`)!;
        expect(missing.every((e) => (e.data as { run_id: string }).run_id === id)).toBe(true);
      }
    });

    it('R7: a run the model refuses leaves the group with RUN_NOT_SEALED and nothing of it written; the others are sealed', async () => {
      const { evidence, events, sealer, run, result } = setup();
      const suite = suiteOf(['a', 'b']);
      await run('r1', suite);
      await run('r2', suite, {}, false);
      await run('r3', suite);

      const settled = await Promise.allSettled(['r1', 'r2', 'r3'].map((id) => sealer.seal(id, compileSuite(suite), SEAL_CAUSE)));

      expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(((settled[1] as PromiseRejectedResult).reason as RunRuleError).code).toBe('RUN_NOT_SEALED');
      expect(evidence.of('r2')).toEqual([]);
      expect(events.types('r2')).toEqual(['run.opened']);
      expect(events.streams.has(`${runStreamId('r2')}.missing`)).toBe(false);
      expect(result('r1')).toMatchObject({ n: 2, missing_count: 2 });
      expect(result('r3')).toMatchObject({ n: 2, missing_count: 2 });
      // The refused group rolled back whole, then the rest was sealed again.
      expect(sealer.transactions).toBe(2);
    });

    it('the same run twice in one group (a redelivered seal): one run.scored, the second decides nothing', async () => {
      const { events, sealer, run } = setup();
      const suite = suiteOf(['a']);
      await run('r1', suite);
      const appended = await Promise.all([sealer.seal('r1', compileSuite(suite), SEAL_CAUSE), sealer.seal('r1', compileSuite(suite), { ...SEAL_CAUSE, message_id: 'seal-2' })]);
      expect(appended).toEqual([true, false]);
      expect(events.types('r1')).toEqual(['run.opened', 'run.sealed', 'run.scored']);
    });

    it('R7: runs asked about together are read in one query, each answered for itself', async () => {
      const { events, sealer, run } = setup();
      const suite = suiteOf(['a']);
      await run('sealed', suite);
      await run('open', suite, {}, false);
      const readsBefore = events.reads;
      expect(await Promise.all(['sealed', 'open', 'never'].map((id) => sealer.awaitsSeal(id)))).toEqual([false, true, false]);
      expect(events.reads - readsBefore).toBe(1);
    });
  });

  describe('judge usage in run.scored (J1, GT4)', () => {
    const usage: RunJudgeUsageV1 = {
      cases: 1,
      calls: 1,
      errors: 0,
      credential_missing: 0,
      not_configured: 0,
      skipped: 0,
      cache_hits: 0,
      cache_misses: 1,
      input_tokens: 120,
      output_tokens: 30,
      cost_usd: 0.0006,
      model: 'gpt-4o-2024-08-06',
      prompt_version: 'judge-v1',
    };

    it('a suite with llm_judge cases carries the usage summed from its evidence', async () => {
      const { evidence, sealer, run, result } = setup();
      const suite = suiteOf(['c0'], ['j0']);
      await run('r1', suite);
      evidence.usage = usage;
      await sealer.seal('r1', compileSuite(suite), SEAL_CAUSE);
      expect(result('r1').judge).toEqual(usage);
      expect(evidence.usageReads).toBe(1);
    });

    it('a suite with llm_judge cases none of which had an output carries none', async () => {
      const { evidence, sealer, run, result } = setup();
      const suite = suiteOf(['c0'], ['j0']);
      await run('r1', suite);
      await sealer.seal('r1', compileSuite(suite), SEAL_CAUSE);
      expect(result('r1')).not.toHaveProperty('judge');
      expect(evidence.usageReads).toBe(1);
    });

    it('a suite without llm_judge never asks, and carries none', async () => {
      const { evidence, sealer, run, result } = setup();
      const suite = suiteOf(['c0', 'c1']);
      await run('r1', suite);
      evidence.usage = usage;
      await sealer.seal('r1', compileSuite(suite), SEAL_CAUSE);
      expect(result('r1')).not.toHaveProperty('judge');
      expect(evidence.usageReads).toBe(0);
    });
  });
});

/** An `evals.work.seal` message for `runId`, as the bus delivers it, recording how it was settled. */
function sealMessage(runId: string, seq: number, deliveryCount: number) {
  const settled: string[] = [];
  const metadata = { message_id: `seal-${seq}`, correlation_id: runId, causation_id: runId, occurred_at: NOW.toISOString() };
  const msg: BusMessage = {
    subject: `${NAMES.subjectPrefix}.${WORK_SUBJECTS.seal}`,
    data: Buffer.from(encodeWork({ type: WORK_SUBJECTS.seal, version: 1, data: { run_id: runId }, metadata })),
    seq,
    deliveryCount,
    messageId: metadata.message_id,
    ack: () => void settled.push('ack'),
    ackConfirmed: async () => void settled.push('ack'),
    nak: (delayMs?: number) => void settled.push(`nak ${delayMs}`),
    working: () => undefined,
  };
  return { msg, settled };
}

describe('unit: the scoring service hands a seal to the sealer only when its run is sealed (R7)', () => {
  function service(acknowledged = true) {
    const s = setup();
    const suite = suiteOf(['c0', 'c1']);
    const settings = workerSettings({ names: NAMES, maxBatch: 10, hmacSecret: 'k'.repeat(32), deadLetterAfter: 3, retryDelayMs: 50, sealWaitMs: 20 });
    const letters: DeadLetter[] = [];
    const deadLetters = { add: async (_sql: unknown, added: readonly DeadLetter[]) => void letters.push(...added) } as unknown as DeadLetterRepository;
    const suites = { find: async () => suite } as unknown as SuiteVersions;
    const settler = new WorkSettler(settings, s.db, deadLetters, new RunCatalog(s.events as unknown as EventStore, suites));
    // A batch of seals only: nothing to score.
    const scorer = { score: async () => undefined } as unknown as OutputScorer;
    const bus = { allAcknowledgedBefore: async () => acknowledged };
    return { ...s, suite, letters, scoring: new ScoringService(settings, bus, settler, scorer, s.sealer) };
  }

  it('a seal for a run still open is handed back, then dead-lettered RUN_NOT_SEALED after deadLetterAfter deliveries; nothing is appended', async () => {
    const { scoring, run, suite, events, letters } = service();
    await run('r1', suite, {}, false);

    const first = sealMessage('r1', 7, 1);
    const handed = await scoring.handle([first.msg]);
    expect(first.settled).toEqual(['nak 50']);
    expect(handed).toMatchObject({ retried: 1, events: 0, sealedRunIds: [], deadLettered: [] });

    const last = sealMessage('r1', 7, 3);
    const lettered = await scoring.handle([last.msg]);
    expect(last.settled).toEqual(['ack']);
    expect(lettered.deadLettered).toEqual([{ subject: WORK_SUBJECTS.seal, code: 'RUN_NOT_SEALED' }]);
    expect(letters).toEqual([{ subject: WORK_SUBJECTS.seal, code: 'RUN_NOT_SEALED', reason: 'run r1: not sealed after 3 deliveries', message_id: 'seal-7', stream_seq: 7 }]);
    expect(events.types('r1')).toEqual(['run.opened']);
  });

  it('a sealed run waits for earlier work (not counted as a try), then is scored once; its redelivered seal decides nothing', async () => {
    const waiting = service(false);
    await waiting.run('r1', waiting.suite);
    const early = sealMessage('r1', 7, 5);
    expect(await waiting.scoring.handle([early.msg])).toMatchObject({ sealsWaiting: 1, retried: 0, deadLettered: [] });
    expect(early.settled).toEqual(['nak 20']);
    expect(waiting.events.types('r1')).toEqual(['run.opened', 'run.sealed']);

    const { scoring, run, suite, events } = service(true);
    await run('r1', suite);
    const seal = sealMessage('r1', 7, 1);
    expect(await scoring.handle([seal.msg])).toMatchObject({ events: 1, sealedRunIds: ['r1'] });
    expect(seal.settled).toEqual(['ack']);
    const again = sealMessage('r1', 7, 2);
    expect(await scoring.handle([again.msg])).toMatchObject({ events: 0, sealedRunIds: [] });
    expect(again.settled).toEqual(['ack']);
    expect(events.types('r1')).toEqual(['run.opened', 'run.sealed', 'run.scored']);
  });
});
