import { ContractError, encodeMessage, projectSubject, SUBJECTS } from '@evals/contracts';
import { caseOutcomesOf, evolveRun, evolveVerdict, RUN_EVENTS, runStreamId, toEvalResult, type CaseOutcome, type EvalResult, type ProjectedVerdict, type RunDoc } from '@evals/domain';
import {
  CaseResultRepository,
  DeadLetterRepository,
  docProject,
  EventStore,
  eventSubject,
  Outbox,
  RunReadModelRepository,
  type DeadLetter,
  type OutboxEntry,
  type Sql,
  type StoredEvent,
} from '@evals/persistence';
import { checkEvent, type CheckedEvent, type StoredEventLike } from './event-check';
import { InboxClaims } from './inbox-claims';

export type { StoredEventLike } from './event-check';

/** Name of the projection in `projection_inbox` and `projection_checkpoints`. */
export const RUNS_PROJECTION = 'runs';

/** Dead-letter codes written by the projection (docs/read-model.md). */
export const READ_MODEL_DEAD_LETTER = {
  invalidEvent: 'INVALID_EVENT',
  runNotOpened: 'RUN_NOT_OPENED',
  /** A `run.compared` whose run has no `run.scored` in the event log (never the case for a healthy log). */
  runNotScored: 'RUN_NOT_SCORED',
  invalidResult: 'INVALID_RESULT',
} as const;

/** What became of each event handed to `apply`, by input index. */
export type EventStatus =
  /** Claimed in the inbox and applied to the run document. */
  | 'applied'
  /** Already applied before (redelivery, or applied ahead of time from the log): nothing done. */
  | 'duplicate'
  /** Malformed (or never openable): written to dead_letters, never retried. */
  | 'dead_lettered'
  /**
   * The run's `run.opened` (for a `run.compared`: its `run.scored`) is neither projected nor in the event
   * log yet: nothing done, not claimed; the caller retries it later (the consumer naks it with a delay).
   */
  | 'deferred';

/** Where an event came from, for dead letters and for the last-attempt decision. */
export interface Delivery {
  /** The contract subject (no deployment prefix). */
  readonly subject: string;
  readonly stream_seq?: number;
  /** True on the last delivery the consumer allows: a still-unopenable event is dead-lettered, not deferred. */
  readonly final?: boolean;
}

export interface ApplyOptions {
  /**
   * Whether a newly recorded EvalResult gets its `evals.result.recorded` outbox row (R4). Live: always. A
   * rebuild passes a predicate that refuses the results that were already published once, so other teams
   * never receive an EvalResult twice (docs/read-model.md, "Rebuild").
   */
  readonly publish?: boolean | ((result: EvalResult) => boolean);
  /** Whether malformed events go to dead_letters (live) or are only counted (rebuild: they already went). */
  readonly recordDeadLetters?: boolean;
  /** Same index as `events`; absent for events read from the log. */
  readonly deliveries?: ReadonlyArray<Delivery | undefined>;
}

export interface ProjectionOutcome {
  readonly statuses: EventStatus[];
  readonly applied: number;
  readonly duplicates: number;
  readonly deadLettered: number;
  readonly deferred: number;
  /** Run ids whose EvalResult this call recorded (first time). */
  readonly resultsRecorded: string[];
  /** Run ids whose regression decision (`run.compared`) this call projected into read_run_verdicts. */
  readonly verdictsRecorded: string[];
  /** `evals.result.recorded` outbox rows written: wake the relay when > 0. */
  readonly outboxRows: number;
  /** The checkpoint after this call, when it applied anything. */
  readonly checkpoint: number | null;
}

export interface IdSource {
  uuid(): string;
}

export interface ProjectorLogger {
  event(level: 'debug' | 'info' | 'warn' | 'error', msg: string, fields?: Record<string, string | number | boolean | null | undefined>): void;
}

