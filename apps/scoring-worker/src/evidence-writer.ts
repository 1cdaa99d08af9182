import { Inject, Injectable } from '@nestjs/common';
import { caseOutcomeOf, encodeCaseOutcomes, RUN_EVENTS, runStreamId, type CaseEvidence, type CasesScoredV3, type ScoreWorkV1 } from '@evals/domain';
import { EventStore, type DeadLetter, type NewEvent, type Sql, type StreamAppend } from '@evals/persistence';
import { DATA_SOURCE } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { EventStamper, withConflictRetry } from './event-stamper';
import { compare, RunEvidence } from './run-evidence';
import { caseList, clamp, DEAD_LETTER_CODES, WorkSettler, type Received, type Settlement } from './work-settler';

/** An evidence row scored from an output, and the message the output came in. */
export interface Owned {
  readonly evidence: CaseEvidence;
  readonly owner: Received<ScoreWorkV1>;
}

/**
 * An output that gets no evidence row of its own: its case had one already (stored, or earlier in the
 * batch). Only its keyed hash (D2) is kept, to tell a redelivery from a second output.
 */
export interface Repeat {
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

/** What one batch transaction wrote. */
export interface Written {
  readonly inserted: CaseEvidence[];
  /** `cases.scored` events appended. */
  readonly events: number;
  /** Outputs identical to the evidence their case holds: redeliveries. */
  readonly redelivered: number;
  /** The letters of outputs refused inside the transaction (DUPLICATE_OUTPUT, OUTPUT_AFTER_SEAL). */
  readonly letters: DeadLetter[];
}

/**
 * The scoring transaction of a micro-batch (docs/pipeline.md step 2): the evidence rows (`ON CONFLICT DO
 * NOTHING`), `cases.scored` v3 per run for the rows actually inserted (with their outbox rows), the
 * comparison of every output that got no row with the row its case holds, and the batch's dead letters -
 * all in one transaction, so a redelivery inserts nothing and announces nothing.
 */
@Injectable()
export class EvidenceWriter {
  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    private readonly events: EventStore,
    private readonly evidence: RunEvidence,
    private readonly settler: WorkSettler,
    private readonly stamper: EventStamper,
  ) {}

  /** Which of these judge cases of a run already have evidence: they are compared, never judged (and paid) again. */
  judgedAlready(runId: string, caseIds: readonly string[]): Promise<Set<string>> {
    return this.evidence.judgedAlready(this.db, runId, caseIds);
  }

  /**
   * Writes the batch: `rows`, the comparison of `repeats` (and of rows another transaction inserted first),
   * and the settlement's letters with those of refused outputs - except for messages in `lettered`, which
   * have their one letter already.
   */
  commit(rows: readonly Owned[], repeats: readonly Repeat[], settlement: Settlement, lettered: ReadonlySet<Received<ScoreWorkV1>>): Promise<Written> {
    return withConflictRetry(() =>
      this.db.transaction(async (tx) => {
        const result = await this.insertScored(tx, rows);
        const checked = await this.checkRepeats(tx, rows, result.inserted, repeats);
        const letters = [...checked.refused].filter(([owner]) => !lettered.has(owner)).map(([owner, refused]) => this.refusedLetter(owner, refused));
        await this.settler.write(tx, [...settlement.letters, ...letters]);
        return { ...result, redelivered: checked.redelivered, letters };
      }),
    );
  }

