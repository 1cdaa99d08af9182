import { Inject, Injectable } from '@nestjs/common';
import { contractSubject, type BusMessage } from '@evals/bus';
import { SuiteCompileError, type CompiledSuite, type WorkMetadata } from '@evals/domain';
import { DeadLetterRepository, type DeadLetter, type Sql } from '@evals/persistence';
import { DATA_SOURCE } from '@evals/platform';
import type { DataSource } from 'typeorm';
import type { JudgeTally } from './judge-scoring';
import { RunCatalog, type OpenedRun } from './run-catalog';
import type { WorkerSettings } from './settings';
import { WORKER_SETTINGS } from './tokens';

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

/** A decoded work message. */
export interface Received<TData> {
  readonly msg: BusMessage;
  readonly data: TData;
  readonly metadata: WorkMetadata;
}

/** What to do with each message once the transaction committed. */
export class Settlement {
  readonly letters: DeadLetter[] = [];
  readonly retry: BusMessage[] = [];
  /** Handled - scored, or recorded as a dead letter - and removed from the work queue. */
  readonly ack: BusMessage[] = [];
}

/**
 * Decides each work message's fate - acknowledged, handed back for a later try, or dead-lettered with a
 * stable code and a reason naming ids and fields only (D1) - and carries it out once the work committed.
 * Also finds the run and compiled suite a message names, or decides the fate of a message whose run or
 * suite version is not (yet) known.
 */
@Injectable()
export class WorkSettler {
  constructor(
    @Inject(WORKER_SETTINGS) private readonly settings: WorkerSettings,
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    private readonly deadLetters: DeadLetterRepository,
    private readonly catalog: RunCatalog,
  ) {}

  /** Reads the batch's runs not known yet in one query, before each is resolved. */
  prefetch(runIds: readonly string[]): Promise<void> {
    return this.catalog.prefetch(this.db, runIds);
  }

  /**
   * The run and its compiled suite, or null after deciding the messages' fate: a run or suite version not
   * (yet) known is retried later and dead-lettered after `deadLetterAfter` deliveries; a suite that cannot be
   * compiled is dead-lettered at once (it will not get better).
   */
  async resolve(runId: string, msgs: readonly BusMessage[], settlement: Settlement, outcome: BatchOutcome): Promise<{ run: OpenedRun; suite: CompiledSuite } | null> {
    const run = await this.catalog.run(this.db, runId);
    if (!run) {
      for (const msg of msgs) this.retryLater(settlement, outcome, msg, DEAD_LETTER_CODES.unknownRun, `run ${clamp(runId)}: no run.opened event`);
      return null;
    }
    const { suite_key: suiteKey, suite_version: version } = run.opened;
    try {
      // Issue 30: the suite key is the run's project's (the same key in another project is another suite).
      const suite = await this.catalog.suite(this.db, run.project, suiteKey, version);
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

  retryLater(settlement: Settlement, outcome: BatchOutcome, msg: BusMessage, code: string, reason: string): void {
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
  deadLetter(settlement: Settlement, msg: BusMessage, code: string, reason: string, messageId?: string, settleMessage = true): void {
    settlement.letters.push(this.letter(msg, code, reason, messageId));
    if (settleMessage) settlement.ack.push(msg);
  }

  letter(msg: BusMessage, code: string, reason: string, messageId?: string): DeadLetter {
    return { subject: this.subject(msg), code, reason, message_id: messageId ?? msg.messageId, stream_seq: msg.seq };
  }

  /** The message's contract subject (its wire subject without this deployment's prefix). */
  subject(msg: BusMessage): string {
    return contractSubject(this.settings.names, msg.subject);
  }

  /** Writes dead letters, inside the caller's transaction. */
  write(tx: Sql, letters: readonly DeadLetter[]): Promise<void> {
    return this.deadLetters.add(tx, letters);
  }

  /** After the commit: records the letters in the outcome, hands back the retries, acknowledges the rest. */
  settle(settlement: Settlement, outcome: BatchOutcome): void {
    for (const letter of settlement.letters) outcome.deadLettered.push({ subject: letter.subject, code: letter.code });
    for (const msg of settlement.retry) msg.nak(this.settings.retryDelayMs);
    for (const msg of settlement.ack) msg.ack();
  }

  /** Settles a message handled on its own, outside a batch transaction: its dead letter if any, then ack or nak. */
  async settleAlone(settlement: Settlement, outcome: BatchOutcome): Promise<void> {
    if (settlement.letters.length > 0) await this.deadLetters.add(this.db, settlement.letters);
    this.settle(settlement, outcome);
  }
}

/** Ids in reasons are the caller's strings: bounded, so a dead letter stays small. */
export function clamp(id: string, max = 200): string {
  return id.length <= max ? id : `${id.slice(0, max)}...`;
}

/** Case ids for a reason, each and all bounded. */
export function caseList(ids: readonly string[]): string {
  return clamp(ids.map((id) => clamp(id, 100)).join(', '), 800);
}
