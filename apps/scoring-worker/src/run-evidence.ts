import { Injectable } from '@nestjs/common';
import { MAX_LISTED_UNSTABLE, type CaseEvidence, type RunJudgeStabilityV1, type RunJudgeUsageV1 } from '@evals/domain';
import { EvidenceRepository, JudgeEvidenceRepository, RunLocks, type EvidenceSummary, type JudgedEvidenceRow, type Sql } from '@evals/persistence';

/**
 * A run's evidence as the worker writes and reads it (R1-R3, S3): plain rows and judged rows (with their
 * judge columns) in one table, and the run lock that keeps them still while a seal aggregates them -
 * scoring transactions hold their runs' lock shared, a seal holds it exclusively, so evidence of a run never
 * changes once its aggregate is computed.
 */
@Injectable()
export class RunEvidence {
  constructor(
    private readonly evidence: EvidenceRepository,
    private readonly judged: JudgeEvidenceRepository,
    private readonly locks: RunLocks,
  ) {}

  /** Scoring transactions run side by side; a seal (exclusive) waits for them, and they for it. */
  lockShared(tx: Sql, runIds: readonly string[]): Promise<void> {
    return this.locks.shared(tx, runIds);
  }

  /** The seals of many runs in one transaction hold all their locks (one fixed order, as `lockShared`). */
  lockExclusiveAll(tx: Sql, runIds: readonly string[]): Promise<void> {
    return this.locks.exclusiveAll(tx, runIds);
  }

  /**
   * Inserts the rows (`ON CONFLICT DO NOTHING`): plain rows through EvidenceRepository, judged rows through
   * JudgeEvidenceRepository. Returns the rows actually written, in case order.
   */
  async insert(tx: Sql, rows: readonly CaseEvidence[]): Promise<CaseEvidence[]> {
    const plain = rows.filter((r) => !r.judge);
    const judged = rows.filter((r): r is JudgedEvidenceRow & CaseEvidence => r.judge !== undefined);
    // Every case is always plain or always judged (its scorer is fixed by the suite version), so plain rows
    // then judged rows, each in case order, is one consistent lock order across transactions.
    const written: CaseEvidence[] = [...(await this.evidence.insertBatch(tx, plain))];
    written.push(...(await this.judged.insertBatch(tx, judged)));
    return judged.length > 0 && plain.length > 0 ? written.sort((a, b) => compare(a.case_id, b.case_id)) : written;
  }

  /** Of each run: the cases that have evidence, and the aggregate of its evidence - one query for all the runs. */
  summaries(sql: Sql, runIds: readonly string[]): Promise<Map<string, EvidenceSummary>> {
    return this.evidence.summaries(sql, runIds);
  }

  /** The keyed hash of the output each case's evidence holds (null: the seal scored it `missing_output`). */
  detailHashes(sql: Sql, runId: string, caseIds: readonly string[]): Promise<Map<string, string | null>> {
    return this.evidence.detailHashes(sql, runId, caseIds);
  }

  /** Which of these judge cases already have evidence (so a redelivered output is not judged - and paid - again). */
  judgedAlready(sql: Sql, runId: string, caseIds: readonly string[]): Promise<Set<string>> {
    return this.judged.existing(sql, runId, caseIds);
  }

  /** The run's judge usage, summed from its evidence (whichever worker judged which case); null without judge cases. */
  judgeUsage(sql: Sql, runId: string): Promise<RunJudgeUsageV1 | null> {
    return this.judged.runUsage(sql, runId);
  }

  /** Issue 13: how often the run's repeated verdicts agreed, from its evidence; null without a case judged with repeats. */
  judgeStability(sql: Sql, runId: string): Promise<RunJudgeStabilityV1 | null> {
    return this.judged.runStability(sql, runId, MAX_LISTED_UNSTABLE);
  }
}

/** One fixed order (case id) for every transaction, so concurrent inserts of one run never deadlock. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
