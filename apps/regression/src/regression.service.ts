import { Inject, Injectable } from '@nestjs/common';
import { encodeMessage, projectSubject, SUBJECTS } from '@evals/contracts';
import {
  chooseBaseline,
  compareRuns,
  eligibilityOf,
  pairCases,
  RunModel,
  runStreamId,
  whatChanged,
  type BaselineDecision,
  type ComparedCases,
  type CompletedRunRef,
  type RunOutcomes,
  type RunScoredV1,
  type RunState,
  type RunVerdict,
} from '@evals/domain';
import { EventStore, loadRun, loadRuns, Outbox, RegressionRepository, type BaselineCandidate, type LoadedRun, type PinKey, type RunVerdictRow, type Sql, type SubjectKey } from '@evals/persistence';
import { ID_GENERATOR, type IdGenerator } from '@evals/platform';
import { DecisionBatch, VerdictRecordedMeanwhile } from './decision-batch';
import { RunOutcomesCache } from './run-outcomes';

/** The newest runs of a subject read first for its automatic baseline (the rest only when they could matter). */
const HISTORY_FIRST_PAGE = 20;
/** The whole history a choice reads when the first page cannot decide (`RegressionRepository.history`'s default). */
const HISTORY_ALL = 500;

export interface ScoredEvent {
  readonly data: RunScoredV1;
  readonly metadata: { readonly message_id: string; readonly correlation_id: string; readonly occurred_at: string };
}

/** The largest run whose cases `readAhead` folds with its batch's. */
const READ_AHEAD_MAX_CASES = 10_000;

export type DecideOutcome = { kind: 'recorded'; row: RunVerdictRow; finding: boolean } | { kind: 'duplicate' } | { kind: 'run_unknown' };

/**
 * On each completed run (`run.scored`): pick the baseline (G4, G5), compare over the cases both runs scored
 * (G1, G7), decide (G2), record the verdict on the run's stream (`run.compared`), and for a regression write
 * the central Finding with `finding.reported` in the outbox - best-effort on the bus, certain in the
 * database (G6). One transaction; a redelivered event finds its verdict and does nothing. A micro-batch's
 * runs are decided in one too, read ahead and written at its end in a fixed number of statements (issue 28:
 * `readAhead`, `decide` within the batch, `write`). What the run is - complete or not, eligible or not - is
 * the run model's answer, folded from the run's own stream.
 *
 * Issue 30 (ADR 0009): so is the run's project (`runProject`). Every baseline candidate, pin and explicit
 * baseline is looked up within it - the same suite key and subject in another project are another suite -
 * and the verdict row, the finding and `finding.reported` (metadata.project, `finding.reported.<project>`
 * outside `default`) carry it.
 */
@Injectable()
export class RegressionService {
  private readonly events = new EventStore();
  private readonly repo = new RegressionRepository();
  private readonly outbox = new Outbox();
  // Which cases each run scored and passed, and its judge pin: folded from the runs' cases.scored events.
  private readonly outcomes = new RunOutcomesCache();

  constructor(@Inject(ID_GENERATOR) private readonly ids: IdGenerator) {}

