import type { DataSource } from 'typeorm';
import { CONSUMERS, contractSubject, type BusMessage, type MessageBus } from '@evals/bus';
import {
  MAX_LISTED_MISSING,
  baseCaseId,
  RUN_EVENTS,
  RunModel,
  RunRuleError,
  SuiteCompileError,
  WORK_SUBJECTS,
  decodeWork,
  detailHash,
  judgeSkippedEvidence,
  missingOutputEvidence,
  runStreamId,
  scoreCase,
  type CaseEvidence,
  type CasesScoredV2,
  type CompiledSuite,
  type RunScoredV1,
  type ScoreWorkV1,
  type SealWorkV1,
  type WorkMetadata,
} from '@evals/domain';
import {
  DeadLetterRepository,
  EventStore,
  EvidenceRepository,
  JudgeEvidenceRepository,
  RunLocks,
  StreamVersionConflict,
  loadRun,
  type DeadLetter,
  type EventMetadata,
  type JudgedEvidenceRow,
  type NewEvent,
  type Sql,
} from '@evals/persistence';
import type { Clock, IdGenerator } from '@evals/platform';
import { emptyTally, judgeJobs, type JudgeJob, type JudgeTally, type WorkerJudge } from './judge-scoring';
import { RunCatalog, type OpenedRun } from './run-catalog';
import type { WorkerSettings } from './settings';

/** Stable codes of the dead letters this worker writes (reasons name ids and fields, never an output - D1). */
export const DEAD_LETTER_CODES = {
  invalidWork: 'INVALID_WORK',
  unknownRun: 'UNKNOWN_RUN',
  unknownSuiteVersion: 'UNKNOWN_SUITE_VERSION',
  suiteNotScorable: 'SUITE_NOT_SCORABLE',
  unknownCase: 'UNKNOWN_CASE',
  /** A second output for a case that has evidence from another one (compared by keyed hash; the same output again is a silent redelivery). */
  duplicateOutput: 'DUPLICATE_OUTPUT',
  /** An output for a case the run's seal scored `missing_output` (R1): the run was sealed without it. */
  outputAfterSeal: 'OUTPUT_AFTER_SEAL',
  /** A seal for a run its model does not see sealed (R7), still so after `deadLetterAfter` deliveries. */
  runNotSealed: 'RUN_NOT_SEALED',
} as const;

/** What one micro-batch did: counts and ids only, for logs and metrics. */
export interface BatchOutcome {
  messages: number;
  /** Evidence rows written from candidate outputs. */
  inserted: number;
  /**
   * Outputs identical (by keyed hash) to the evidence their case already has - stored, or earlier in the
   * batch: a redelivery, acknowledged silently. A different output is dead-lettered instead.
   */
  duplicates: number;
  /** Events appended (`cases.scored`, `run.scored`): the outbox relay has rows to publish. */
  events: number;
  /** Dead letters written, by contract subject and code. */
  deadLettered: Array<{ subject: string; code: string }>;
  /** Evidence rows written from outputs, by scorer name. */
  scoredByScorer: Record<string, number>;
  /** Messages handed back for a later try (their run or suite version is not known yet). */
  retried: number;
  /** Runs whose seal completed here (`run.scored` appended). */
  sealedRunIds: string[];
  /** Seals handed back because work published before them is still in flight. */
  sealsWaiting: number;
  /** `llm_judge` cases graded in this batch, by label, and the verdict cache's hits and misses (gate runs). */
  judge: JudgeTally;
}

interface Received<TData> {
  readonly msg: BusMessage;
  readonly data: TData;
  readonly metadata: WorkMetadata;
}

interface Owned {
  readonly evidence: CaseEvidence;
  readonly owner: Received<ScoreWorkV1>;
}

/**
 * An output that gets no evidence row of its own: its case had one already (stored, or earlier in the
 * batch). Only its keyed hash (D2) is kept, to tell a redelivery from a second output.
 */
interface Repeat {
  readonly owner: Received<ScoreWorkV1>;
  readonly runId: string;
  readonly caseId: string;
  readonly hash: string | null;
}

/** The cases of one score message whose output was refused after the insert, for its one dead letter. */
interface Refused {
  readonly afterSeal: Set<string>;
  readonly duplicate: Set<string>;
}

