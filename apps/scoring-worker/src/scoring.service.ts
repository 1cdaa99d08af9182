import { Inject, Injectable } from '@nestjs/common';
import { AckFloorProbe, CONSUMERS, HandledLedger, Limiter, type BusMessage, type MessageBus } from '@evals/bus';
import { RunRuleError, WORK_SUBJECTS, decodeWork, type ScoreWorkV1, type SealWorkV1 } from '@evals/domain';
import { MESSAGE_BUS } from '@evals/platform';
import { emptyTally } from './judge-scoring';
import { OutputScorer } from './output-scorer';
import { MAX_SEAL_GROUP, RunSealer } from './run-sealer';
import type { WorkerSettings } from './settings';
import { WORKER_SETTINGS } from './tokens';
import { clamp, DEAD_LETTER_CODES, Settlement, WorkSettler, type BatchOutcome, type Received } from './work-settler';

export { DEAD_LETTER_CODES } from './work-settler';
export type { BatchOutcome } from './work-settler';

/**
 * Seals of one micro-batch in progress at once: as many as one group of the sealer takes, which reads their
 * runs' states in one query and seals those that are ready in one transaction (issue 28). A bound on one
 * group's size, not on connections: a group holds one.
 */
const MAX_CONCURRENT_SEALS = MAX_SEAL_GROUP;

/**
 * Step 2 of docs/pipeline.md: scores `evals.work.score` batches into evidence and seals runs.
 *
 * - Every output of a micro-batch is scored in memory, then ONE transaction inserts the evidence
 *   (`ON CONFLICT DO NOTHING`), appends one `cases.scored` event per run for the rows actually inserted (with
 *   its outbox row) and writes the dead letters; only then are the messages acknowledged. A redelivery
 *   therefore inserts nothing and announces nothing (OutputScorer, EvidenceWriter).
 * - An output whose case already has evidence (stored, earlier in the batch, or inserted first by another
 *   worker) is compared with it by keyed hash in that same transaction: the same output is a redelivery,
 *   acknowledged silently; a different one dead-letters its message `DUPLICATE_OUTPUT`, an output for a case
 *   the seal scored `missing_output` `OUTPUT_AFTER_SEAL` (one letter per message, an `UNKNOWN_CASE` one
 *   first; the rest of the message is scored).
 * - A run is read only through its model (R7, `loadRun`): its facts (judge skip, missing cases) are the
 *   model's, and `run.scored` is what `RunModel.decide` decides (RunSealer).
 * - A seal waits until every earlier message of the stream is handled, then in one transaction writes
 *   `missing_output` evidence (R1), computes the aggregate from the evidence and appends `run.scored`. The
 *   seals of one micro-batch are handled concurrently (issue 28: one after the other, each with its own
 *   ack-floor request, they bounded the worker at about 30 runs a second). What this process committed and
 *   every other seal count as handled without asking (HandledLedger: a seal handed back to wait held the
 *   server's floor, and made most seals behind it wait too); the rest is asked of the consumer's ack floor,
 *   one consumer-info request for every seal waiting at once (AckFloorProbe).
 * - Scoring transactions hold their runs' lock shared and a seal holds it exclusively, so evidence of a run
 *   never changes once its aggregate is computed (RunEvidence).
 *
 * Each message's fate - acknowledged, handed back, dead-lettered - is the WorkSettler's to carry out.
 */
@Injectable()
export class ScoringService {
  /** What this process handled above the ack floor: a seal asks the server only about the rest. */
  private readonly handled: HandledLedger;