interface DocEntry {
  doc: RunDoc | null;
  dirty: boolean;
  position: number;
  /** The run's projected verdict: undefined until a run.compared of the batch needs it. */
  verdict?: ProjectedVerdict | null;
  /** Projected by this batch: saved at the end, with the position of its run.compared. */
  newVerdict?: { readonly verdict: ProjectedVerdict; readonly position: number };
  /** Case results of the batch's cases.scored (v1, v3): written at the end, with every run's. */
  cases: CaseOutcome[];
}

/** What one micro-batch writes at its end: each a statement for the whole batch (issue 28). */
interface BatchWrites {
  readonly claims: InboxClaims;
  readonly outboxRows: OutboxEntry[];
  /**
   * The log's `cases.scored` not applied yet of the runs whose `run.scored` the batch applies (delivered in it,
   * or foreseen to be read from the log), read once for all.
   */
  readonly unappliedCases: Map<string, StoredEvent[]>;
  /** The run streams (`run-<id>`) of the runs the batch foresaw catching up from the log, read once for all; empty when none. */
  readonly runStreams: Map<string, StoredEvent[]>;
  /** EvalResults of runs the batch completed, in order: recorded (the first time) at the end. */
  readonly results: Array<{ readonly result: EvalResult; readonly position: number; readonly item: CheckedEvent; readonly project: string }>;
}

/**
 * The run projection (R2, R3, R4): applies internal events to the run documents with the pure
 * `evolveRun`, records the EvalResult when a run completes and announces it through the outbox. One call
 * is one micro-batch and runs inside the caller's transaction (`sql`), so the documents, the inbox claims,
 * the EvalResult, its outbox row, the dead letters and the checkpoint commit together or not at all.
 *
 * Used as is by the live consumer and by the rebuild (docs/read-model.md).
 */
export class RunProjector {
  constructor(
    private readonly ids: IdSource,
    private readonly logger?: ProjectorLogger,
    private readonly repo = new RunReadModelRepository(),
    private readonly store = new EventStore(),
    private readonly outbox = new Outbox(),
    private readonly deadLetters = new DeadLetterRepository(),
    private readonly caseResults = new CaseResultRepository(),
  ) {}

