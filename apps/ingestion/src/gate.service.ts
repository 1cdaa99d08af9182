import { Inject, Injectable } from '@nestjs/common';
import { compileSuite, decideGate, sampleCaseIds } from '@evals/domain';
import type { RunView } from '@evals/persistence';
import { CLOCK, ID_GENERATOR, type Clock, type IdGenerator } from '@evals/platform';
import { GateJudgePolicy } from './gate-judge-policy';
import { GateRuns } from './gate-runs';
import { GateVerdicts } from './gate-verdicts';
import { IntakeError } from './intake-error';
import { isObject, parseRunRequest } from './run-request';

/** Labels of judge cases that were not scored by a judge; they count as failed (GT2, GT4). */
const NOT_SCORED = new Set(['judge_credential_missing', 'judge_not_configured', 'budget_blocked', 'judge_uncalibrated']);

/**
 * The regression gate (GT1-GT6, docs/gate.md): runs (or reads) the run, checks the judge's calibration and
 * the budget before any judge spend, compares with the baseline, and records an append-only verdict with
 * every reason, warning and rate. The decision itself is the pure `decideGate` of libs/domain; the run is
 * `GateRuns`', the judge's preconditions `GateJudgePolicy`'s, the record and its overrides `GateVerdicts`'.
 */
@Injectable()
export class GateService {
  constructor(
    private readonly runs: GateRuns,
    private readonly judges: GateJudgePolicy,
    private readonly verdicts: GateVerdicts,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
  ) {}

  async gate(body: unknown): Promise<Record<string, unknown>> {
    const gateId = this.ids.uuid();
    if (!isObject(body)) throw new IntakeError('INVALID_REQUEST', 'the body must be a JSON object', 'body');
    const sample = parseSample(body['sample']);
    const existingRun = body['outputs'] === undefined && typeof body['run_id'] === 'string' ? (body['run_id'] as string) : null;
    const request = parseRunRequest({ ...body, run_id: body['run_id'] ?? `gate-${gateId}`, source: 'ci' }, gateId, this.clock.now().toISOString(), ['sample']);

    const suite = await this.runs.suite(request.suite_key, request.suite_version);
    const compiled = compileSuite(suite);
    const caseIds = sampleCaseIds(suite.cases.map((c) => c.case_id), sample);
    if (sample && sample.size > suite.cases.length) throw new IntakeError('INVALID_REQUEST', `sample.size ${sample.size} exceeds the suite's ${suite.cases.length} cases`, 'sample.size');
    // Before any judge spend (GT4): only the gated cases (the sample's, GT3) say whether the judge is needed.
    const judge = await this.judges.assess(
      request.suite_key,
      caseIds.some((id) => compiled.cases.get(id)?.scorer.kind === 'judge'),
    );

    const view: RunView = existingRun
      ? await this.runs.existing(existingRun, request.suite_key)
      : await this.runs.run(
          {
            ...request,
            outputs: (request.outputs ?? []).map((o) => ({ case_id: o.case_id, output: o.output })),
            ...(sample ? { sample } : {}),
            judge_cache: true,
            ...(judge.skip ? { judge_skip: judge.skip } : {}),
          },
          { message_id: gateId, correlation_id: gateId },
        );

    const summary = view.run.summary;
    const cases = (view.cases ?? []).map((c) => ({ case_id: c.case_id, passed: c.passed, score: c.score, label: c.label }));
    const notScored = cases.filter((c) => NOT_SCORED.has(c.label)).length;
    const decision = decideGate({
      pass_rate: summary.pass_rate,
      passed: summary.passed,
      n: summary.n,
      pass_threshold: view.run.pass_threshold,
      regression_verdict: view.regression?.verdict ?? null,
      judge: { used: judge.used, status: judge.status, credential_missing: judge.credential_missing, cases_not_scored: notScored },
      budget: judge.budget,
    });
    const judgeUsage = judge.used ? await this.runs.judgeUsage(view.run.run_id) : null;
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
        used: judge.used,
        status: judge.status,
        model: judge.model,
        prompt_version: judge.prompt_version,
        cases_not_scored: notScored,
        skipped: judge.skip,
        usage: judgeUsage,
      },
      budget: { decision: judge.budget },
      sample: sample ?? null,
      cases,
      override: null,
      recorded_at: recordedAt,
    };
    await this.verdicts.record(
      { gate_id: gateId, run_id: view.run.run_id, recorded_verdict: decision.verdict, report, recorded_at: recordedAt },
      this.judges.spend(judge, judgeUsage),
    );
    return report;
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
