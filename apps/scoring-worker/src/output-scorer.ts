import { Inject, Injectable } from '@nestjs/common';
import { baseCaseId, detailHash, detailKeyId, judgeSkippedEvidence, scoreCase, type ScoreWorkV1 } from '@evals/domain';
import { EventStamper } from './event-stamper';
import { EvidenceWriter, type Owned, type Repeat } from './evidence-writer';
import { judgeJobs, type JudgeJob, type WorkerJudge } from './judge-scoring';
import type { WorkerSettings } from './settings';
import { WORKER_JUDGE, WORKER_SETTINGS } from './tokens';
import { caseList, clamp, DEAD_LETTER_CODES, WorkSettler, type BatchOutcome, type Received, type Settlement } from './work-settler';

/**
 * The `evals.work.score` path (docs/pipeline.md step 2): every output of a micro-batch is scored in memory -
 * by its scorer, by the judge (S3, concurrently, before the transaction), or failed with the run's
 * `judge_skip` label (GT4) - then written in one transaction by the EvidenceWriter. An output for a case the
 * suite version lacks dead-letters its message UNKNOWN_CASE (the rest of it is scored); a second output for a
 * case in the batch is compared with the row its case ends up holding.
 *
 * Candidate outputs are read only by the scorers, the judge and `detailHash` (score and keyed hash): never
 * logged, stored or put into an error or a dead letter (D1).
 */
@Injectable()
export class OutputScorer {
  constructor(
    @Inject(WORKER_SETTINGS) private readonly settings: WorkerSettings,
    /** The judge of `llm_judge` cases; null: they fail `judge_not_configured` (GT2: never a silent pass). */
    @Inject(WORKER_JUDGE) private readonly judge: WorkerJudge | null,
    private readonly settler: WorkSettler,
    private readonly writer: EvidenceWriter,
    private readonly stamper: EventStamper,
  ) {}

  /** Scores the batch's score messages and writes them with the settlement's letters (the decoder's among them). */
  async score(scores: readonly Received<ScoreWorkV1>[], settlement: Settlement, outcome: BatchOutcome): Promise<void> {
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
    const scoredAt = this.stamper.now();
    await this.settler.prefetch([...byRun.keys()]);
    for (const [runId, received] of byRun) {
      const resolved = await this.settler.resolve(runId, received.map((r) => r.msg), settlement, outcome);
      if (!resolved) continue;
      const { run, suite } = resolved;
      const seen = new Set<string>();
      const scoring = { runId, hmacSecret: this.settings.hmacSecret, scoredAt };
      // GT4: a run opened with `judge_skip` (the gate said no spend) calls no judge; its judge cases fail with
      // that label. A throttled run (`judge_throttle`) judges only the cases the budget had room for.
      const skipFor = run.judgeSkipFor ?? (() => run.judgeSkip);
      for (const r of received) {
        settlement.ack.push(r.msg);
        const unknown: string[] = [];
        // The ingestion's hashes stand in for ours only when they were made with our key (else: hashed here).
        const keyed = r.data.detail_key !== undefined && r.data.detail_key === detailKeyId(this.settings.hmacSecret);
        for (const item of r.data.items) {
          const hash = keyed ? item.detail_hash : undefined;
          // A monitor run (D3) scores one suite case per sampled session: evidence ids are `<case>@<session>`.
          const base = run.monitor ? suite.cases.get(baseCaseId(item.case_id)) : undefined;
          const compiled = suite.cases.get(item.case_id) ?? (base && { ...base, case_id: item.case_id });
          if (!compiled) {
            unknown.push(item.case_id);
          } else if (seen.has(item.case_id)) {
            // Compared, inside the transaction, with the row the case ends up holding.
            repeats.push({ owner: r, runId, caseId: item.case_id, hash: hash ?? detailHash(this.settings.hmacSecret, item.output) });
          } else {
            seen.add(item.case_id);
            const skip = compiled.scorer.kind === 'judge' ? skipFor(compiled.case_id) : null;
            if (compiled.scorer.kind === 'judge' && skip) {
              const evidence = judgeSkippedEvidence(compiled, item.output, skip, scoring, hash);
              outcome.judge.labels[evidence.label] = (outcome.judge.labels[evidence.label] ?? 0) + 1;
              rows.push({ evidence, owner: r });
            } else if (compiled.scorer.kind === 'judge' && this.judge) {
              // Graded below, concurrently, before the transaction (S3).
              jobs.push({ job: { compiled, output: item.output, msg: r.msg, useCache: run.opened.judge_cache === true, project: run.project, ctx: scoring }, owner: r });
            } else {
              rows.push({ evidence: scoreCase(compiled, item.output, scoring, hash), owner: r });
            }
          }
        }
        // Ingestion refuses these already (R1); the rest of the message is scored. One letter per message.
        if (unknown.length > 0) {
          const reason = `data.items[].case_id: ${unknown.length} not a case of suite ${clamp(suite.suite_key)} v${suite.version}: ${caseList(unknown)}`;
          this.settler.deadLetter(settlement, r.msg, DEAD_LETTER_CODES.unknownCase, reason, r.metadata.message_id, false);
          lettered.add(r);
        }
      }
    }
    rows.push(...(await this.gradeJudgeCases(jobs, repeats, outcome)));
    if (rows.length === 0 && repeats.length === 0 && settlement.letters.length === 0) return;

    const written = await this.writer.commit(rows, repeats, settlement, lettered);
    settlement.letters.push(...written.letters);
    outcome.inserted += written.inserted.length;
    outcome.duplicates += written.redelivered;
    outcome.events += written.events;
    for (const e of written.inserted) outcome.scoredByScorer[e.scorer] = (outcome.scoredByScorer[e.scorer] ?? 0) + 1;
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
      const have = await this.writer.judgedAlready(
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
}
