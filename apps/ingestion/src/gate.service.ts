import { Inject, Injectable } from '@nestjs/common';
import { compileSuite, correctedPassRatesByScope, decideGate, decideGateFamily, regressionPValue, sampleCaseIds, type GateDecision, type RegressionTestFacts } from '@evals/domain';
import type { RunView } from '@evals/persistence';
import { CLOCK, ID_GENERATOR, type Clock, type IdGenerator } from '@evals/platform';
import { GateJudgePolicy, type GateJudgeAssessment } from './gate-judge-policy';
import { GateRuns } from './gate-runs';
import { GateVerdicts } from './gate-verdicts';
import { IntakeError } from './intake-error';
import { isObject, parseRunRequest } from './run-request';

/** Labels of judge cases that were not scored by a judge; they count as failed (GT2, GT4). */
const NOT_SCORED = new Set(['judge_credential_missing', 'judge_not_configured', 'budget_blocked', 'budget_throttled', 'judge_uncalibrated']);

/**
 * The regression gate (GT1-GT6, docs/gate.md): runs (or reads) the run, checks the judge's calibration and
 * the budget before any judge spend, compares with the baseline, and records an append-only verdict with
 * every reason, warning and rate. The decision itself is the pure `decideGate` of libs/domain; the run is
 * `GateRuns`', the judge's preconditions `GateJudgePolicy`'s, the record and its overrides `GateVerdicts`'.
 * Everything a gate reads or writes is its project's (issue 30): the suite, the run and its baseline, the
 * judge's certification, the budgets and the recorded verdict.
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

  /** `POST /v1/gate`: one suite (docs/gate.md), or a family of suites with `suites` (GT7). */
  async gate(project: string, body: unknown): Promise<Record<string, unknown>> {
    if (isObject(body) && body['suites'] !== undefined) return this.family(project, body);
    const gateId = this.ids.uuid();
    const prepared = await this.prepare(project, body, gateId);
    try {
      return (await this.execute(prepared)).report;
    } catch (error) {
      throw await this.released(project, [gateId], error);
    }
  }

  /**
   * GT4: a gate refused before its run could spend (a request error) drops its budget hold. A run still being
   * scored (RUN_PENDING) or an unexpected failure keeps it - the run may be spending - until the hold expires.
   */
  private async released(project: string, gateIds: readonly string[], error: unknown): Promise<unknown> {
    if (error instanceof IntakeError && error.code !== 'RUN_PENDING') for (const id of gateIds) await this.judges.release(project, id);
    return error;
  }

  /**
   * GT7: several suites, one verdict. Every suite is checked before any runs (shape, suite, sample, case
   * ids), then gated as on its own - its own run and recorded gate - and the family decision (Holm over the
   * suites' regression tests, `decideGateFamily`) is recorded as a gate of its own, whose id answers
   * `GET /v1/gate/:id` and takes an override like any gate.
   */
  private async family(project: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    const members = parseFamily(body);
    const familyId = this.ids.uuid();
    const prepared: Prepared[] = [];
    const gated: Gated[] = [];
    try {
      for (const [i, member] of members.entries()) {
        const gateId = this.ids.uuid();
        const common = { subject_kind: body['subject_kind'], subject_id: body['subject_id'], ...(body['variant'] !== undefined ? { variant: body['variant'] } : {}) };
        prepared.push(await underField(`suites[${i}]`, () => this.prepare(project, { ...common, ...member }, gateId, true)));
      }
      for (const [i, p] of prepared.entries()) gated.push(await underField(`suites[${i}]`, () => this.execute(p)));
    } catch (error) {
      // The members not yet gated (and the one that failed) spent nothing their gate will record.
      throw await this.released(project, prepared.slice(gated.length).map((p) => p.gateId), error);
    }
    const decision = decideGateFamily(gated.map((g) => ({ suite_key: g.report.run.suite_key, decision: g.decision, regression_p: regressionPValue(g.comparison) })));
    const recordedAt = this.clock.now().toISOString();
    const report = {
      gate_id: familyId,
      kind: 'family',
      recorded_verdict: decision.verdict,
      effective_verdict: decision.verdict,
      family: decision.family,
      reasons: decision.reasons,
      warnings: decision.warnings,
      subject: { kind: gated[0]!.report.run.subject_kind, id: gated[0]!.report.run.subject_id, variant: gated[0]!.report.run.variant },
      suites: decision.suites.map((d, i) => {
        const own = gated[i]!.report;
        return {
          suite_key: d.suite_key,
          gate_id: own.gate_id,
          verdict: d.verdict,
          suite_verdict: own.recorded_verdict,
          reasons: d.reasons,
          warnings: d.warnings,
          regression_p: d.regression_p,
          comparison: own.comparison,
          run: own.run,
          judge: own.judge,
          budget: own.budget,
          sample: own.sample,
          cases: own.cases,
        };
      }),
      override: null,
      recorded_at: recordedAt,
    };
    const runIds = gated.map((g) => g.report.run.run_id);
    await this.verdicts.record(project, { gate_id: familyId, run_id: `family:${runIds.join(',')}`, recorded_verdict: decision.verdict, report, recorded_at: recordedAt });
    return report;
  }

  /** Everything a suite's gate checks before its run: the request, the suite, the sample, the judge's preconditions. */
  private async prepare(project: string, body: unknown, gateId: string, checkCases = false): Promise<Prepared> {
    if (!isObject(body)) throw new IntakeError('INVALID_REQUEST', 'the body must be a JSON object', 'body');
    const sample = parseSample(body['sample']);
    const existingRun = body['outputs'] === undefined && typeof body['run_id'] === 'string' ? (body['run_id'] as string) : null;
    const request = parseRunRequest({ ...body, run_id: body['run_id'] ?? `gate-${gateId}`, source: 'ci' }, gateId, this.clock.now().toISOString(), ['sample']);

    const suite = await this.runs.suite(project, request.suite_key, request.suite_version);
    const compiled = compileSuite(suite);
    const caseIds = sampleCaseIds(suite.cases.map((c) => c.case_id), sample);
    if (sample && sample.size > suite.cases.length) throw new IntakeError('INVALID_REQUEST', `sample.size ${sample.size} exceeds the suite's ${suite.cases.length} cases`, 'sample.size');
    if (checkCases) checkOutputCases(request.outputs ?? [], new Set(suite.cases.map((c) => c.case_id)));
    // Before any judge spend (GT4): only the gated cases (the sample's, GT3) say whether the judge is needed,
    // and their rubrics which certification scopes it needs (J4).
    const rubrics = judgeRubrics(compiled, caseIds);
    // GT4 in money (issue 13): the cases the run would send to the judge (gated, with an output; none when an
    // existing run is gated), whose estimated cost is weighed against the budgets.
    const outputs = new Map((existingRun ? [] : (request.outputs ?? [])).map((o) => [o.case_id, o.output] as const));
    const toJudge = [...rubrics.keys()].flatMap((id) => (outputs.has(id) ? [{ compiled: compiled.cases.get(id)!, output: outputs.get(id)! }] : []));
    const judge = await this.judges.assess(project, request.suite_key, rubrics.size > 0, [...new Set(rubrics.values())], toJudge, gateId);
    return { project, gateId, request, sample, existingRun, judge, rubrics };
  }

  /** Runs (or reads) the suite's run, decides (`decideGate`) and records the suite's gate. */
  private async execute({ project, gateId, request, sample, existingRun, judge, rubrics }: Prepared): Promise<Gated> {
    const view: RunView = existingRun
      ? await this.runs.existing(project, existingRun, request.suite_key)
      : await this.runs.run(
          {
            ...request,
            project,
            outputs: (request.outputs ?? []).map((o) => ({ case_id: o.case_id, output: o.output })),
            ...(sample ? { sample } : {}),
            judge_cache: true,
            ...(judge.skip ? { judge_skip: judge.skip } : {}),
            // GT4 throttle (issue 13): only the cases that fit are judged; the rest are `budget_throttled`.
            ...(!judge.skip && judge.budget === 'throttled' && judge.budget_plan?.judged_case_ids ? { judge_throttle: { case_ids: judge.budget_plan.judged_case_ids } } : {}),
          },
          { message_id: gateId, correlation_id: gateId },
        );

    const summary = view.run.summary;
    const cases = (view.cases ?? []).map((c) => ({ case_id: c.case_id, passed: c.passed, score: c.score, label: c.label }));
    const notScored = cases.filter((c) => NOT_SCORED.has(c.label)).length;
    const plan = judge.budget_plan ?? null;
    // Issue 13: how often the judge agreed with itself on the cases it judged with `repeats`.
    const stability = judge.used ? await this.runs.judgeStability(view.run.run_id) : null;
    const decision = decideGate({
      pass_rate: summary.pass_rate,
      passed: summary.passed,
      n: summary.n,
      pass_threshold: view.run.pass_threshold,
      regression_verdict: view.regression?.verdict ?? null,
      judge: {
        used: judge.used,
        status: judge.status,
        credential_missing: judge.credential_missing,
        cases_not_scored: notScored,
        not_configured: judge.not_configured === true,
        uncovered_scopes: judge.scopes?.uncovered ?? [],
      },
      budget: judge.budget,
      ...(plan ? { budget_plan: { estimate_usd: plan.estimate_usd, left_usd: plan.left_usd, scope: plan.scope, judged: plan.judged_case_ids?.length ?? null, over_limit_scopes: plan.over_limit_scopes } } : {}),
      stability: stability ? { ...stability, ...this.judges.stabilityPolicy() } : null,
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
        stability: stability ? { ...stability, min: this.judges.stabilityPolicy().min } : null,
        scopes: judge.scopes ?? null,
        // J4/J9 (GT6): what humans would pass of the judged cases, per certified scope, with interval and denominators.
        corrected_pass_rates: correctedRates(view.run.suite_key, cases, rubrics, judge),
      },
      budget: {
        decision: judge.budget,
        // Issue 13: the estimate weighed before any judge spend, what was left, and each applicable budget.
        ...(plan
          ? {
              estimate_usd: plan.estimate_usd,
              left_usd: plan.left_usd,
              scope: plan.scope,
              judged_case_ids: plan.judged_case_ids,
              over_limit_scopes: plan.over_limit_scopes,
              budgets: plan.budgets,
            }
          : {}),
      },
      sample: sample ?? null,
      cases,
      override: null,
      recorded_at: recordedAt,
    };
    await this.verdicts.record(
      project,
      { gate_id: gateId, run_id: view.run.run_id, recorded_verdict: decision.verdict, report, recorded_at: recordedAt },
      // An existing run's judge calls were paid for (and recorded) by the gate that ran it: nothing new is spent.
      { amount_usd: existingRun ? 0 : this.judges.spend(judge, judgeUsage), judge_model: judgeUsage?.model ?? judge.model, suite_key: view.run.suite_key },
    );
    return { report, decision, comparison: report.comparison as RegressionTestFacts | null };
  }
}

