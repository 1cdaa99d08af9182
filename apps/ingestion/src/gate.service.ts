import { Inject, Injectable } from '@nestjs/common';
import {
  compileSuite,
  decideGate,
  effectiveVerdict,
  overrideReasonProblem,
  sampleCaseIds,
  type BudgetDecision,
  type JudgeCalibrationStatus,
} from '@evals/domain';
import { BudgetRepository, EventStore, GateRepository, JudgeStatusRepository, loadRun, SuiteRepository, type RunView, type Sql } from '@evals/persistence';
import { CLOCK, DATA_SOURCE, ID_GENERATOR, type Clock, type IdGenerator } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { INGESTION_CONFIG, type IngestionConfig } from './config';
import { IntakeError } from './intake-error';
import { isObject, parseRunRequest } from './run-request';
import { RunIntakeService } from './run-intake.service';
import { RunWaiter } from './run-waiter';

/** Labels of judge cases that were not scored by a judge; they count as failed (GT2, GT4). */
const NOT_SCORED = new Set(['judge_credential_missing', 'judge_not_configured', 'budget_blocked', 'judge_uncalibrated']);

export interface Actor {
  readonly key_id: string;
  readonly name: string;
}

/**
 * The regression gate (GT1-GT6, docs/gate.md): runs (or reads) the run, checks the judge's calibration and
 * the budget before any judge spend, compares with the baseline, and records an append-only verdict with
 * every reason, warning and rate. The decision itself is the pure `decideGate` of libs/domain.
 */
@Injectable()
export class GateService {
  private readonly suites = new SuiteRepository();
  private readonly gates = new GateRepository();
  private readonly budgets = new BudgetRepository();
  private readonly events = new EventStore();
  private readonly judgeStatuses = new JudgeStatusRepository();

  constructor(
    private readonly intake: RunIntakeService,
    private readonly waiter: RunWaiter,
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(INGESTION_CONFIG) private readonly config: IngestionConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
  ) {}

  async gate(body: unknown): Promise<Record<string, unknown>> {
    const gateId = this.ids.uuid();
    if (!isObject(body)) throw new IntakeError('INVALID_REQUEST', 'the body must be a JSON object', 'body');
    const sample = parseSample(body['sample']);
    const existingRun = body['outputs'] === undefined && typeof body['run_id'] === 'string' ? (body['run_id'] as string) : null;
    const request = parseRunRequest({ ...body, run_id: body['run_id'] ?? `gate-${gateId}`, source: 'ci' }, gateId, this.clock.now().toISOString(), ['sample']);

    const suite = await this.suites.find(this.db, request.suite_key, request.suite_version);
    if (!suite) throw new IntakeError('SUITE_NOT_FOUND', `no suite ${request.suite_key}${request.suite_version ? ` version ${request.suite_version}` : ''}`, 'suite_key');
    const compiled = compileSuite(suite);
    const caseIds = sampleCaseIds(suite.cases.map((c) => c.case_id), sample);
    if (sample && sample.size > suite.cases.length) throw new IntakeError('INVALID_REQUEST', `sample.size ${sample.size} exceeds the suite's ${suite.cases.length} cases`, 'sample.size');
    const judgeUsed = caseIds.some((id) => compiled.cases.get(id)?.scorer.kind === 'judge');

    const judge = this.config.judge;
    const status: JudgeCalibrationStatus | null = judgeUsed ? (judge ? await this.judgeStatus(judge.model, judge.prompt_version) : 'uncalibrated') : null;
    const credentialMissing = judgeUsed && (!judge || judge.credential_missing);
    const budget: BudgetDecision = judgeUsed ? await this.budgetDecision(request.suite_key, judge?.model ?? null) : 'not_needed';
    // No judge spend unless every precondition holds (GT4): a gate that fails anyway spends nothing.
    const judgeSkip = !judgeUsed
      ? undefined
      : budget !== 'allowed'
        ? 'budget_blocked'
        : credentialMissing
          ? 'judge_credential_missing'
          : status !== 'certified'
            ? 'judge_uncalibrated'
            : undefined;

    let view: RunView;
    if (existingRun) {
      const found = await this.waiter.find(existingRun, { includeCases: true });
      if (!found) throw new IntakeError('UNKNOWN_RUN', `no run ${existingRun}`, 'run_id');
      if (found.run.status !== 'completed') throw new IntakeError('RUN_PENDING', `run ${existingRun} is not completed yet`, 'run_id');
      if (found.run.suite_key !== request.suite_key) throw new IntakeError('INVALID_REQUEST', `run ${existingRun} is a run of suite ${found.run.suite_key}`, 'run_id');
      view = await this.waiter.completed(existingRun, { includeCases: true });
    } else {
      await this.intake.open(
        {
          ...request,
          outputs: (request.outputs ?? []).map((o) => ({ case_id: o.case_id, output: o.output })),
          ...(sample ? { sample } : {}),
          judge_cache: true,
          ...(judgeSkip ? { judge_skip: judgeSkip } : {}),
        },
        { message_id: gateId, correlation_id: gateId },
      );
      view = await this.waiter.completed(request.run_id, { includeCases: true });
    }

    const summary = view.run.summary;
    const cases = (view.cases ?? []).map((c) => ({ case_id: c.case_id, passed: c.passed, score: c.score, label: c.label }));
    const notScored = cases.filter((c) => NOT_SCORED.has(c.label)).length;
    const decision = decideGate({
      pass_rate: summary.pass_rate,
      passed: summary.passed,
      n: summary.n,
      pass_threshold: view.run.pass_threshold,
      regression_verdict: view.regression?.verdict ?? null,
      judge: { used: judgeUsed, status, credential_missing: credentialMissing, cases_not_scored: notScored },
      budget,
    });
    const judgeUsage = judgeUsed ? await this.judgeUsage(view.run.run_id) : null;
    const recordedAt = this.clock.now().toISOString();
    const report = {
      gate_id: gateId,
      recorded_verdict: decision.verdict,
      effective_verdict: decision.verdict,
      reasons: decision.reasons,
      warnings: decision.warnings,
      run: {
        run_id: view.run.run_id,
        suite_key: view.run.suite_key,
        suite_version: view.run.suite_version,
        subject_kind: view.run.subject_kind,
        subject_id: view.run.subject_id,
        variant: view.run.variant,
        n: summary.n,
        passed: summary.passed,
        pass_rate: summary.pass_rate,
        pass_rate_ci: summary.pass_rate_ci,
        score: summary.score,
        pass_threshold: view.run.pass_threshold,
        // R7: `incomplete` when cases were left unscored (a skipped judge), so the run is no baseline (G4).
        completeness: view.regression?.completeness ?? null,
      },
      comparison: view.regression
        ? { verdict: view.regression.verdict, baseline_run_id: view.regression.baseline_run_id, chosen_by: view.regression.chosen_by, ...(view.regression.comparison as object | null) }
        : null,
      judge: {
        used: judgeUsed,
        status,
        model: judge?.model ?? null,
        prompt_version: judge?.prompt_version ?? null,
        cases_not_scored: notScored,
        skipped: judgeSkip ?? null,
        usage: judgeUsage,
      },
      budget: { decision: budget },
      sample: sample ?? null,
      cases,
      override: null,
      recorded_at: recordedAt,
    };
    await this.db.transaction(async (tx) => {
      await this.gates.record(tx, { gate_id: gateId, run_id: view.run.run_id, recorded_verdict: decision.verdict, report, recorded_at: recordedAt });
      // Spend is recorded after the judge calls (GT4), in our own append-only ledger.
      const cost = Number((judgeUsage as { cost_usd?: number } | null)?.cost_usd ?? 0);
      if (judgeUsed && !judgeSkip && cost > 0) await this.budgets.recordSpend(tx, 'judge', gateId, cost);
    });
    return report;
  }