/** What to do with each message once the transaction committed. */
class Settlement {
  readonly letters: DeadLetter[] = [];
  readonly retry: BusMessage[] = [];
  /** Handled - scored, or recorded as a dead letter - and removed from the work queue. */
  readonly ack: BusMessage[] = [];
}

/**
 * Step 2 of docs/pipeline.md: scores `evals.work.score` batches into evidence and seals runs.
 *
 * - Every output of a micro-batch is scored in memory, then ONE transaction inserts the evidence
 *   (`ON CONFLICT DO NOTHING`), appends one `cases.scored` event per run for the rows actually inserted (with
 *   its outbox row) and writes the dead letters; only then are the messages acknowledged. A redelivery
 *   therefore inserts nothing and announces nothing.
 * - An output whose case already has evidence (stored, earlier in the batch, or inserted first by another
 *   worker) is compared with it by keyed hash in that same transaction: the same output is a redelivery,
 *   acknowledged silently; a different one dead-letters its message `DUPLICATE_OUTPUT`, an output for a case
 *   the seal scored `missing_output` `OUTPUT_AFTER_SEAL` (one letter per message, an `UNKNOWN_CASE` one
 *   first; the rest of the message is scored).
 * - A run is read only through its model (R7, `loadRun`): its facts (judge skip, missing cases) are the
 *   model's, and `run.scored` is what `RunModel.decide` decides.
 * - A seal waits until every earlier message of the stream is acknowledged, then in one transaction writes
 *   `missing_output` evidence (R1), computes the aggregate from the evidence and appends `run.scored`.
 * - Scoring transactions hold their runs' lock shared and a seal holds it exclusively, so evidence of a run
 *   never changes once its aggregate is computed.
 *
 * Candidate outputs are read only by the scorers, the judge and `detailHash` (score and keyed hash): never
 * logged, stored or put into an error or a dead letter. Framework-free, so the integration tests construct
 * it directly.
 */
export class ScoringService {
  private readonly catalog = new RunCatalog();
  private readonly events = new EventStore();
  private readonly evidence = new EvidenceRepository();
  private readonly deadLetters = new DeadLetterRepository();
  private readonly locks = new RunLocks();
  private readonly judgeEvidence = new JudgeEvidenceRepository();

  constructor(
    private readonly dataSource: DataSource,
    /** Only the ack floor, which a seal waits on. */
    private readonly bus: Pick<MessageBus, 'allAcknowledgedBefore'>,
    private readonly settings: WorkerSettings,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    /** The judge of `llm_judge` cases; null: they fail `judge_not_configured` (GT2: never a silent pass). */
    private readonly judge: WorkerJudge | null = null,
  ) {}

  /**
   * Handles one micro-batch; every message is acknowledged or handed back (nak) before this returns. On a
   * throw the bus naks the batch: messages settled already ignore it, and whatever was not committed
   * is redelivered (every step is idempotent).
   */
  async handle(batch: readonly BusMessage[]): Promise<BatchOutcome> {
    const outcome: BatchOutcome = {
      messages: batch.length,
      inserted: 0,
      duplicates: 0,
      events: 0,
      deadLettered: [],
      scoredByScorer: {},
      retried: 0,
      sealedRunIds: [],
      sealsWaiting: 0,
      judge: emptyTally(),
    };
    const settlement = new Settlement();
    const scores: Received<ScoreWorkV1>[] = [];
    const seals: Received<SealWorkV1>[] = [];
    for (const msg of batch) {
      const decoded = decodeWork(msg.data);
      const subject = contractSubject(this.settings.names, msg.subject);
      if (!decoded.ok) {
        this.deadLetter(settlement, msg, DEAD_LETTER_CODES.invalidWork, decoded.reason);
      } else if (decoded.message.type !== subject) {
        this.deadLetter(settlement, msg, DEAD_LETTER_CODES.invalidWork, 'type: does not match the subject');
      } else if (decoded.message.type === WORK_SUBJECTS.score) {
        scores.push({ msg, data: decoded.message.data, metadata: decoded.message.metadata });
      } else {
        seals.push({ msg, data: decoded.message.data, metadata: decoded.message.metadata });
      }
    }

    await this.score(scores, settlement, outcome);
    // Seals below read the consumer's ack floor: the score messages must be acknowledged server side first.
    await this.settle(settlement, outcome, seals.length > 0);

    for (const seal of seals.sort((a, b) => a.msg.seq - b.msg.seq)) await this.seal(seal, outcome);
    return outcome;
  }