/** The rubric of each gated `llm_judge` case, by case id. */
function judgeRubrics(compiled: ReturnType<typeof compileSuite>, caseIds: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const id of caseIds) {
    const scorer = compiled.cases.get(id)?.scorer;
    if (scorer?.kind === 'judge') out.set(id, scorer.config.rubric);
  }
  return out;
}

/** The corrected pass rate of the cases the judge judged (not those left unscored), per certified scope. */
function correctedRates(suiteKey: string, cases: ReadonlyArray<{ case_id: string; passed: boolean; label: string }>, rubrics: ReadonlyMap<string, string>, judge: GateJudgeAssessment) {
  const certified = judge.scopes?.certified ?? [];
  if (!judge.used || judge.skip || certified.length === 0) return [];
  const judged = cases.filter((c) => rubrics.has(c.case_id) && !NOT_SCORED.has(c.label)).map((c) => ({ rubric: rubrics.get(c.case_id)!, passed: c.passed }));
  return correctedPassRatesByScope(suiteKey, judged, new Map(certified.map((c) => [c.scope, c])));
}

interface Prepared {
  /** Issue 30: the request's project, which the gate's every read and write is scoped to. */
  readonly project: string;
  readonly gateId: string;
  readonly rubrics: ReadonlyMap<string, string>;
  readonly request: ReturnType<typeof parseRunRequest>;
  readonly sample: { size: number; seed: string } | undefined;
  readonly existingRun: string | null;
  readonly judge: GateJudgeAssessment;
}