  async apply(sql: Sql, events: ReadonlyArray<StoredEventLike | null>, options: ApplyOptions = {}): Promise<ProjectionOutcome> {
    const statuses: EventStatus[] = new Array(events.length);
    const letters: DeadLetter[] = [];
    const valid: Array<CheckedEvent & { index: number }> = [];

    events.forEach((raw, index) => {
      const checked = checkEvent(raw);
      if (checked.ok) {
        valid.push({ ...checked.value, index });
        return;
      }
      statuses[index] = 'dead_lettered';
      letters.push({
        subject: options.deliveries?.[index]?.subject ?? subjectFor(raw),
        code: READ_MODEL_DEAD_LETTER.invalidEvent,
        reason: checked.reason,
        message_id: checked.message_id ?? null,
        stream_seq: options.deliveries?.[index]?.stream_seq ?? null,
      });
    });

    // Log order within the batch: a run's events were committed in causal order, so position order puts
    // run.opened first whenever it travels in the same batch.
    valid.sort((a, b) => a.position - b.position);

    // Lock the documents in a fixed order (run id), so two read-model processes never deadlock on them.
    const docs = new Map<string, DocEntry>();
    const runIds = [...new Set(valid.map((v) => v.event.data.run_id))].sort();
    const loaded = await this.repo.loadAll(sql, runIds, true);
    for (const runId of runIds) docs.set(runId, { doc: loaded.get(runId) ?? null, dirty: false, position: 0, cases: [] });
    // The verdicts a run.compared of the batch evolves, read once for all of them.
    const compared = valid.filter((v) => v.event.type === RUN_EVENTS.compared).map((v) => v.event.data.run_id);
    const verdicts = await this.repo.loadVerdicts(sql, compared);
    const comparedRuns = new Set(compared);
    for (const runId of compared) docs.get(runId)!.verdict = verdicts.get(runId) ?? null;
    // Events relayed ahead of their run's run.opened (or a run.compared ahead of its run.scored) are caught up
    // from the run's stream in the log, and a run.scored catches up its cases: what the batch foresees needing
    // is read in one query each, and the inbox read covers those events too, so their claims join the batch's
    // one write (issue 28: a read and a claim per run and per event before). What it did not foresee is read
    // when met, as before.
    const runStreams = await this.readRunStreams(sql, catchUpRuns(valid, docs, comparedRuns));
    const scoredRuns = valid.filter((v) => v.event.type === RUN_EVENTS.scored).map((v) => v.event.data.run_id);
    const unappliedCases = await this.repo.unappliedCasesOf(sql, RUNS_PROJECTION, [...scoredRuns, ...[...runStreams.keys()].filter((runId) => comparedRuns.has(runId))]);
    const logged = [...runStreams.values(), ...unappliedCases.values()].flat().flatMap((stored) => {
      const checked = checkEvent(stored);
      return checked.ok ? [checked.value.metadata.message_id] : [];
    });
    const writes: BatchWrites = {
      claims: await InboxClaims.read(sql, this.repo, RUNS_PROJECTION, [...valid.map((v) => v.metadata.message_id), ...logged]),
      outboxRows: [],
      results: [],
      unappliedCases,
      runStreams,
    };

    let maxPosition = 0;
    // An event whose run is not far enough along in the log waits for a redelivery; on its last one it is
    // dead-lettered, naming the event it lacked.
    const waitOrDeadLetter = (item: (typeof valid)[number], code: string, lacking: string): void => {
      const delivery = options.deliveries?.[item.index];
      if (!delivery?.final) {
        statuses[item.index] = 'deferred';
        return;
      }
      statuses[item.index] = 'dead_lettered';
      letters.push({
        subject: delivery.subject,
        code,
        reason: `${item.event.type}: no ${lacking} for data.run_id in the event log`,
        message_id: item.metadata.message_id,
        stream_seq: delivery.stream_seq ?? null,
      });
    };
    for (const item of valid) {
      const runId = item.event.data.run_id;
      const entry = docs.get(runId) as DocEntry;
      if (entry.doc === null && item.event.type !== RUN_EVENTS.opened) {
        const opened = await this.openFromLog(sql, runId, entry, writes);
        if (opened !== null) maxPosition = Math.max(maxPosition, opened);
        if (entry.doc === null) {
          waitOrDeadLetter(item, READ_MODEL_DEAD_LETTER.runNotOpened, 'run.opened');
          continue;
        }
      }
      // run.compared joins the decision with the completed run (suite, subject, counts): when the run's
      // run.scored has not been applied yet (delivered later, or redelivered after a failed batch), read it
      // from the log, as run.opened above; else wait for it.
      if (entry.doc !== null && evolveVerdict(null, entry.doc, item.event).kind === 'awaiting_run') {
        const caught = await this.scoreFromLog(sql, runId, item.position, entry, writes);
        maxPosition = Math.max(maxPosition, caught);
        if (evolveVerdict(null, entry.doc, item.event).kind === 'awaiting_run') {
          waitOrDeadLetter(item, READ_MODEL_DEAD_LETTER.runNotScored, 'run.scored');
          continue;
        }
      }
      if (!(await writes.claims.claim(sql, item.metadata.message_id, item.position))) {
        statuses[item.index] = 'duplicate';
        // A run.opened claimed by another process after this batch loaded the document: see it now.
        if (entry.doc === null) entry.doc = await this.repo.load(sql, runId, true);
        continue;
      }
      await this.evolve(sql, entry, item, writes);
      statuses[item.index] = 'applied';
      maxPosition = Math.max(maxPosition, item.position);
    }

    // First the claims: a claim lost to another process rolls the batch back before anything else is written.
    await writes.claims.commit(sql);
    await this.caseResults.insertAll(
      sql,
      [...docs].map(([runId, entry]) => ({ runId, outcomes: entry.cases })),
    );
    await this.repo.saveAll(
      sql,
      [...docs.values()].flatMap((entry) => (entry.dirty && entry.doc !== null ? [{ doc: entry.doc, position: entry.position }] : [])),
    );
    // The verdict's project is its run's (a verdict is only projected once the run's document exists).
    const newVerdicts = [...docs.values()].flatMap((entry) =>
      entry.newVerdict && entry.doc !== null ? [{ project: docProject(entry.doc), verdict: entry.newVerdict.verdict, position: entry.newVerdict.position }] : [],
    );
    const savedVerdicts = await this.repo.saveVerdicts(sql, newVerdicts);
    const verdictsRecorded = newVerdicts.map((v) => v.verdict.run_id).filter((runId) => savedVerdicts.has(runId));
    const resultsRecorded = await this.recordResults(sql, writes, letters, options);
    if (options.recordDeadLetters ?? true) await this.deadLetters.add(sql, letters);
    await this.outbox.add(sql, writes.outboxRows);
    const checkpoint = maxPosition > 0 ? await this.repo.advanceCheckpoint(sql, RUNS_PROJECTION, maxPosition) : null;

    return {
      statuses,
      applied: statuses.filter((s) => s === 'applied').length,
      duplicates: statuses.filter((s) => s === 'duplicate').length,
      deadLettered: statuses.filter((s) => s === 'dead_lettered').length,
      deferred: statuses.filter((s) => s === 'deferred').length,
      resultsRecorded,
      verdictsRecorded,
      outboxRows: writes.outboxRows.length,
      checkpoint,
    };
  }