  // --- evals.work.score ------------------------------------------------------------------------------------

  private async score(scores: readonly Received<ScoreWorkV1>[], settlement: Settlement, outcome: BatchOutcome): Promise<void> {
    const rows: Owned[] = [];
    const repeats: Repeat[] = [];
    const jobs: Array<{ job: JudgeJob; owner: Received<ScoreWorkV1> }> = [];
    // Messages with an UNKNOWN_CASE letter: a message gets one letter, and that one names what it lacks.
    const lettered = new Set<Received<ScoreWorkV1>>();
    const byRun = new Map<string, Received<ScoreWorkV1>[]>();
    // Lowest stream sequence first: when two messages carry the same case, the earlier one wins.
    for (const s of [...scores].sort((a, b) => a.msg.seq - b.msg.seq)) {
      const list = byRun.get(s.data.run_id) ?? [];
      list.push(s);
      byRun.set(s.data.run_id, list);
    }
    const scoredAt = this.clock.now().toISOString();
    for (const [runId, received] of byRun) {
      const resolved = await this.resolve(runId, received.map((r) => r.msg), settlement, outcome);
      if (!resolved) continue;
      const { run, suite } = resolved;
      const seen = new Set<string>();
      const scoring = { runId, hmacSecret: this.settings.hmacSecret, scoredAt };
      // GT4: a run opened with `judge_skip` (the gate said no spend) calls no judge; its judge cases fail with that label.
      const skip = run.judgeSkip;
      for (const r of received) {
        settlement.ack.push(r.msg);
        const unknown: string[] = [];
        for (const item of r.data.items) {
          // A monitor run (D3) scores one suite case per sampled session: evidence ids are `<case>@<session>`.
          const base = run.monitor ? suite.cases.get(baseCaseId(item.case_id)) : undefined;
          const compiled = suite.cases.get(item.case_id) ?? (base && { ...base, case_id: item.case_id });
          if (!compiled) {
            unknown.push(item.case_id);
          } else if (seen.has(item.case_id)) {
            // Compared, inside the transaction, with the row the case ends up holding.
            repeats.push({ owner: r, runId, caseId: item.case_id, hash: detailHash(this.settings.hmacSecret, item.output) });
          } else {
            seen.add(item.case_id);
            if (compiled.scorer.kind === 'judge' && skip) {
              const evidence = judgeSkippedEvidence(compiled, item.output, skip, scoring);
              outcome.judge.labels[evidence.label] = (outcome.judge.labels[evidence.label] ?? 0) + 1;
              rows.push({ evidence, owner: r });
            } else if (compiled.scorer.kind === 'judge' && this.judge) {
              // Graded below, concurrently, before the transaction (S3).
              jobs.push({ job: { compiled, output: item.output, msg: r.msg, useCache: run.opened.judge_cache === true, ctx: scoring }, owner: r });
            } else {
              rows.push({ evidence: scoreCase(compiled, item.output, scoring), owner: r });
            }
          }
        }
        // Ingestion refuses these already (R1); the rest of the message is scored. One letter per message.
        if (unknown.length > 0) {
          const reason = `data.items[].case_id: ${unknown.length} not a case of suite ${clamp(suite.suite_key)} v${suite.version}: ${caseList(unknown)}`;
          this.deadLetter(settlement, r.msg, DEAD_LETTER_CODES.unknownCase, reason, r.metadata.message_id, false);
          lettered.add(r);
        }
      }
    }
    rows.push(...(await this.gradeJudgeCases(jobs, repeats, outcome)));
    if (rows.length === 0 && repeats.length === 0 && settlement.letters.length === 0) return;

    const written = await this.withConflictRetry(() =>
      this.dataSource.transaction(async (tx) => {
        const result = await this.insertScored(tx, rows);
        const checked = await this.checkRepeats(tx, rows, result.inserted, repeats);
        const letters = [...checked.refused].filter(([owner]) => !lettered.has(owner)).map(([owner, refused]) => this.refusedLetter(owner, refused));
        await this.deadLetters.add(tx, [...settlement.letters, ...letters]);
        return { ...result, redelivered: checked.redelivered, letters };
      }),
    );
    settlement.letters.push(...written.letters);
    outcome.inserted += written.inserted.length;
    outcome.duplicates += written.redelivered;
    outcome.events += written.events;
    for (const e of written.inserted) outcome.scoredByScorer[e.scorer] = (outcome.scoredByScorer[e.scorer] ?? 0) + 1;
  }