  async status(gateId: string): Promise<Record<string, unknown>> {
    const found = await this.gates.find(this.db, gateId);
    if (!found) throw new IntakeError('GATE_NOT_FOUND', `no gate ${gateId}`, 'id');
    const effective = effectiveVerdict(found.recorded_verdict, found.overrides);
    const last = found.overrides[found.overrides.length - 1] ?? null;
    return { ...found.report, recorded_verdict: found.recorded_verdict, effective_verdict: effective, override: last, overrides: found.overrides };
  }

  /** GT5: admin only (the route says so), a written reason, audited; the recorded verdict never changes. */
  async override(gateId: string, reason: unknown, actor: Actor): Promise<Record<string, unknown>> {
    const problem = overrideReasonProblem(reason);
    if (problem) throw new IntakeError('INVALID_REQUEST', problem, 'reason');
    const found = await this.gates.find(this.db, gateId);
    if (!found) throw new IntakeError('GATE_NOT_FOUND', `no gate ${gateId}`, 'id');
    const before = effectiveVerdict(found.recorded_verdict, found.overrides);
    if (before === 'pass') throw new IntakeError('NOTHING_TO_OVERRIDE', `gate ${gateId} already passes`, 'id');
    await this.gates.addOverride(this.db, gateId, { actor_key_id: actor.key_id, actor_name: actor.name, reason: (reason as string).trim(), before, after: 'pass', at: this.clock.now().toISOString() });
    return this.status(gateId);
  }

  private async judgeStatus(model: string, promptVersion: string): Promise<JudgeCalibrationStatus> {
    try {
      return (await this.judgeStatuses.status(this.db, model, promptVersion)).status;
    } catch {
      // No calibration store: nothing certifies the judge.
      return 'uncalibrated';
    }
  }

  /** GT4: blocking or throttling budget -> no spend; store unreadable -> no spend. */
  private async budgetDecision(suiteKey: string, model: string | null): Promise<BudgetDecision> {
    const scopes = ['judge', `suite:${suiteKey}`, ...(model ? [`judge:${model}`] : [])];
    try {
      const applicable = await this.budgets.applicable(this.db, scopes);
      if (applicable.some((b) => b.mode === 'block')) return 'blocked';
      if (applicable.some((b) => b.mode === 'throttle')) return 'throttled';
      return 'allowed';
    } catch {
      return 'store_unreadable';
    }
  }

  /** What the judge did for the run, from its `run.scored` as the run's model folds the stream (R7). */
  private async judgeUsage(runId: string): Promise<unknown> {
    const { state } = await loadRun(this.db as Sql, this.events, runId);
    return state.result?.judge ?? null;
  }
}

function parseSample(raw: unknown): { size: number; seed: string } | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isObject(raw)) throw new IntakeError('INVALID_REQUEST', 'sample must be an object {size, seed}', 'sample');
  const { size, seed } = raw;
  if (!Number.isInteger(size) || (size as number) < 1) throw new IntakeError('INVALID_REQUEST', 'sample.size must be a positive integer', 'sample.size');
  if (typeof seed !== 'string' || seed.length === 0 || seed.length > 200) throw new IntakeError('INVALID_REQUEST', 'sample.seed must be a non-empty string', 'sample.seed');
  return { size: size as number, seed };
}