  /**
   * What `decide` reads for the runs of a micro-batch, read for all of them at once, one query each (issue 28:
   * the app sent 8 to 10 statements a run at 5 000 cases/s): every stream; the cases of the runs of up to
   * READ_AHEAD_MAX_CASES each (a batch of large runs folded at once would not fit the app's heap; those are
   * read one at a time, as before); the verdict rows of the runs and of their explicit baselines; the pins of
   * the runs without one, with their pinned runs' rows; and the first page of the history of each subject
   * whose runs have neither. Read in the decisions' transaction: a run's `run.scored` and its cases were
   * committed before it was delivered. The batch then keeps the decisions until `write`.
   */
  async readAhead(sql: Sql, scored: readonly RunScoredV1[]): Promise<DecisionBatch> {
    const runIds = [...new Set(scored.map((s) => s.run_id))];
    const small = [...new Set(scored.filter((s) => s.n <= READ_AHEAD_MAX_CASES).map((s) => s.run_id))];
    const batch = new DecisionBatch(await loadRuns(sql, this.events, runIds));
    const runs = [...batch.runs.entries()].flatMap(([id, { state }]) => (state.opened ? [{ id, project: RunModel.runProject(state), opened: state.opened }] : []));
    const within = (project: string, row: BaselineCandidate | null | undefined) => (row && row.project === project ? row : null);
    const ids = [...new Set([...runs.map((r) => r.id), ...runs.flatMap((r) => (r.opened.baseline_run_id ? [r.opened.baseline_run_id] : []))])];
    if (ids.length > 0) batch.readVerdicts(ids, await this.repo.candidates(sql, ids));
    // A run with an explicit baseline reads no pin, and one with a pinned run no history (`decide`).
    const open = runs.filter((r) => !batch.verdict(r.id) && !r.opened.baseline_run_id);
    const pinKeys = distinct(open.map(({ project, opened: o }): PinKey => ({ project, suite_key: o.suite_key, subject_kind: o.subject_kind, subject_id: o.subject_id, variant: o.variant })));
    if (pinKeys.length > 0) batch.readPins(pinKeys, await this.repo.pinsFor(sql, pinKeys));
    const pinnedOf = ({ project, opened: o }: (typeof runs)[number]) => {
      const pin = batch.pin({ project, suite_key: o.suite_key, subject_kind: o.subject_kind, subject_id: o.subject_id, variant: o.variant });
      return pin ? within(project, batch.verdict(pin.run_id)) : null;
    };
    const automatic = open.filter((r) => !pinnedOf(r));
    const subjects = distinct(automatic.map(({ project, opened: o }): SubjectKey => ({ project, suite_key: o.suite_key, subject_kind: o.subject_kind, subject_id: o.subject_id })));
    if (subjects.length > 0) batch.readHistories(subjects, await this.repo.histories(sql, subjects, HISTORY_FIRST_PAGE));
    // The cases of each run's likely baseline too, with the runs': its explicit or pinned run, or the newest
    // eligible run of its history as read. A run decided earlier in the batch is read as a run of the batch;
    // a baseline guessed wrong is read when its decision asks, as before.
    const baselines = runs.flatMap((r) => {
      const { project, opened: o } = r;
      if (o.baseline_run_id) return [within(project, batch.verdict(o.baseline_run_id))];
      const page = batch.page({ project, suite_key: o.suite_key, subject_kind: o.subject_kind, subject_id: o.subject_id }) ?? [];
      return [pinnedOf(r) ?? page.find((c) => (o.variant === null || c.variant === o.variant) && eligibilityOf(ref(c)).eligible) ?? null];
    });
    const bases = baselines.flatMap((b) => (b && b.n <= READ_AHEAD_MAX_CASES ? [b.run_id] : []));
    batch.readOutcomes(await this.outcomes.readMany(sql, [...new Set([...small, ...bases])]));
    return batch;
  }

  /**
   * Decides one run. Within `batch` (from `readAhead`, in stream order), nothing is written yet: `write`
   * writes the batch's decisions when it ends. Alone, it reads and writes its own run's.
   */
  async decide(sql: Sql, scored: ScoredEvent, batch?: DecisionBatch): Promise<DecideOutcome> {
    if (batch) return this.decideIn(sql, scored, batch);
    const alone = await this.readAhead(sql, [scored.data]);
    const outcome = await this.decideIn(sql, scored, alone);
    return (await this.write(sql, alone)).has(scored.data.run_id) ? { kind: 'duplicate' } : outcome;
  }

  /**
   * Writes what the batch's decisions recorded, one statement each for the verdicts, the `run.compared`
   * appends, the findings and their outbox rows. A verdict another process recorded after the batch read
   * the table is a duplicate: the only decision of its batch is then returned as one (nothing of it written,
   * as `decide` did alone); in a larger batch a later decision may have read it, so the batch throws
   * VerdictRecordedMeanwhile and rolls back (the consumer decides it again one event a transaction). So does
   * a stream another writer moved (StreamVersionConflict).
   */
  async write(sql: Sql, batch: DecisionBatch): Promise<ReadonlySet<string>> {
    const rows = batch.rows.splice(0);
    const appends = batch.appends.splice(0);
    const findings = batch.findings.splice(0);
    const outbox = batch.outbox.splice(0);
    if (rows.length === 0) return new Set();
    const inserted = await this.repo.recordMany(sql, rows);
    if (inserted.size < rows.length) {
      if (rows.length === 1) return new Set([rows[0].run_id]);
      throw new VerdictRecordedMeanwhile(rows.length - inserted.size);
    }
    await this.events.appendMany(sql, appends);
    await this.repo.addFindings(sql, findings);
    await this.outbox.add(sql, outbox);
    return new Set();
  }