  /**
   * Inside the batch transaction, after the insert: every output that got no row of its own - a repeat of
   * a case in the batch, a case with stored evidence, a row another worker inserted first (the insert waited
   * for it, and under read committed this query sees it) - is compared with the row its case holds now. The
   * same keyed hash is a redelivery (silent); another hash is a second output (DUPLICATE_OUTPUT); a row
   * without an output means the seal scored the case `missing_output` (OUTPUT_AFTER_SEAL).
   */
  private async checkRepeats(
    tx: Sql,
    rows: readonly Owned[],
    inserted: readonly CaseEvidence[],
    repeats: readonly Repeat[],
  ): Promise<{ redelivered: number; refused: Map<Received<ScoreWorkV1>, Refused> }> {
    const wasInserted = new Set(inserted);
    const pending: Repeat[] = [
      ...rows.filter((r) => !wasInserted.has(r.evidence)).map((r) => ({ owner: r.owner, runId: r.evidence.run_id, caseId: r.evidence.case_id, hash: r.evidence.detail_hash })),
      ...repeats,
    ];
    const refused = new Map<Received<ScoreWorkV1>, Refused>();
    if (pending.length === 0) return { redelivered: 0, refused };
    const key = (runId: string, caseId: string) => `${runId}\u0000${caseId}`;
    const held = new Map<string, string | null>(inserted.map((e) => [key(e.run_id, e.case_id), e.detail_hash]));
    for (const runId of new Set(pending.map((p) => p.runId))) {
      const ask = new Set(pending.filter((p) => p.runId === runId && !held.has(key(runId, p.caseId))).map((p) => p.caseId));
      for (const [caseId, hash] of await this.evidence.detailHashes(tx, runId, [...ask])) held.set(key(runId, caseId), hash);
    }
    let redelivered = 0;
    for (const p of pending) {
      const stored = held.get(key(p.runId, p.caseId));
      // `undefined` cannot happen (a row that was not inserted conflicted with one that is there): not a refusal.
      if (stored === undefined || stored === p.hash) {
        redelivered++;
        continue;
      }
      const r = refused.get(p.owner) ?? { afterSeal: new Set<string>(), duplicate: new Set<string>() };
      (stored === null ? r.afterSeal : r.duplicate).add(p.caseId);
      refused.set(p.owner, r);
    }
    return { redelivered, refused };
  }

  /** The one dead letter of a score message with refused outputs: run id and case ids, never an output or a hash (D1). */
  private refusedLetter(owner: Received<ScoreWorkV1>, refused: Refused): DeadLetter {
    const run = clamp(owner.data.run_id);
    const parts: string[] = [];
    if (refused.afterSeal.size > 0) parts.push(`data.items[].case_id: run ${run} was scored without an output for ${refused.afterSeal.size}: ${caseList([...refused.afterSeal])}`);
    if (refused.duplicate.size > 0) parts.push(`data.items[].case_id: run ${run} already has another output for ${refused.duplicate.size}: ${caseList([...refused.duplicate])}`);
    const code = refused.afterSeal.size > 0 ? DEAD_LETTER_CODES.outputAfterSeal : DEAD_LETTER_CODES.duplicateOutput;
    return this.letter(owner.msg, code, parts.join('; '), owner.metadata.message_id);
  }