  constructor(
    @Inject(WORKER_SETTINGS) private readonly settings: WorkerSettings,
    /** Only the ack floor, which a seal waits on. */
    @Inject(MESSAGE_BUS) private readonly bus: Pick<MessageBus, 'allAcknowledgedBefore'>,
    private readonly settler: WorkSettler,
    private readonly scorer: OutputScorer,
    private readonly sealer: RunSealer,
  ) {
    this.handled = new HandledLedger(new AckFloorProbe((seq) => this.bus.allAcknowledgedBefore(CONSUMERS.scoringWorker, seq)));
  }

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
      if (!decoded.ok) {
        this.settler.deadLetter(settlement, msg, DEAD_LETTER_CODES.invalidWork, decoded.reason);
      } else if (decoded.message.type !== this.settler.subject(msg)) {
        this.settler.deadLetter(settlement, msg, DEAD_LETTER_CODES.invalidWork, 'type: does not match the subject');
      } else if (decoded.message.type === WORK_SUBJECTS.score) {
        scores.push({ msg, data: decoded.message.data, metadata: decoded.message.metadata });
      } else {
        seals.push({ msg, data: decoded.message.data, metadata: decoded.message.metadata });
      }
    }

    // A seal never waits for another seal: those are handled as far as any seal is concerned.
    for (const seal of seals) this.handled.handled(seal.msg.seq);
    await this.scorer.score(scores, settlement, outcome);
    // Committed before they are acknowledged: the seals below (this batch's and later ones) count them as handled.
    this.settler.settle(settlement, outcome);
    for (const msg of settlement.ack) this.handled.handled(msg.seq);
    if (seals.length === 0) return outcome;

    const limiter = new Limiter(MAX_CONCURRENT_SEALS);
    const results = await Promise.allSettled(seals.map((seal) => this.seal(seal, outcome, limiter)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    return outcome;
  }

  /**
   * `evals.work.seal`: when the run is sealed and every earlier message handled, the RunSealer seals it. The
   * wait for earlier messages is outside the limiter, so a seal waiting on an earlier one never holds the
   * slot that one needs.
   */
  private async seal(seal: Received<SealWorkV1>, outcome: BatchOutcome, limiter: Limiter): Promise<void> {
    await limiter.acquire();
    try {
      await this.sealInSlot(seal, outcome, limiter);
    } finally {
      limiter.release();
    }
  }

  private async sealInSlot(seal: Received<SealWorkV1>, outcome: BatchOutcome, limiter: Limiter): Promise<void> {
    const { msg, data } = seal;
    const settlement = new Settlement();
    // R7: a seal for a run its model does not see sealed is handed back for a later try (RUN_NOT_SEALED once
    // `deadLetterAfter` deliveries did not change that). Asked before the wait below, whose redeliveries must
    // not count as tries: a run's phase only moves forward, so once it is sealed this never fires again.
    if (await this.sealer.awaitsSeal(data.run_id)) {
      this.settler.retryLater(settlement, outcome, msg, DEAD_LETTER_CODES.runNotSealed, `run ${clamp(data.run_id)}: not sealed`);
      return this.settler.settleAlone(settlement, outcome);
    }
    limiter.release();
    let isReady: boolean;
    try {
      isReady = await this.handled.allHandledBefore(msg.seq);
    } finally {
      await limiter.acquire();
    }
    if (!isReady) {
      // Earlier work is still in flight (maybe in another process): come back shortly. Not a failure, so it
      // never counts toward dead-lettering.
      msg.nak(this.settings.sealWaitMs);
      outcome.sealsWaiting++;
      return;
    }
    const resolved = await this.settler.resolve(data.run_id, [msg], settlement, outcome);
    if (!resolved) return this.settler.settleAlone(settlement, outcome);
    let appended: boolean;
    try {
      appended = await this.sealer.seal(data.run_id, resolved.suite, seal.metadata);
    } catch (error) {
      // The model refused the result (rolled back): not yet, like a run not yet known - never a letter at once.
      if (!(error instanceof RunRuleError)) throw error;
      this.settler.retryLater(settlement, outcome, msg, error.code, `run ${clamp(data.run_id)}: ${error.code}`);
      return this.settler.settleAlone(settlement, outcome);
    }
    if (appended) {
      outcome.events++;
      outcome.sealedRunIds.push(data.run_id);
    }
    msg.ack();
  }
}