  private async decideIn(sql: Sql, scored: ScoredEvent, batch: DecisionBatch): Promise<DecideOutcome> {
    const runId = scored.data.run_id;
    const loaded = batch.runs.get(runId) ?? (await loadRun(sql, this.events, runId));
    const opened = loaded.state.opened;
    if (!opened) return { kind: 'run_unknown' };
    const project = RunModel.runProject(loaded.state);
    // A row of any project: its run id would conflict on insert (run ids are unique across projects).
    const recorded = batch.verdict(runId);
    if (recorded === undefined ? await this.repo.find(sql, project, runId) : recorded) return { kind: 'duplicate' };
    // The delivered run.scored is in the stream already (it was committed before it was relayed); folding
    // it again is a no-op, and it covers a stream read that raced its commit.
    const state = RunModel.evolve(loaded.state, { type: 'run.scored', version: 1, data: scored.data }, scored.metadata.occurred_at);
    const completeness = RunModel.completeness(state) ?? 'incomplete';
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
      completeness,
    };
    // Another project's run as the explicit baseline is what a run never completed is: refused, nothing of it read.
    const explicit = opened.baseline_run_id ? await this.find(sql, batch, project, opened.baseline_run_id) : null;
    const pinKey = { project, suite_key: opened.suite_key, subject_kind: opened.subject_kind, subject_id: opened.subject_id, variant: opened.variant };
    const read = explicit ? null : batch.pin(pinKey);
    const pin = explicit ? null : read === undefined ? await this.repo.pinFor(sql, project, opened.suite_key, opened.subject_kind, opened.subject_id, opened.variant) : read;
    const pinned = pin ? await this.find(sql, batch, project, pin.run_id) : null;
    let history: BaselineCandidate[] = [];
    let decision: BaselineDecision;
    if (opened.baseline_run_id && !explicit) {
      decision = { kind: 'refused', code: 'BASELINE_OTHER_SUITE', message: `baseline ${opened.baseline_run_id} is not a completed run` };
    } else if (explicit || pinned) {
      decision = chooseBaseline({ run: self, explicit: explicit && ref(explicit), pinned: pinned && ref(pinned), history: [] });
    } else {
      ({ history, decision } = await this.automaticBaseline(sql, batch, project, self));
    }