  /**
   * An event of a run whose document does not exist yet. Events reach the bus through the outbox relays of
   * different processes, so a worker's `cases.scored` (or a seal's `run.scored`) can arrive before the
   * ingestion's `run.opened`, and `evolveRun` would drop it. But `run.opened` is committed to the log before
   * any work for the run exists, so it is read from there and applied first (claimed in the inbox, so its
   * own delivery later is a duplicate). Returns the position applied, or null.
   */
  private async openFromLog(sql: Sql, runId: string, entry: DocEntry, writes: BatchWrites): Promise<number | null> {
    let stream = writes.runStreams.get(runId);
    if (stream === undefined) {
      // Another process may have projected it since this batch loaded the document. (A foreseen run needs no
      // second look: its run.opened was in the batch's inbox read, so a claim of another process shows there,
      // or makes the batch's claims roll it back.)
      entry.doc = await this.repo.load(sql, runId, true);
      if (entry.doc !== null) return null;
      stream = await this.store.readStream(sql, runStreamId(runId));
    }
    const opened = stream.find((e) => e.type === RUN_EVENTS.opened);
    if (opened === undefined) return null;
    const checked = checkEvent(opened);
    if (!checked.ok || checked.value.event.data.run_id !== runId) {
      this.logger?.event('warn', 'run.opened in the log is invalid', { run_id: runId, position: opened.position });
      return null;
    }
    if (!(await writes.claims.claim(sql, checked.value.metadata.message_id, checked.value.position))) {
      entry.doc = await this.repo.load(sql, runId, true);
      return null;
    }
    await this.evolve(sql, entry, checked.value, writes);
    this.logger?.event('debug', 'run.opened applied from the log ahead of its delivery', { run_id: runId, position: checked.value.position });
    return checked.value.position;
  }