interface Gated {
  readonly report: Record<string, unknown> & { gate_id: string; recorded_verdict: 'pass' | 'fail'; run: { run_id: string; suite_key: string; subject_kind: string; subject_id: string; variant: string | null }; comparison: unknown };
  readonly decision: GateDecision;
  readonly comparison: RegressionTestFacts | null;
}

/** GT7: at least two suites (one is the single-suite body), at most 20. */
export const FAMILY_MIN_SUITES = 2;
export const FAMILY_MAX_SUITES = 20;
const FAMILY_TOP_FIELDS = new Set(['subject_kind', 'subject_id', 'variant', 'suites']);
const FAMILY_SUITE_FIELDS = new Set(['suite_key', 'suite_version', 'outputs', 'sample', 'baseline_run_id', 'run_id']);

/** The family body's shape: `{subject_kind, subject_id, variant?, suites: [{suite_key, outputs, ...}]}`, distinct keys. */
function parseFamily(body: Record<string, unknown>): Array<Record<string, unknown>> {
  for (const key of Object.keys(body)) {
    if (!FAMILY_TOP_FIELDS.has(key)) throw new IntakeError('INVALID_REQUEST', `${key} is not a field of a gate over several suites (give it per suite, in suites[])`, key);
  }
  const suites = body['suites'];
  if (!Array.isArray(suites) || suites.length < FAMILY_MIN_SUITES || suites.length > FAMILY_MAX_SUITES) {
    throw new IntakeError('INVALID_REQUEST', `suites must be an array of ${FAMILY_MIN_SUITES} to ${FAMILY_MAX_SUITES} suites (one suite: the single-suite body)`, 'suites');
  }
  const seen = new Map<string, number>();
  return suites.map((member, i) => {
    if (!isObject(member)) throw new IntakeError('INVALID_REQUEST', `suites[${i}] must be an object {suite_key, outputs, ...}`, `suites[${i}]`);
    for (const key of Object.keys(member)) {
      if (!FAMILY_SUITE_FIELDS.has(key)) throw new IntakeError('INVALID_REQUEST', `suites[${i}].${key} is not a field of a suite of the family`, `suites[${i}].${key}`);
    }
    const key = member['suite_key'];
    if (typeof key !== 'string' || key.length === 0) throw new IntakeError('INVALID_REQUEST', `suites[${i}].suite_key must be a non-empty string`, `suites[${i}].suite_key`);
    if (seen.has(key)) throw new IntakeError('DUPLICATE_SUITE', `suite ${key} is given twice (suites[${seen.get(key)}] and suites[${i}]); each suite is one test of the family`, `suites[${i}].suite_key`);
    seen.set(key, i);
    if (!Array.isArray(member['outputs'])) throw new IntakeError('INVALID_REQUEST', `suites[${i}].outputs must be an array of {case_id, output}`, `suites[${i}].outputs`);
    return member;
  });
}

/** The family's suites are all checked before any runs: an output for a case the suite does not have, or two for one case. */
function checkOutputCases(outputs: ReadonlyArray<{ readonly case_id: string }>, caseIds: ReadonlySet<string>): void {
  const seen = new Set<string>();
  outputs.forEach((o, j) => {
    if (!caseIds.has(o.case_id)) throw new IntakeError('UNKNOWN_CASE', `case ${o.case_id} is not in the suite version`, `outputs[${j}].case_id`);
    if (seen.has(o.case_id)) throw new IntakeError('DUPLICATE_OUTPUT', `a second output for case ${o.case_id}`, `outputs[${j}].case_id`);
    seen.add(o.case_id);
  });
}

/**
 * A suite's refusal inside a family names the suite: `suites[1].outputs[3].case_id`; the subject's fields are
 * the family's own (`subject_id`).
 */
async function underField<T>(prefix: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (!(error instanceof IntakeError)) throw error;
    const own = error.field && error.field !== 'body' ? error.field : null;
    const field = own === null ? prefix : FAMILY_TOP_FIELDS.has(own.split('.')[0]!) ? own : `${prefix}.${own}`;
    throw new IntakeError(error.code, `${prefix}: ${error.message}`, field, error.details);
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