    const score = n === 0 ? 0 : scored.data.score_sum / n;
    let verdict: RunVerdict = 'no_baseline';
    let comparison: unknown = null;
    if (decision.kind === 'refused') {
      comparison = { error: { code: decision.code === 'BASELINE_OTHER_SUITE' && !explicit ? 'BASELINE_NOT_FOUND' : decision.code, message: decision.message } };
    } else if (decision.kind === 'baseline') {
      const base = (decision.run.run_id === explicit?.run_id ? explicit : decision.run.run_id === pinned?.run_id ? pinned : history.find((h) => h.run_id === decision.run.run_id))!;
      // G7: only scored cases count. Two runs of one suite version scored the same cases: only the cases
      // both scored, on both sides. Two versions have different case sets: each run over its own scored
      // cases, as independent samples (G1).
      const runOutcomes = await this.outcomes.of(sql, runId, batch.outcomes.get(runId));
      const baseOutcomes = await this.outcomes.of(sql, base.run_id, batch.outcomes.get(base.run_id));
      const cc = pairCases(runOutcomes, baseOutcomes);
      const samePairs = base.suite_version === opened.suite_version;
      const runSide = samePairs
        ? { n: cc.compared, passed: cc.a + cc.c, score_sum: cc.run_score_sum }
        : { n: cc.run_scored, passed: cc.run_scored_passed, score_sum: cc.run_scored_score_sum };
      const baseSide = samePairs
        ? { n: cc.compared, passed: cc.a + cc.b, score_sum: cc.baseline_score_sum }
        : { n: cc.baseline_scored, passed: cc.baseline_scored_passed, score_sum: cc.baseline_scored_score_sum };
      const eligibility = eligibilityOf(ref(base));
      const baselineInfo = { chosen_by: decision.chosen_by, baseline_eligible: eligibility.eligible, ...(eligibility.eligible ? {} : { baseline_ineligible_reason: eligibility.reason }) };
      if (runSide.n === 0 || baseSide.n === 0) {
        const message = samePairs ? `no case was scored in both this run and baseline ${base.run_id}` : `this run or baseline ${base.run_id} scored no case`;
        comparison = { error: { code: 'NO_COMPARED_CASES', message }, baseline_run_id: base.run_id, compared_cases: comparedCasesReport(cc, samePairs), ...baselineInfo };
      } else {
        const c = compareRuns(
          { run_id: runId, n: runSide.n, passed: runSide.passed, score: runSide.score_sum / runSide.n },
          { run_id: base.run_id, n: baseSide.n, passed: baseSide.passed, score: baseSide.score_sum / baseSide.n },
          opened.regression_threshold,
          // G7: the same cases scored twice are pairs; the paired interval decides.
          samePairs ? { both: cc.a, baseline_only: cc.b, run_only: cc.c, neither: cc.d } : undefined,
        );
        verdict = c.verdict;
        // G4: the judge model pin and prompt version that graded each run's llm_judge cases.
        const baseJudge = baseOutcomes.judge;
        const runJudge = runOutcomes.judge;
        comparison = {
          ...c,
          ...baselineInfo,
          compared_cases: comparedCasesReport(cc, samePairs),
          changes: whatChanged(
            { suite_version: base.suite_version, scorer_versions: base.scorer_versions, ...baseJudge },
            { suite_version: opened.suite_version, scorer_versions: opened.scorer_versions, ...runJudge },
          ),
        };
      }
    }
    const row: RunVerdictRow = {
      project,
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
      completeness,
      baseline_run_id: decision.kind === 'baseline' ? decision.run.run_id : opened.baseline_run_id,
      baseline_choice: decision.kind === 'baseline' ? decision.chosen_by : null,
      comparison,
    };
    batch.record(row);
    const findingId = verdict === 'regressed' && decision.kind === 'baseline' ? this.ids.uuid() : null;
    batch.appends.push(this.onStream(loaded, state, row, findingId, scored));
    if (findingId === null) return { kind: 'recorded', row, finding: false };