  /** Inside the batch transaction: evidence, then one `cases.scored` per run for the rows actually inserted. */
  private async insertScored(tx: Sql, rows: readonly Owned[]): Promise<{ inserted: CaseEvidence[]; events: number }> {
    // Grouped in one pass: a micro-batch can carry tens of thousands of rows of dozens of runs, and a filter
    // per run was the worker's largest single cost in bench:pipeline's batched phase.
    const byRun = new Map<string, Owned[]>();
    for (const r of rows) {
      const list = byRun.get(r.evidence.run_id);
      if (list) list.push(r);
      else byRun.set(r.evidence.run_id, [r]);
    }
    const runIds = [...byRun.keys()].sort(compare);
    // Shared: scoring transactions run side by side; a seal (exclusive) waits for them, and they for it. Once
    // a run is scored every case of it has evidence, so a late output inserts nothing below.
    await this.evidence.lockShared(tx, runIds);
    const orderedOf = new Map(runIds.map((runId) => [runId, byRun.get(runId)!.sort(byCaseId)]));
    // One insert for the batch's runs, in (run, case) order: one fixed order for every transaction, the seal's
    // too, so concurrent inserts never deadlock. Issue 28: an insert and an append per run - five round trips
    // each, one after the other in the transaction - made a batch of 200 runs take seconds at 5 000 cases/s.
    const inserted = await this.evidence.insert(
      tx,
      runIds.flatMap((runId) => orderedOf.get(runId)!.map((r) => r.evidence)),
    );
    const writtenOf = new Map<string, CaseEvidence[]>();
    for (const e of inserted) {
      const list = writtenOf.get(e.run_id);
      if (list) list.push(e);
      else writtenOf.set(e.run_id, [e]);
    }
    const appends: StreamAppend[] = [];
    let events = 0;
    for (const runId of runIds) {
      const written = writtenOf.get(runId);
      if (!written) continue;
      const ordered = orderedOf.get(runId)!;
      // Every row written (the usual case) comes back in `ordered`'s order: its owner is found by position;
      // a map of the run's rows is built only when that is not so.
      let owners: Map<CaseEvidence, Received<ScoreWorkV1>> | undefined;
      const ownerOf = (e: CaseEvidence, i: number): Received<ScoreWorkV1> =>
        ordered[i]?.evidence === e ? ordered[i].owner : (owners ??= new Map(ordered.map((r) => [r.evidence, r.owner]))).get(e)!;
      // The event's stream is named after the earliest message that contributed a new row: every case of that
      // message has evidence once this commits, so no later transaction can name the same stream.
      let cause = ownerOf(written[0], 0);
      for (let i = 1; i < written.length; i++) {
        const owner = ownerOf(written[i], i);
        if (owner.msg.seq < cause.msg.seq) cause = owner;
      }
      // cases.scored v3: the counts and the rows' results, columnar - what the regression app and the read
      // model need of the evidence, which they no longer read (issue 27). A large batch is several events.
      const batch = encodeCaseOutcomes(runId, written.map(caseOutcomeOf)).map(
        (data): NewEvent<CasesScoredV3> => ({ type: RUN_EVENTS.casesScored, version: 3, data, metadata: this.stamper.metadata(cause.metadata) }),
      );
      appends.push({ streamId: `${runStreamId(runId)}.cases.${cause.metadata.message_id}`, expectedVersion: 0, events: batch });
      events += batch.length;
    }
    // One statement for every run's events: a micro-batch's runs (at most its messages) and their events
    // (MAX_CASES_PER_EVENT rows each) stay far below PostgreSQL's bind parameters.
    await this.events.appendMany(tx, appends);
    return { inserted, events };
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
    // Every row inserted (the usual case): only the repeats are left to compare.
    const wasInserted = inserted.length === rows.length ? null : new Set(inserted);
    const pending: Repeat[] = wasInserted
      ? [
          ...rows.filter((r) => !wasInserted.has(r.evidence)).map((r) => ({ owner: r.owner, runId: r.evidence.run_id, caseId: r.evidence.case_id, hash: r.evidence.detail_hash })),
          ...repeats,
        ]
      : [...repeats];
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
    return this.settler.letter(owner.msg, code, parts.join('; '), owner.metadata.message_id);
  }
}

function byCaseId(a: Owned, b: Owned): number {
  return compare(a.evidence.case_id, b.evidence.case_id);
}