  /** Inside the batch transaction: evidence, then one `cases.scored` per run for the rows actually inserted. */
  private async insertScored(tx: Sql, rows: readonly Owned[]): Promise<{ inserted: CaseEvidence[]; events: number }> {
    const runIds = [...new Set(rows.map((r) => r.evidence.run_id))].sort(compare);
    // Shared: scoring transactions run side by side; a seal (exclusive) waits for them, and they for it. Once
    // a run is scored every case of it has evidence, so a late output inserts nothing below.
    await this.locks.shared(tx, runIds);
    const inserted: CaseEvidence[] = [];
    let events = 0;
    for (const runId of runIds) {
      // One fixed order (case id) for every transaction, so concurrent inserts of one run never deadlock.
      const ordered = rows.filter((r) => r.evidence.run_id === runId).sort((a, b) => compare(a.evidence.case_id, b.evidence.case_id));
      const owners = new Map<CaseEvidence, Received<ScoreWorkV1>>(ordered.map((r) => [r.evidence, r.owner]));
      const written = await this.insertEvidence(
        tx,
        ordered.map((r) => r.evidence),
      );
      if (written.length === 0) continue;
      inserted.push(...written);
      // The event's stream is named after the earliest message that contributed a new row: every case of that
      // message has evidence once this commits, so no later transaction can name the same stream.
      const cause = written.map((e) => owners.get(e)!).reduce((a, b) => (b.msg.seq < a.msg.seq ? b : a));
      // The counts only (cases.scored v2): the rows are the evidence just inserted.
      const event: NewEvent<CasesScoredV2> = {
        type: RUN_EVENTS.casesScored,
        version: 2,
        data: { run_id: runId, n: written.length, passed: written.filter((e) => e.passed).length, score_sum: written.reduce((s, e) => s + e.score, 0) },
        metadata: this.metadata(cause.metadata),
      };
      await this.events.append(tx, `${runStreamId(runId)}.cases.${cause.metadata.message_id}`, 0, [event]);
      events += 1;
    }
    return { inserted, events };
  }

  /**
   * Judges the batch's `llm_judge` cases (judge configured): a case that already has evidence is not judged
   * - nor paid for - again; it becomes a repeat, compared with that evidence by keyed hash in the batch
   * transaction (a redelivery is silent, a different output dead-lettered). The rest are graded concurrently
   * within the judge's limit.
   */
  private async gradeJudgeCases(jobs: ReadonlyArray<{ job: JudgeJob; owner: Received<ScoreWorkV1> }>, repeats: Repeat[], outcome: BatchOutcome): Promise<Owned[]> {
    if (jobs.length === 0 || !this.judge) return [];
    const pending: Array<{ job: JudgeJob; owner: Received<ScoreWorkV1> }> = [];
    for (const runId of new Set(jobs.map((j) => j.job.ctx.runId))) {
      const ofRun = jobs.filter((j) => j.job.ctx.runId === runId);
      const have = await this.judgeEvidence.existing(
        this.dataSource,
        runId,
        ofRun.map((j) => j.job.compiled.case_id),
      );
      for (const j of ofRun) {
        const caseId = j.job.compiled.case_id;
        if (have.has(caseId)) repeats.push({ owner: j.owner, runId, caseId, hash: detailHash(this.settings.hmacSecret, j.job.output) });
        else pending.push(j);
      }
    }
    const evidence = await judgeJobs(
      this.judge,
      pending.map((p) => p.job),
      outcome.judge,
      this.settings.judgeHeartbeatMs ?? 15_000,
    );
    return evidence.map((e, i) => ({ evidence: e, owner: pending[i].owner }));
  }

  /** Plain rows through EvidenceRepository, judged rows (with their judge columns) through JudgeEvidenceRepository. */
  private async insertEvidence(tx: Sql, rows: readonly CaseEvidence[]): Promise<CaseEvidence[]> {
    const plain = rows.filter((r) => !r.judge);
    const judged = rows.filter((r): r is JudgedEvidenceRow & CaseEvidence => r.judge !== undefined);
    // Every case is always plain or always judged (its scorer is fixed by the suite version), so plain rows
    // then judged rows, each in case order, is one consistent lock order across transactions.
    const written: CaseEvidence[] = [...(await this.evidence.insertBatch(tx, plain))];
    written.push(...(await this.judgeEvidence.insertBatch(tx, judged)));
    return judged.length > 0 && plain.length > 0 ? written.sort((a, b) => compare(a.case_id, b.case_id)) : written;
  }

  // --- evals.work.seal -------------------------------------------------------------------------------------

