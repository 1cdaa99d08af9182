import { mergeHistory, type RunOutcomes } from '@evals/domain';
import type { BaselineCandidate, BaselinePin, LoadedRun, NewFinding, OutboxEntry, PinKey, PinWithRun, RunVerdictRow, StreamAppend, SubjectKey } from '@evals/persistence';

/** Another process recorded a verdict of this batch after the batch looked: roll back, and deciding again finds it recorded. */
export class VerdictRecordedMeanwhile extends Error {
  readonly code = 'VERDICT_RECORDED_MEANWHILE';
  constructor(readonly lost: number) {
    super(`${lost} verdict(s) of the batch were recorded by another process meanwhile`);
  }
}

const subjectKey = (k: SubjectKey) => `${k.project}\u0000${k.suite_key}\u0000${k.subject_kind}\u0000${k.subject_id}`;
const pinKey = (k: PinKey) => `${subjectKey(k)}\u0000${k.variant ?? ''}`;

/**
 * A micro-batch of `run.scored` being decided (issue 28): what `RegressionService.readAhead` read for all its
 * runs at once, and what its decisions wrote, kept here until `RegressionService.write` writes it all in one
 * statement per table. A decision reads the table as it would be after the batch's earlier decisions were
 * inserted: its verdict row is found by run id (the next delivery of the run is a duplicate, the next run's
 * explicit or pinned baseline may be it), and it is in its subject's history where the table's ordering puts
 * it (`mergeHistory`). Nothing is written before the batch ends, so what was read ahead stays what the table
 * holds, but for these rows. A question the read did not cover answers `undefined`: the caller asks the table.
 */
export class DecisionBatch {
  /** By run id, of any project: null when the run has no verdict. */
  private readonly verdicts = new Map<string, BaselineCandidate | null>();
  /** By pin key: null when the key has no pin. */
  private readonly pins = new Map<string, BaselinePin | null>();
  /** The first page of each subject's history, as read. */
  private readonly pages = new Map<string, readonly BaselineCandidate[]>();
  /** Each subject's verdicts decided in this batch: in its history, not yet in the table. */
  private readonly added = new Map<string, BaselineCandidate[]>();

  readonly rows: RunVerdictRow[] = [];
  readonly appends: StreamAppend[] = [];
  readonly findings: NewFinding[] = [];
  readonly outbox: OutboxEntry[] = [];

  private folded: ReadonlyMap<string, RunOutcomes> = new Map();

  constructor(readonly runs: ReadonlyMap<string, LoadedRun>) {}

  /** The folded cases of the batch's runs and their likely baselines (those the cache did not hold). */
  get outcomes(): ReadonlyMap<string, RunOutcomes> {
    return this.folded;
  }

  readOutcomes(outcomes: ReadonlyMap<string, RunOutcomes>): void {
    this.folded = outcomes;
  }

  /** What the table answered for `runIds` (`rows`, any project): a run id without a row has none. */
  readVerdicts(runIds: readonly string[], rows: readonly BaselineCandidate[]): void {
    for (const id of runIds) this.verdicts.set(id, null);
    for (const row of rows) this.verdicts.set(row.run_id, row);
  }

  readPins(keys: readonly PinKey[], pins: readonly PinWithRun[]): void {
    for (const k of keys) this.pins.set(pinKey(k), null);
    for (const { project, pinned, ...pin } of pins) {
      this.pins.set(pinKey({ ...pin, project }), pin);
      // The pinned run's row. None in the pin's project may still be a row of another project's (run ids are
      // unique across them, and callers compare the project), so a row read anywhere is never undone by a null.
      if (pinned) this.verdicts.set(pin.run_id, pinned);
      else if (!this.verdicts.has(pin.run_id)) this.verdicts.set(pin.run_id, null);
    }
  }

  readHistories(keys: readonly SubjectKey[], pages: readonly (readonly BaselineCandidate[])[]): void {
    keys.forEach((k, i) => this.pages.set(subjectKey(k), pages[i]));
  }

  /** The run's verdict row, of whichever project: null when it has none, undefined when not read. */
  verdict(runId: string): BaselineCandidate | null | undefined {
    return this.verdicts.get(runId);
  }

  pin(key: PinKey): BaselinePin | null | undefined {
    return this.pins.get(pinKey(key));
  }

  /** The first page of the subject's history as read, without this batch's verdicts; undefined when not read. */
  page(key: SubjectKey): readonly BaselineCandidate[] | undefined {
    return this.pages.get(subjectKey(key));
  }

  /** The first `limit` of the subject's history: `read` from the table, with this batch's verdicts where the table will have them. */
  history(key: SubjectKey, read: readonly BaselineCandidate[], limit: number): BaselineCandidate[] {
    return mergeHistory(read, this.added.get(subjectKey(key)) ?? [], limit);
  }

  /** A decision: its row, to be written, and seen by the batch's later decisions as if it were. */
  record(row: RunVerdictRow): void {
    const { comparison: _, ...candidate } = row;
    // The table's text form of the time (UTC, milliseconds), which the history's order and every candidate read
    // carry; a form JavaScript cannot parse is kept as it came (the insert is then the judge of it).
    const at = Date.parse(row.completed_at);
    const stored: BaselineCandidate = { ...candidate, completed_at: Number.isNaN(at) ? row.completed_at : new Date(at).toISOString() };
    this.verdicts.set(row.run_id, stored);
    const key = subjectKey(row);
    const added = this.added.get(key);
    if (added) added.push(stored);
    else this.added.set(key, [stored]);
    this.rows.push(row);
  }
}