  /**
   * A `run.compared` of a run whose `run.scored` is not applied yet. The regression app decides only after
   * it saw `run.scored`, which was committed on the run's stream before, so it is read from there and
   * applied first (claimed in the inbox, so its own delivery later is a duplicate), with the `run.sealed`
   * before it. Returns the highest position applied, or 0.
   */
  private async scoreFromLog(sql: Sql, runId: string, before: number, entry: DocEntry, writes: BatchWrites): Promise<number> {
    let applied = 0;
    for (const stored of writes.runStreams.get(runId) ?? (await this.store.readStream(sql, runStreamId(runId)))) {
      if (stored.position >= before || (stored.type !== RUN_EVENTS.sealed && stored.type !== RUN_EVENTS.scored)) continue;
      const checked = checkEvent(stored);
      if (!checked.ok || checked.value.event.data.run_id !== runId) {
        this.logger?.event('warn', `${String(stored.type)} in the log is invalid`, { run_id: runId, position: stored.position });
        continue;
      }
      if (!(await writes.claims.claim(sql, checked.value.metadata.message_id, checked.value.position))) continue;
      await this.evolve(sql, entry, checked.value, writes);
      applied = Math.max(applied, checked.value.position);
      this.logger?.event('debug', `${checked.value.event.type} applied from the log ahead of its delivery`, { run_id: runId, position: checked.value.position });
    }
    return applied;
  }

  /**
   * Before a run's `run.scored`: its `cases.scored` still on their way (another worker's relay can be behind
   * the one that carried the seal, and every one of them was committed before the seal) are read from the
   * log and applied first, claimed in the inbox so their own delivery is a duplicate - the completed run,
   * its EvalResult and the gate that waits for it see every case (issue 27). An invalid one is left to its
   * delivery, which dead-letters it.
   */
  private async casesFromLog(sql: Sql, runId: string, entry: DocEntry, writes: BatchWrites): Promise<void> {
    // Read with the batch when its run.scored was delivered in it (those applied since are claimed: skipped below).
    const logged = writes.unappliedCases.get(runId) ?? (await this.repo.unappliedCases(sql, RUNS_PROJECTION, runId));
    writes.unappliedCases.delete(runId);
    for (const stored of logged) {
      const checked = checkEvent(stored);
      if (!checked.ok || checked.value.event.data.run_id !== runId) continue;
      if (!(await writes.claims.claim(sql, checked.value.metadata.message_id, checked.value.position))) continue;
      await this.evolve(sql, entry, checked.value, writes);
    }
  }

  /** The run streams of `runIds` in one query, by run id; a run with none in the log has an empty one. */
  private async readRunStreams(sql: Sql, runIds: readonly string[]): Promise<Map<string, StoredEvent[]>> {
    const streams = await this.store.readStreams(sql, runIds.map(runStreamId));
    return new Map(runIds.map((runId) => [runId, streams.get(runStreamId(runId)) ?? []]));
  }

  private async evolve(sql: Sql, entry: DocEntry, item: CheckedEvent, writes: BatchWrites): Promise<void> {
    if (item.event.type === RUN_EVENTS.scored) await this.casesFromLog(sql, item.event.data.run_id, entry, writes);
    const before = entry.doc;
    // A run's cases are projected whatever its document's state: a run.scored relayed ahead of a batch's
    // cases.scored completes the document first, and the cases still belong to the run (issue 27).
    if (item.event.type === RUN_EVENTS.casesScored) for (const o of caseOutcomesOf(item.event, item.metadata.occurred_at)) entry.cases.push(o);
    const after = evolveRun(before, item.event, { occurred_at: item.metadata.occurred_at });
    entry.doc = after;
    // Saved with the highest position applied to the run, whatever the delivery order (last_position).
    entry.dirty = true;
    entry.position = Math.max(entry.position, item.position);
    if (item.event.type === RUN_EVENTS.compared && after !== null) {
      if (entry.verdict === undefined) entry.verdict = await this.repo.loadVerdict(sql, after.run_id);
      const step = evolveVerdict(entry.verdict, after, item.event);
      if (step.kind === 'recorded') {
        entry.verdict = step.verdict;
        entry.newVerdict = { verdict: step.verdict, position: item.position };
      }
      return;
    }
    if (after === null || after.status !== 'completed' || before?.status === 'completed') return;

    const result = toEvalResult(after);
    if (result === null) return; // a run of zero cases has no EvalResult (suites refuse empty case lists)
    writes.results.push({ result, position: item.position, item, project: docProject(after) });
  }