    const c = comparison as ReturnType<typeof compareRuns>;
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
      // The interval that decided (G7): the paired one when both runs scored the same cases.
      pass_rate_diff:
        c.decided_by === 'paired' && c.paired_diff
          ? { diff: c.paired_diff.diff ?? 0, lower: c.paired_diff.lower, upper: c.paired_diff.upper, level: c.paired_diff.level, method: c.paired_diff.method }
          : { diff: c.pass_rate_diff.diff ?? 0, lower: c.pass_rate_diff.lower, upper: c.pass_rate_diff.upper, level: c.pass_rate_diff.level, method: c.pass_rate_diff.method },
      run: { passed: c.run.passed, n: c.run.n },
      baseline: { passed: c.baseline.passed, n: c.baseline.n },
      // G7: both intervals travel, with b, c and n of the paired one (optional v1 fields, an additive change).
      decided_by: c.decided_by,
      independent_diff: { diff: c.pass_rate_diff.diff ?? 0, lower: c.pass_rate_diff.lower, upper: c.pass_rate_diff.upper, level: c.pass_rate_diff.level, method: c.pass_rate_diff.method },
      ...(c.paired_diff ? { paired_diff: { ...c.paired_diff, diff: c.paired_diff.diff ?? 0 } } : {}),
      occurred_at: completedAt,
    };
    const messageId = this.ids.uuid();
    const wire = encodeMessage(SUBJECTS.FINDING_REPORTED, 1, data, {
      message_id: messageId,
      correlation_id: scored.metadata.correlation_id,
      causation_id: scored.metadata.message_id,
      occurred_at: completedAt,
      // Written only outside `default` (encodeMessage), so a default finding is byte for byte what it was.
      project,
    });
    batch.findings.push({ project, finding_id: findingId, kind: 'eval_regression', run_id: runId, payload: data, occurred_at: completedAt });
    // The outbox row's subject is the contract subject the relay publishes on (after the deployment prefix):
    // the project's own token, so a consumer of one project filters `finding.reported.<project>` (ADR 0009).
    batch.outbox.push({ subject: projectSubject(SUBJECTS.FINDING_REPORTED, project), message_id: messageId, payload: wire });
    return { kind: 'recorded', row, finding: true };
  }

  /**
   * G4: the newest eligible run before this one. It is in the first page of the history newest first unless
   * that page is full and the choice ties with its last row (or there is none): then the whole history (500)
   * decides, as it always did. A subject with a long history read and parsed all 500 rows for every run
   * (issue 28: most of the regression app's CPU at 50 runs a second). The first page is the batch's read
   * ahead, the whole history a query of its own (rare); both with the batch's decisions of the subject in
   * them, where the table will have them.
   */
  private async automaticBaseline(sql: Sql, batch: DecisionBatch, project: string, self: CompletedRunRef): Promise<{ history: BaselineCandidate[]; decision: BaselineDecision }> {
    const decide = (history: BaselineCandidate[]) => chooseBaseline({ run: self, explicit: null, pinned: null, history: history.map(ref) });
    const key = { project, suite_key: self.suite_key, subject_kind: self.subject_kind, subject_id: self.subject_id };
    const read = batch.page(key) ?? (await this.repo.history(sql, project, self.suite_key, self.subject_kind, self.subject_id, HISTORY_FIRST_PAGE));
    const page = batch.history(key, read, HISTORY_FIRST_PAGE);
    const first = decide(page);
    const last = page[page.length - 1];
    if (page.length < HISTORY_FIRST_PAGE || (first.kind === 'baseline' && first.run.completed_at > last.completed_at)) return { history: page, decision: first };
    const history = batch.history(key, await this.repo.history(sql, project, self.suite_key, self.subject_kind, self.subject_id, HISTORY_ALL), HISTORY_ALL);
    return { history, decision: decide(history) };
  }

  /** A verdict row within `project`, as `RegressionRepository.find` would answer after the batch's decisions so far. */
  private async find(sql: Sql, batch: DecisionBatch, project: string, runId: string): Promise<BaselineCandidate | null> {
    const known = batch.verdict(runId);
    const row = known === undefined ? await this.repo.find(sql, project, runId) : known;
    return row && row.project === project ? row : null;
  }

  /** R7: the decision on the run's own stream (`run.compared`), written in the same transaction as the row. */
  private onStream(loaded: LoadedRun, state: RunState, row: RunVerdictRow, findingId: string | null, scored: ScoredEvent) {
    const decision = { completeness: row.completeness, baseline_run_id: row.baseline_run_id, chosen_by: row.baseline_choice, comparison: row.comparison, finding_id: findingId };
    const events = RunModel.decide({ type: 'record_comparison', run_id: row.run_id, verdict: row.verdict as RunVerdict, decision }, state);
    const metadata = () => ({ message_id: this.ids.uuid(), correlation_id: scored.metadata.correlation_id, causation_id: scored.metadata.message_id, occurred_at: scored.metadata.occurred_at });
    return { streamId: runStreamId(row.run_id), expectedVersion: loaded.version, events: events.map((e) => ({ ...e, metadata: metadata() })) };
  }
}

/** The distinct keys of `keys`, in their first order. */
function distinct<K extends object>(keys: readonly K[]): K[] {
  const seen = new Map<string, K>();
  for (const k of keys) {
    const id = JSON.stringify(Object.values(k));
    if (!seen.has(id)) seen.set(id, k);
  }
  return [...seen.values()];
}

function ref(r: BaselineCandidate): CompletedRunRef {
  return {
    run_id: r.run_id,
    suite_key: r.suite_key,
    subject_kind: r.subject_kind,
    subject_id: r.subject_id,
    variant: r.variant,
    completed_at: r.completed_at,
    verdict: r.verdict,
    completeness: r.completeness,
  };
}

/**
 * G7: how many cases each side counted of how many it has, and what was left out and why. `paired` (the
 * cells a, b, c, d) only when both runs are of one suite version, so their cases pair up.
 */
function comparedCasesReport(cc: ComparedCases, paired: boolean) {
  return {
    run: { n: paired ? cc.compared : cc.run_scored, of: cc.run_cases },
    baseline: { n: paired ? cc.compared : cc.baseline_scored, of: cc.baseline_cases },
    left_out: {
      unscored_in_run: cc.run_cases - cc.run_scored,
      unscored_in_baseline: cc.baseline_cases - cc.baseline_scored,
      ...(paired ? { scored_in_one_run_only: cc.run_scored - cc.compared + (cc.baseline_scored - cc.compared) } : {}),
    },
    ...(paired ? { paired: { a: cc.a, b: cc.b, c: cc.c, d: cc.d } } : {}),
  };
}