  private async seal(seal: Received<SealWorkV1>, outcome: BatchOutcome): Promise<void> {
    const { msg, data } = seal;
    const settlement = new Settlement();
    // R7: a seal for a run its model does not see sealed is handed back for a later try (RUN_NOT_SEALED once
    // `deadLetterAfter` deliveries did not change that). Asked before the wait below, whose redeliveries must
    // not count as tries: a run's phase only moves forward, so once it is sealed this never fires again.
    const { state } = await loadRun(this.dataSource, this.events, data.run_id);
    if (state.opened && !RunModel.isSealed(state)) {
      this.retryLater(settlement, outcome, msg, DEAD_LETTER_CODES.runNotSealed, `run ${clamp(data.run_id)}: not sealed`);
      return this.settleAlone(settlement, outcome);
    }
    if (!(await this.bus.allAcknowledgedBefore(CONSUMERS.scoringWorker, msg.seq))) {
      // Earlier work is still in flight (maybe in another process): come back shortly. Not a failure, so it
      // never counts toward dead-lettering.
      msg.nak(this.settings.sealWaitMs);
      outcome.sealsWaiting++;
      return;
    }
    const resolved = await this.resolve(data.run_id, [msg], settlement, outcome);
    if (!resolved) return this.settleAlone(settlement, outcome);
    let appended: boolean;
    try {
      appended = await this.withConflictRetry(() => this.dataSource.transaction((tx) => this.sealInTransaction(tx, seal, resolved.suite)));
    } catch (error) {
      // The model refused the result (rolled back): not yet, like a run not yet known - never a letter at once.
      if (!(error instanceof RunRuleError)) throw error;
      this.retryLater(settlement, outcome, msg, error.code, `run ${clamp(data.run_id)}: ${error.code}`);
      return this.settleAlone(settlement, outcome);
    }
    if (appended) {
      outcome.events++;
      outcome.sealedRunIds.push(data.run_id);
    }
    // Acknowledged server side before the next seal of this batch reads the ack floor.
    await msg.ackConfirmed().catch(() => false);
  }

  /**
   * The run folded through its model (R7): `missing_output` evidence for the cases it lists as missing (R1),
   * the aggregate from the evidence, and `run.scored` as the model decides it. Returns false when the run is
   * scored already (a redelivered seal); throws RunRuleError when the model refuses the result (the run is
   * not sealed), which rolls the transaction back.
   */
  private async sealInTransaction(tx: Sql, seal: Received<SealWorkV1>, suite: CompiledSuite): Promise<boolean> {
    const runId = seal.data.run_id;
    await this.locks.exclusive(tx, runId);
    const { state, version } = await loadRun(tx, this.events, runId);
    if (state.phase === 'scored' || state.phase === 'compared') return false;
    const have = await this.evidence.caseIds(tx, runId);
    const scoredAt = this.clock.now().toISOString();
    // The model's missing cases - of its sample when the gate sampled (GT3), none of a monitor run - in suite order.
    const missingIds = new Set(RunModel.missingAtSeal(state, [...suite.cases.keys()], have));
    const missing = [...suite.cases.values()].filter((c) => missingIds.has(c.case_id)).map((c) => missingOutputEvidence(c, { runId, scoredAt }));
    await this.evidence.insertBatch(
      tx,
      [...missing].sort((a, b) => compare(a.case_id, b.case_id)),
    );
    const aggregate = await this.evidence.aggregate(tx, runId);
    // The run's judge usage, summed from its evidence (whichever worker judged which case): tokens, cost, cache.
    const judge = suite.scorer_versions['llm_judge'] !== undefined ? await this.judgeEvidence.runUsage(tx, runId) : null;
    const data: RunScoredV1 = {
      run_id: runId,
      n: aggregate.n,
      passed: aggregate.passed,
      score_sum: aggregate.score_sum,
      missing_count: missing.length,
      missing_case_ids: missing.slice(0, MAX_LISTED_MISSING).map((c) => c.case_id),
      ...(judge ? { judge } : {}),
    };
    const decided = RunModel.decide({ type: 'record_scored', data }, state);
    if (decided.length === 0) return false;
    const metadata = this.metadata(seal.metadata);
    await this.events.append(
      tx,
      runStreamId(runId),
      version,
      decided.map((e) => ({ ...e, metadata })),
    );
    return true;
  }

  /** Settles a seal handled on its own, outside a batch transaction: its dead letter if any, then ack or nak. */
  private async settleAlone(settlement: Settlement, outcome: BatchOutcome): Promise<void> {
    if (settlement.letters.length > 0) await this.deadLetters.add(this.dataSource, settlement.letters);
    await this.settle(settlement, outcome, false);
  }

  // --- shared ----------------------------------------------------------------------------------------------

