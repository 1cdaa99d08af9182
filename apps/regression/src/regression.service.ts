import { Inject, Injectable } from '@nestjs/common';
import { encodeMessage, SUBJECTS } from '@evals/contracts';
import { chooseBaseline, compareRuns, RUN_EVENTS, runStreamId, whatChanged, type BaselineDecision, type CompletedRunRef, type RunOpenedV1, type RunScoredV1 } from '@evals/domain';
import { EventStore, JudgeEvidenceRepository, Outbox, RegressionRepository, type RunVerdictRow, type Sql } from '@evals/persistence';
import { ID_GENERATOR, type IdGenerator } from '@evals/platform';

export interface ScoredEvent {
  readonly data: RunScoredV1;
  readonly metadata: { readonly message_id: string; readonly correlation_id: string; readonly occurred_at: string };
}

export type DecideOutcome = { kind: 'recorded'; row: RunVerdictRow; finding: boolean } | { kind: 'duplicate' } | { kind: 'run_unknown' };

/**
 * On each completed run (`run.scored`): pick the baseline (G4, G5), compare (G1), decide (G2), and for a
 * regression write the central Finding with `finding.reported` in the outbox - best-effort on the bus,
 * certain in the database (G6). One transaction; a redelivered event finds its verdict and does nothing.
 */
@Injectable()
export class RegressionService {
  private readonly events = new EventStore();
  private readonly repo = new RegressionRepository();
  private readonly outbox = new Outbox();
  private readonly judgeEvidence = new JudgeEvidenceRepository();

  constructor(@Inject(ID_GENERATOR) private readonly ids: IdGenerator) {}

  async decide(sql: Sql, scored: ScoredEvent): Promise<DecideOutcome> {
    const runId = scored.data.run_id;
    if (await this.repo.find(sql, runId)) return { kind: 'duplicate' };
    const stream = await this.events.readStream(sql, runStreamId(runId));
    const openedEvent = stream.find((e) => e.type === RUN_EVENTS.opened);
    if (!openedEvent) return { kind: 'run_unknown' };
    const opened = openedEvent.data as RunOpenedV1;
    const completedAt = scored.metadata.occurred_at;
    const n = scored.data.n;
    const self: CompletedRunRef = {
      run_id: runId,
      suite_key: opened.suite_key,
      subject_kind: opened.subject_kind,
      subject_id: opened.subject_id,
      variant: opened.variant,
      completed_at: completedAt,
      verdict: null,
    };
    const explicit = opened.baseline_run_id ? await this.repo.find(sql, opened.baseline_run_id) : null;
    const pin = explicit ? null : await this.repo.pinFor(sql, opened.suite_key, opened.subject_kind, opened.subject_id, opened.variant);
    const pinned = pin ? await this.repo.find(sql, pin.run_id) : null;
    const history = explicit || pinned ? [] : await this.repo.history(sql, opened.suite_key, opened.subject_kind, opened.subject_id);

    let decision: BaselineDecision;
    if (opened.baseline_run_id && !explicit) {
      decision = { kind: 'refused', code: 'BASELINE_OTHER_SUITE', message: `baseline ${opened.baseline_run_id} is not a completed run` };
    } else {
      decision = chooseBaseline({ run: self, explicit: explicit && ref(explicit), pinned: pinned && ref(pinned), history: history.map(ref) });
    }

    const score = n === 0 ? 0 : scored.data.score_sum / n;
    let verdict = 'no_baseline';
    let comparison: unknown = null;
    if (decision.kind === 'refused') {
      comparison = { error: { code: decision.code === 'BASELINE_OTHER_SUITE' && !explicit ? 'BASELINE_NOT_FOUND' : decision.code, message: decision.message } };
    } else if (decision.kind === 'baseline') {
      const base = (decision.run.run_id === explicit?.run_id ? explicit : decision.run.run_id === pinned?.run_id ? pinned : history.find((h) => h.run_id === decision.run.run_id))!;
      const c = compareRuns({ run_id: runId, n, passed: scored.data.passed, score }, { run_id: base.run_id, n: base.n, passed: base.passed, score: base.score }, opened.regression_threshold);
      verdict = c.verdict;
      // G4: the judge model pin and prompt version that graded each run's llm_judge cases (from evidence).
      const baseJudge = await this.judgeEvidence.judgePin(sql, base.run_id);
      const runJudge = await this.judgeEvidence.judgePin(sql, runId);
      comparison = {
        ...c,
        chosen_by: decision.chosen_by,
        changes: whatChanged(
          { suite_version: base.suite_version, scorer_versions: base.scorer_versions, ...baseJudge },
          { suite_version: opened.suite_version, scorer_versions: opened.scorer_versions, ...runJudge },
        ),
      };
    }
    const row: RunVerdictRow = {
      run_id: runId,
      suite_key: opened.suite_key,
      suite_version: opened.suite_version,
      subject_kind: opened.subject_kind,
      subject_id: opened.subject_id,
      variant: opened.variant,
      completed_at: completedAt,
      n,
      passed: scored.data.passed,
      score,
      pass_threshold: opened.pass_threshold,
      scorer_versions: opened.scorer_versions,
      verdict,
      baseline_run_id: decision.kind === 'baseline' ? decision.run.run_id : opened.baseline_run_id,
      baseline_choice: decision.kind === 'baseline' ? decision.chosen_by : null,
      comparison,
    };
    if (!(await this.repo.record(sql, row))) return { kind: 'duplicate' };
    if (verdict !== 'regressed' || decision.kind !== 'baseline') return { kind: 'recorded', row, finding: false };

    const c = comparison as ReturnType<typeof compareRuns>;
    const findingId = this.ids.uuid();
    const data = {
      kind: 'eval_regression' as const,
      finding_id: findingId,
      run_id: runId,
      baseline_run_id: c.baseline_run_id,
      suite: opened.suite_key,
      suite_version: opened.suite_version,
      subject_kind: opened.subject_kind,
      subject_id: opened.subject_id,
      variant: opened.variant,
      score_drop: c.score_drop,
      pass_rate_diff: { diff: c.pass_rate_diff.diff ?? 0, lower: c.pass_rate_diff.lower, upper: c.pass_rate_diff.upper, level: c.pass_rate_diff.level, method: c.pass_rate_diff.method },
      run: { passed: c.run.passed, n: c.run.n },
      baseline: { passed: c.baseline.passed, n: c.baseline.n },
      occurred_at: completedAt,
    };
    const messageId = this.ids.uuid();
    const wire = encodeMessage(SUBJECTS.FINDING_REPORTED, 1, data, {
      message_id: messageId,
      correlation_id: scored.metadata.correlation_id,
      causation_id: scored.metadata.message_id,
      occurred_at: completedAt,
    });
    await this.repo.addFinding(sql, { finding_id: findingId, kind: 'eval_regression', run_id: runId, payload: data, occurred_at: completedAt });
    await this.outbox.add(sql, [{ subject: SUBJECTS.FINDING_REPORTED, message_id: messageId, payload: wire }]);
    return { kind: 'recorded', row, finding: true };
  }
}

function ref(r: RunVerdictRow): CompletedRunRef {
  return { run_id: r.run_id, suite_key: r.suite_key, subject_kind: r.subject_kind, subject_id: r.subject_id, variant: r.variant, completed_at: r.completed_at, verdict: r.verdict };
}