  /**
   * The batch's EvalResults in one statement; those recorded the first time get their `evals.result.recorded`
   * outbox row (unless the caller's `publish` says no). Returns the run ids recorded.
   */
  private async recordResults(sql: Sql, writes: BatchWrites, letters: DeadLetter[], options: ApplyOptions): Promise<string[]> {
    const recorded = await this.repo.saveEvalResults(sql, writes.results);
    const resultsRecorded: string[] = [];
    for (const { result, item, project } of writes.results) {
      // A run completes once; `delete` keeps a second result of one run in the batch (never expected) from a second row.
      if (!recorded.delete(result.run_id)) continue;
      resultsRecorded.push(result.run_id);
      const publish = options.publish ?? true;
      if (!(typeof publish === 'function' ? publish(result) : publish)) continue;
      const messageId = this.ids.uuid();
      // Issue 30 (ADR 0009): the run's project rides in the envelope and as the subject's last token, so a
      // consumer of one project filters `evals.result.recorded.<project>`; `default` keeps the bare subject and
      // the envelope of before projects. The relay publishes each row on its own subject.
      try {
        const payload = encodeMessage(SUBJECTS.RESULT_RECORDED, 1, result, {
          message_id: messageId,
          correlation_id: item.metadata.correlation_id,
          causation_id: item.metadata.message_id,
          occurred_at: result.occurred_at,
          project,
        });
        writes.outboxRows.push({ subject: projectSubject(SUBJECTS.RESULT_RECORDED, project), message_id: messageId, payload });
      } catch (error) {
        if (!(error instanceof ContractError)) throw error;
        // Our own result breaking our own contract is a bug: keep the result, refuse to publish it, say so.
        // ContractError messages name fields and constraints only.
        this.logger?.event('error', 'EvalResult breaks evals.result.recorded v1; not published', { run_id: result.run_id, code: error.code });
        if (options.recordDeadLetters ?? true) {
          letters.push({ subject: projectSubject(SUBJECTS.RESULT_RECORDED, project), code: READ_MODEL_DEAD_LETTER.invalidResult, reason: error.message, message_id: messageId });
        }
      }
    }
    return resultsRecorded;
  }
}

/**
 * The runs of a batch that will read their own stream in the log, as far as the batch tells before applying
 * anything (a guess both ways is harmless: a run missed reads its stream when met, one too many costs nothing
 * but rows in the one query): a run without a document whose first event in the batch is not its run.opened,
 * and a run with a run.compared but neither a completed document nor a run.scored in the batch.
 */
function catchUpRuns(valid: readonly CheckedEvent[], docs: ReadonlyMap<string, DocEntry>, compared: ReadonlySet<string>): string[] {
  const first = new Map<string, string>();
  const scored = new Set<string>();
  for (const v of valid) {
    if (!first.has(v.event.data.run_id)) first.set(v.event.data.run_id, v.event.type);
    if (v.event.type === RUN_EVENTS.scored) scored.add(v.event.data.run_id);
  }
  return [...docs].flatMap(([runId, { doc }]) => {
    const unopened = doc === null && first.get(runId) !== RUN_EVENTS.opened;
    const unscored = compared.has(runId) && doc?.status !== 'completed' && !scored.has(runId);
    return unopened || unscored ? [runId] : [];
  });
}

function subjectFor(raw: StoredEventLike | null | undefined): string {
  const type = typeof raw === 'object' && raw !== null ? raw.type : undefined;
  return typeof type === 'string' && (Object.values(RUN_EVENTS) as string[]).includes(type) ? eventSubject(type) : eventSubject('unknown');
}