  /**
   * The run and its compiled suite, or null after deciding the messages' fate: a run or suite version not
   * (yet) known is retried later and dead-lettered after `deadLetterAfter` deliveries; a suite that cannot be
   * compiled is dead-lettered at once (it will not get better).
   */
  private async resolve(runId: string, msgs: readonly BusMessage[], settlement: Settlement, outcome: BatchOutcome): Promise<{ run: OpenedRun; suite: CompiledSuite } | null> {
    const run = await this.catalog.run(this.dataSource, runId);
    if (!run) {
      for (const msg of msgs) this.retryLater(settlement, outcome, msg, DEAD_LETTER_CODES.unknownRun, `run ${clamp(runId)}: no run.opened event`);
      return null;
    }
    const { suite_key: suiteKey, suite_version: version } = run.opened;
    try {
      const suite = await this.catalog.suite(this.dataSource, suiteKey, version);
      if (suite) return { run, suite };
      for (const msg of msgs) {
        this.retryLater(settlement, outcome, msg, DEAD_LETTER_CODES.unknownSuiteVersion, `run ${clamp(runId)}: suite ${clamp(suiteKey)} v${version} not stored`);
      }
      return null;
    } catch (error) {
      if (!(error instanceof SuiteCompileError)) throw error;
      for (const msg of msgs) this.deadLetter(settlement, msg, DEAD_LETTER_CODES.suiteNotScorable, error.message);
      return null;
    }
  }

  private retryLater(settlement: Settlement, outcome: BatchOutcome, msg: BusMessage, code: string, reason: string): void {
    if (msg.deliveryCount >= this.settings.deadLetterAfter) {
      this.deadLetter(settlement, msg, code, `${reason} after ${msg.deliveryCount} deliveries`);
    } else {
      settlement.retry.push(msg);
      outcome.retried++;
    }
  }

  /**
   * Records a dead letter (written in the batch transaction; one per message - the table keeps the first
   * per subject and stream sequence, so a redelivery adds none). A dead-lettered message is acknowledged:
   * the letter is its record. `settleMessage` false when the message is acknowledged as scored anyway.
   */
  private deadLetter(settlement: Settlement, msg: BusMessage, code: string, reason: string, messageId?: string, settleMessage = true): void {
    settlement.letters.push(this.letter(msg, code, reason, messageId));
    if (settleMessage) settlement.ack.push(msg);
  }

  private letter(msg: BusMessage, code: string, reason: string, messageId?: string): DeadLetter {
    return { subject: contractSubject(this.settings.names, msg.subject), code, reason, message_id: messageId ?? msg.messageId, stream_seq: msg.seq };
  }

  /** After the commit: settles every message; `confirm` waits for the server to have the acks. */
  private async settle(settlement: Settlement, outcome: BatchOutcome, confirm: boolean): Promise<void> {
    for (const letter of settlement.letters) outcome.deadLettered.push({ subject: letter.subject, code: letter.code });
    for (const msg of settlement.retry) msg.nak(this.settings.retryDelayMs);
    if (confirm) {
      // A lost confirmation only delays a seal (it waits for the redelivery), so it is not an error here.
      await Promise.all(settlement.ack.map((msg) => msg.ackConfirmed().catch(() => false)));
    } else {
      for (const msg of settlement.ack) msg.ack();
    }
  }

  /**
   * A StreamVersionConflict rolls the whole transaction back. It means another process wrote the same
   * stream first (the seal of a redelivered message); doing the work again sees its result and does nothing.
   */
  private async withConflictRetry<T>(work: () => Promise<T>, attempts = 3): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await work();
      } catch (error) {
        if (!(error instanceof StreamVersionConflict) || attempt >= attempts) throw error;
      }
    }
  }

  private metadata(cause: WorkMetadata): EventMetadata {
    const correlation = typeof cause.correlation_id === 'string' && cause.correlation_id !== '' ? cause.correlation_id : cause.message_id;
    return {
      message_id: this.ids.uuid(),
      correlation_id: correlation,
      causation_id: cause.message_id,
      occurred_at: this.clock.now().toISOString(),
    };
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Ids in reasons are the caller's strings: bounded, so a dead letter stays small. */
function clamp(id: string, max = 200): string {
  return id.length <= max ? id : `${id.slice(0, max)}...`;
}

/** Case ids for a reason, each and all bounded. */
function caseList(ids: readonly string[]): string {
  return clamp(ids.map((id) => clamp(id, 100)).join(', '), 800);
}
