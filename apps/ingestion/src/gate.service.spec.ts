/**
 * The gate's orchestration (GT1-GT6) on fakes: the real gate collaborators, the real run intake and the real
 * run model, with every adapter in memory. The scoring worker and the regression app are reduced to what the
 * gate reads of them: on the seal, the run's cases are scored (the real scoring functions), `run.scored` and
 * `run.compared` are decided by the model. The same gate over HTTP on the real servers is
 * test/e2e/gate.e2e-spec.ts; these show each decision on its own and fast.
 */
import { DEFAULT_PROJECT } from '@evals/contracts';
import {
  compareRuns,
  compileSuite,
  foldRunView,
  judgeSkippedEvidence,
  missingOutputEvidence,
  regressionView,
  RunModel,
  rubricScope,
  sampleCaseIds,
  scoreCase,
  summarizeRun,
  type CaseEvidence,
  type RunCommand,
  type RunComparedV1,
  type RunEvent,
  type RunJudgeUsageV1,
  type WorkItem,
} from '@evals/domain';
import type { BudgetMode, BudgetRepository, GateOverrideRow, GateRepository, JudgeStatusRepository, RunView, SuiteRepository, SuiteVersionWithCases } from '@evals/persistence';
import { correctedPassRate } from '@evals/stats';
import type { DataSource } from 'typeorm';
import type { IngestionConfig } from './config';
import { GateBudget } from './gate-budget';
import { GateJudgePolicy, judgeSkip, type GateJudgeAssessment } from './gate-judge-policy';
import { GateRuns } from './gate-runs';
import { GateVerdicts } from './gate-verdicts';
import { GateService } from './gate.service';
import { IntakeError } from './intake-error';
import { RunIntakeService } from './run-intake.service';
import type { RunStreams } from './run-streams';
import type { RunWaiter } from './run-waiter';
import type { SuiteCatalogService } from './suite-catalog.service';
import type { WorkPublisher } from './work-publisher';

const NOW = new Date('2026-12-01T10:00:00.000Z');
const SECRET = 'k'.repeat(32);
const JUDGE = { model: 'gpt-4o-2024-08-06', prompt_version: 'judge-v1' };
const COST_PER_CALL = 0.002;
/** The judge's price, for the gate's budget estimate (issue 13): any judged case costs more than $0. */
const PRICING = { input_per_mtok_usd: 2.5, output_per_mtok_usd: 10 };

/** Four `exact` cases c0..c3 (expected `yes`) and `judged` `llm_judge` cases j0..jN. */
function suiteOf(key: string, judged: number): SuiteVersionWithCases {
  const exact = ['c0', 'c1', 'c2', 'c3'].map((case_id) => ({ case_id, input: 'q', expected: 'yes', scorer: null, tags: [] }));
  const rubric = { type: 'llm_judge', rubric: 'The answer offers a refund politely.', min_score: 0.5 };
  const judge = Array.from({ length: judged }, (_, i) => ({ case_id: `j${i}`, input: 'q', expected: 'a polite refund', scorer: rubric, tags: [] }));
  const cases = [...exact, ...judge];
  return {
    suite_key: key,
    version: 1,
    content_hash: `sha256:${key}`,
    description: null,
    default_scorer: { type: 'exact' },
    pass_threshold: 0.5,
    regression_threshold: 0.1,
    golden_fixtures: false,
    case_count: cases.length,
    cases,
  };
}
const SUITES = [suiteOf('plain', 0), suiteOf('judged', 2), suiteOf('other', 0)];

/** Run streams in memory: each run's events with their times, appended only with what the real model decides. */
class MemoryRuns {
  private readonly streams = new Map<string, Array<{ event: RunEvent; occurred_at: string }>>();

  stream(runId: string): ReadonlyArray<{ event: RunEvent; occurred_at: string }> {
    return this.streams.get(runId) ?? [];
  }

  async load(runId: string) {
    const events = this.stream(runId);
    return { state: RunModel.foldRun(events), version: events.length };
  }

  async decideAndAppend(runId: string, command: RunCommand): Promise<boolean> {
    return (await this.decide(runId, command)).appended;
  }

  async decide(runId: string, command: RunCommand) {
    const decided = RunModel.decide(command, (await this.load(runId)).state);
    this.streams.set(runId, [...this.stream(runId), ...decided.map((event) => ({ event, occurred_at: NOW.toISOString() }))]);
    return { appended: decided.length > 0, run: await this.load(runId) };
  }
}

/**
 * The scoring worker and the regression app, in a few lines: outputs are kept until the seal; the seal scores
 * every case the model says the run must score, records `run.scored` (with the judge's usage when the suite has
 * judge cases) and then `run.compared` with the verdict the test sets and the completeness the model answers.
 * A judge case is judged a pass at COST_PER_CALL unless the run says the judge must not be called.
 */
class Pipeline {
  readonly evidence = new Map<string, CaseEvidence[]>();
  private readonly outputs = new Map<string, Map<string, string>>();
  comparison: Omit<RunComparedV1, 'run_id' | 'completeness'> = { verdict: 'no_baseline', baseline_run_id: null, chosen_by: null, comparison: null };
  /** Per suite, when a test sets it (GT7: a family's suites compare differently); else `comparison`. */
  readonly comparisons = new Map<string, Omit<RunComparedV1, 'run_id' | 'completeness'>>();

  constructor(private readonly runs: MemoryRuns) {}

  async forward(runId: string, items: readonly WorkItem[]): Promise<void> {
    const kept = this.outputs.get(runId) ?? new Map<string, string>();
    for (const item of items) kept.set(item.case_id, item.output);
    this.outputs.set(runId, kept);
  }

  async seal(runId: string): Promise<void> {
    const { state } = await this.runs.load(runId);
    if (state.phase !== 'sealed' || !state.opened) return;
    const suite = compileSuite(SUITES.find((s) => s.suite_key === state.opened!.suite_key)!);
    const outputs = this.outputs.get(runId) ?? new Map<string, string>();
    const skip = RunModel.judgeSkipLabel(state);
    const ctx = { runId, hmacSecret: SECRET, scoredAt: NOW.toISOString() };
    const rows = RunModel.runCaseIds(state, [...suite.cases.keys()]).map((id) => {
      const compiled = suite.cases.get(id)!;
      const output = outputs.get(id);
      if (output === undefined) return missingOutputEvidence(compiled, ctx);
      if (compiled.scorer.kind !== 'judge') return scoreCase(compiled, output, ctx);
      return skip ? judgeSkippedEvidence(compiled, output, skip, ctx) : { ...scoreCase(compiled, output, ctx), score: 1, passed: true, label: 'judge_pass' };
    });
    this.evidence.set(runId, rows);
    const missing = rows.filter((r) => r.label === 'missing_output').map((r) => r.case_id);
    const judge = usageOf(rows);
    await this.runs.decideAndAppend(runId, {
      type: 'record_scored',
      data: {
        run_id: runId,
        n: rows.length,
        passed: rows.filter((r) => r.passed).length,
        score_sum: rows.reduce((s, r) => s + r.score, 0),
        missing_count: missing.length,
        missing_case_ids: missing,
        ...(judge ? { judge } : {}),
      },
    });
    const scored = (await this.runs.load(runId)).state;
    const comparison = this.comparisons.get(state.opened.suite_key) ?? this.comparison;
    await this.runs.decideAndAppend(runId, { type: 'record_comparison', run_id: runId, verdict: comparison.verdict, decision: { ...comparison, completeness: RunModel.completeness(scored)! } });
  }
}

/** What the worker sums from a run's judge evidence (JudgeEvidenceRepository.runUsage): null without judge cases. */
function usageOf(rows: readonly CaseEvidence[]): RunJudgeUsageV1 | null {
  const judged = rows.filter((r) => r.scorer === 'llm_judge' && r.label !== 'missing_output');
  if (judged.length === 0) return null;
  const calls = judged.filter((r) => r.label === 'judge_pass').length;
  const credential = judged.filter((r) => r.label === 'judge_credential_missing').length;
  const tokens = { input_tokens: 100 * calls, output_tokens: 20 * calls, cost_usd: COST_PER_CALL * calls };
  const pin = calls > 0 ? { model: JUDGE.model, prompt_version: JUDGE.prompt_version } : { model: null, prompt_version: null };
  return { cases: judged.length, calls, errors: 0, credential_missing: credential, not_configured: 0, skipped: judged.length - calls - credential, cache_hits: 0, cache_misses: calls, ...tokens, ...pin };
}

/** The run as the gate waits on it (RunWaiter): folded from its stream by the real fold (issue 27: never the read model's tables). */
class ReadModel {
  /** Runs waited for (`completed`): the real waiter polls until RUN_TIMEOUT_MS, so a refusal must not wait. */
  readonly waits: string[] = [];

  constructor(
    private readonly runs: MemoryRuns,
    private readonly pipeline: Pipeline,
  ) {}

  async find(runId: string): Promise<RunView | null> {
    const stream = this.runs.stream(runId);
    if (stream.length === 0) return null;
    // The real waiter's fold (RunFoldQueries): the same functions of libs/domain over the run's stream.
    const { doc, eval_result, verdict } = foldRunView(stream);
    const cases = (this.pipeline.evidence.get(runId) ?? []).map((e) => ({ case_id: e.case_id, scorer: e.scorer, scorer_version: e.scorer_version, score: e.score, passed: e.passed, label: e.label, scored_at: e.scored_at }));
    return { run: { ...doc!, summary: summarizeRun(doc!) }, eval_result, regression: regressionView(verdict), cases };
  }

  async completed(runId: string): Promise<RunView> {
    this.waits.push(runId);
    const view = await this.find(runId);
    if (view && view.run.status === 'completed' && view.eval_result && view.regression) return view;
    throw new IntakeError('RUN_PENDING', `run ${runId} is still being scored`, 'run_id');
  }
}

/** The stores behind the judge policy and the verdicts: calibration, budgets and spend, gate verdicts and overrides. */
class Stores {
  calibration: GateJudgeAssessment['status'] | 'unreadable' = 'certified';
  /** Issue 13: a budget has a limit (default $0 here, so any estimated spend exceeds it) and a window spend. */
  budgets: Array<{ scope: string; mode: BudgetMode; limit_usd?: number; spent_usd?: number }> | 'unreadable' = [];
  readonly budgetReads: string[][] = [];
  readonly calibrationReads: string[] = [];
  readonly spend: Array<{ scope: string; gate_id: string; usd: number }> = [];
  readonly logs: Array<Record<string, unknown>> = [];
  readonly gates = new Map<string, { recorded_verdict: 'pass' | 'fail'; report: Record<string, unknown>; overrides: GateOverrideRow[] }>();

  /** J4: the scope the fake's calibration is for (the `judged` suite's own, unless a test says otherwise). */
  calibrationScope = 'suite:judged';
  /** Issue 30: the project whose labels measured the fake's calibration; another project's gate reads none of it. */
  calibrationProject = DEFAULT_PROJECT;

  readonly statuses = {
    scopes: async (_sql: unknown, project: string, model: string, promptVersion: string) => {
      this.calibrationReads.push(`${model}/${promptVersion}`);
      if (this.calibration === 'unreadable') throw new Error('relation "calibration_reports" does not exist');
      if (this.calibration === 'uncalibrated' || this.calibration === null || project !== this.calibrationProject) return [];
      const rate = (x: number, n: number) => ({ value: x / n, numerator: x, denominator: n, lower: 0, upper: 1 });
      return [{ status: this.calibration, scope: this.calibrationScope, report_id: 'report-1', sensitivity: rate(45, 50), specificity: rate(40, 50) }];
    },
  } as unknown as JudgeStatusRepository;

  readonly budgetRepository = {
    standings: async (_sql: unknown, _project: string, scopes: readonly string[] | null) => {
      if (scopes) this.budgetReads.push([...scopes]);
      if (this.budgets === 'unreadable') throw new Error('relation "budgets" does not exist');
      return this.budgets
        .filter((b) => scopes === null || scopes.includes(b.scope))
        .map((b) => ({ period: 'month', window_start: '2026-12-01T00:00:00.000Z', updated_at: NOW.toISOString(), limit_usd: 0, spent_usd: 0, ...b }));
    },
    recordSpend: async (_sql: unknown, _project: string, e: { gate_id: string; amount_usd: number }) => void this.spend.push({ scope: 'judge', gate_id: e.gate_id, usd: e.amount_usd }),
    // GT4 holds (the real ones are tested on PostgreSQL: apps/ingestion/src/gate-budget.int-spec.ts).
    lockSpending: async () => undefined,
    reserve: async (_sql: unknown, _project: string, r: { gate_id: string; amount_usd: number }) => void (this.holds.set(r.gate_id, r.amount_usd), this.reserved.push({ gate_id: r.gate_id, usd: r.amount_usd })),
    release: async (_sql: unknown, _project: string, gateId: string) => void this.holds.delete(gateId),
  } as unknown as BudgetRepository;
  /** GT4: the budget holds of gates not yet recorded, by gate id, and every hold ever made. */
  readonly holds = new Map<string, number>();
  readonly reserved: Array<{ gate_id: string; usd: number }> = [];

  readonly gateRepository = {
    record: async (_sql: unknown, _project: string, g: { gate_id: string; recorded_verdict: 'pass' | 'fail'; report: Record<string, unknown> }) =>
      void this.gates.set(g.gate_id, { recorded_verdict: g.recorded_verdict, report: g.report, overrides: [] }),
    find: async (_sql: unknown, _project: string, gateId: string) => this.gates.get(gateId) ?? null,
    addOverride: async (_sql: unknown, _project: string, gateId: string, o: GateOverrideRow) => (this.gates.get(gateId)!.overrides.push(o), true),
  } as unknown as GateRepository;
}

function setup(judge: IngestionConfig['judge'] = { ...JUDGE, credential_missing: false }) {
  const runs = new MemoryRuns();
  const pipeline = new Pipeline(runs);
  const readModel = new ReadModel(runs, pipeline);
  const stores = new Stores();
  const find = async (key: string, version?: number) => SUITES.find((s) => s.suite_key === key && (version === undefined || s.version === version)) ?? null;
  const db = { transaction: async (work: (tx: unknown) => Promise<unknown>) => work({}) } as unknown as DataSource;
  const clock = { now: () => NOW };
  let next = 0;
  const ids = { uuid: () => `00000000-0000-4000-8000-${String(++next).padStart(12, '0')}` };

  const intake = new RunIntakeService(runs as unknown as RunStreams, pipeline as unknown as WorkPublisher, { head: (_sql: unknown, _project: string, key: string, version?: number) => find(key, version), heads: (_sql: unknown, requests: Array<{ suiteKey: string; version?: number }>) => Promise.all(requests.map((r) => find(r.suiteKey, r.version))), caseScorers: async (_sql: unknown, _project: string, key: string, version: number) => (await find(key, version))!.cases } as unknown as SuiteRepository, db, {
    hmacSecret: SECRET,
  });
  const gateRuns = new GateRuns({ find: (_project: string, key: string, version?: number) => find(key, version) } as unknown as SuiteCatalogService, intake, readModel as unknown as RunWaiter, runs as unknown as RunStreams);
  const logger = { event: (level: string, msg: string, fields?: Record<string, unknown>) => void stores.logs.push({ level, msg, ...fields }) };
  const budget = new GateBudget(db, stores.budgetRepository, clock, logger, { judge: judge && { ...judge, pricing: PRICING } });
  const policy = new GateJudgePolicy(db, { judge }, stores.statuses, budget);
  const verdicts = new GateVerdicts(db, stores.gateRepository, budget, clock);
  const gate = new GateService(gateRuns, policy, verdicts, clock, ids);
  return { gate, verdicts, intake, runs, pipeline, readModel, stores };
}

/** A gate request with an output for every case of the suite: `yes` passes an exact case, any output a judged one. */
function request(suiteKey: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  const suite = SUITES.find((s) => s.suite_key === suiteKey)!;
  return { suite_key: suiteKey, subject_kind: 'agent', subject_id: 'bot', outputs: suite.cases.map((c) => ({ case_id: c.case_id, output: 'yes' })), ...over };
}

async function refusal(p: Promise<unknown>): Promise<IntakeError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (error instanceof IntakeError) return error;
  throw error ?? new Error('expected a refusal');
}

type Report = Record<string, any>;

describe('unit: the gate (GT1-GT6)', () => {
  describe('judge preconditions (GT2, GT4, J4)', () => {
    it.each([
      ['a blocking budget over a missing credential and an uncalibrated judge', { budget: 'block', credential: false, calibration: 'uncalibrated' }, 'budget_blocked'],
      // Issue 13: a throttle judges what fits (here nothing) case by case; the run's skip is the next precondition's.
      ['a throttling budget judges what fits: the next precondition names the skip', { budget: 'throttle', credential: false, calibration: 'uncalibrated' }, 'judge_credential_missing'],
      ['an unreadable budget store likewise', { budget: 'unreadable', credential: false, calibration: 'uncalibrated' }, 'budget_blocked'],
      ['then a missing credential over an uncalibrated judge', { budget: 'none', credential: false, calibration: 'uncalibrated' }, 'judge_credential_missing'],
      ['then a judge not certified', { budget: 'none', credential: true, calibration: 'not_certified' }, 'judge_uncalibrated'],
      ['an unreadable calibration store certifies nothing', { budget: 'none', credential: true, calibration: 'unreadable' }, 'judge_uncalibrated'],
      ['nothing, when every precondition holds', { budget: 'none', credential: true, calibration: 'certified' }, null],
    ] as const)('judge skip precedence, budget > credential > calibration: %s', async (_what, given, skip) => {
      const { gate, runs, stores } = setup({ ...JUDGE, credential_missing: !given.credential });
      stores.budgets = given.budget === 'unreadable' ? 'unreadable' : given.budget === 'none' ? [] : [{ scope: 'suite:judged', mode: given.budget }];
      stores.calibration = given.calibration;
      const report: Report = await gate.gate(DEFAULT_PROJECT, request('judged', { run_id: 'r1' }));

      // The run was opened with the label its judge cases get instead of a call (or none).
      expect(RunModel.judgeSkipLabel((await runs.load('r1')).state)).toBe(skip);
      expect(report.judge).toMatchObject({ used: true, skipped: skip, model: JUDGE.model, prompt_version: JUDGE.prompt_version });
      expect(report.judge.cases_not_scored).toBe(skip ? 2 : 0);
      // The budget scopes asked: every judge spend, the suite's, the pin's.
      expect(stores.budgetReads).toEqual([['judge', 'suite:judged', `judge:${JUDGE.model}`]]);
      // Spend is recorded only for judge calls that were made.
      expect(stores.spend).toEqual(skip ? [] : [{ scope: 'judge', gate_id: report.gate_id, usd: 2 * COST_PER_CALL }]);
      expect(report.recorded_verdict).toBe(skip ? 'fail' : 'pass');
    });

    it("issue 30: the judge's certification is the gate's project's: certified in one project, uncalibrated in another", async () => {
      const { gate, stores } = setup({ ...JUDGE, credential_missing: false });
      stores.calibrationProject = 'team-a';
      const own: Report = await gate.gate('team-a', request('judged', { run_id: 'cert-a' }));
      const other: Report = await gate.gate(DEFAULT_PROJECT, request('judged', { run_id: 'cert-d' }));
      expect([own.judge.status, own.judge.skipped]).toEqual(['certified', null]);
      expect([other.judge.status, other.judge.skipped]).toEqual(['uncalibrated', 'judge_uncalibrated']);
      expect(other.recorded_verdict).toBe('fail');
    });

    it('the precedence itself, as a table: the first precondition that fails names the skip', () => {
      const base = { used: true, budget: 'allowed', credential_missing: false, status: 'certified' } as const;
      expect(judgeSkip(base)).toBeNull();
      expect(judgeSkip({ ...base, used: false, budget: 'blocked', credential_missing: true, status: null })).toBeNull();
      expect(judgeSkip({ ...base, budget: 'store_unreadable', credential_missing: true, status: 'uncalibrated' })).toBe('budget_blocked');
      expect(judgeSkip({ ...base, credential_missing: true, status: 'not_certifiable' })).toBe('judge_credential_missing');
      expect(judgeSkip({ ...base, status: 'not_certifiable' })).toBe('judge_uncalibrated');
    });

    it('a suite without judge cases reads no budget and no calibration, skips no judge and spends nothing - even with no judge and a blocking budget', async () => {
      const { gate, runs, stores } = setup(null);
      stores.budgets = [{ scope: 'judge', mode: 'block' }];
      stores.calibration = 'unreadable';
      const report: Report = await gate.gate(DEFAULT_PROJECT, request('plain', { run_id: 'r1' }));

      expect(report.recorded_verdict).toBe('pass');
      expect(report.judge).toMatchObject({ used: false, status: null, skipped: null, usage: null, cases_not_scored: 0 });
      expect(report.budget).toEqual({ decision: 'not_needed' });
      expect(report.reasons).toEqual([]);
      expect(stores.budgetReads).toEqual([]);
      expect(stores.calibrationReads).toEqual([]);
      expect(stores.spend).toEqual([]);
      expect(RunModel.judgeMayBeCalled((await runs.load('r1')).state)).toBe(true);
    });

    it('GT3: only the sampled cases say whether the judge is needed - a sample of exact cases only needs none', async () => {
      const { gate, stores } = setup({ ...JUDGE, credential_missing: true });
      const judgedSuite = SUITES[1];
      // The first seed whose sample of 3 leaves out both judge cases (the sample is a pure function of the seed).
      let seed: string | undefined;
      for (let i = 0; i < 200 && !seed; i++) {
        const picked = sampleCaseIds(judgedSuite.cases.map((c) => c.case_id), { size: 3, seed: `s${i}` });
        if (picked.every((id) => id.startsWith('c'))) seed = `s${i}`;
      }
      expect(seed).toBeDefined();
      const report: Report = await gate.gate(DEFAULT_PROJECT, request('judged', { run_id: 'r1', sample: { size: 3, seed } }));
      expect(report.judge).toMatchObject({ used: false, skipped: null });
      expect(report.run.n).toBe(3);
      expect(report.sample).toEqual({ size: 3, seed });
      expect(stores.budgetReads).toEqual([]);
    });
  });

  describe('the run it gates (GT1)', () => {
    it('an existing run_id: unknown is UNKNOWN_RUN, still open is RUN_PENDING, another suite\'s is INVALID_REQUEST - and nothing is opened or recorded', async () => {
      const { gate, intake, runs, readModel, stores } = setup();
      await intake.open({ run_id: 'open-run', project: DEFAULT_PROJECT, suite_key: 'plain', subject_kind: 'agent', subject_id: 'bot', source: 'ci' }, { message_id: 'm', correlation_id: 'm' });
      await gate.gate(DEFAULT_PROJECT, request('judged', { run_id: 'judged-run' }));
      stores.gates.clear();
      readModel.waits.length = 0;

      const unknown = await refusal(gate.gate(DEFAULT_PROJECT, { suite_key: 'plain', subject_kind: 'agent', subject_id: 'bot', run_id: 'nope' }));
      expect([unknown.code, unknown.status, unknown.field]).toEqual(['UNKNOWN_RUN', 404, 'run_id']);
      const pending = await refusal(gate.gate(DEFAULT_PROJECT, { suite_key: 'plain', subject_kind: 'agent', subject_id: 'bot', run_id: 'open-run' }));
      expect([pending.code, pending.status]).toEqual(['RUN_PENDING', 202]);
      const other = await refusal(gate.gate(DEFAULT_PROJECT, { suite_key: 'plain', subject_kind: 'agent', subject_id: 'bot', run_id: 'judged-run' }));
      expect([other.code, other.status]).toEqual(['INVALID_REQUEST', 400]);

      // Refused at once: none of them waited for the run to complete.
      expect(readModel.waits).toEqual([]);
      expect(runs.stream('nope')).toEqual([]);
      expect(RunModel.isSealed((await runs.load('open-run')).state)).toBe(false);
      expect(stores.gates.size).toBe(0);
    });

    it('an existing completed run is gated as it is: nothing new is appended to its stream', async () => {
      const { gate, runs } = setup();
      await gate.gate(DEFAULT_PROJECT, request('plain', { run_id: 'done', outputs: [{ case_id: 'c0', output: 'yes' }, { case_id: 'c1', output: 'no' }] }));
      const before = runs.stream('done').length;
      const report: Report = await gate.gate(DEFAULT_PROJECT, { suite_key: 'plain', subject_kind: 'agent', subject_id: 'bot', run_id: 'done' });
      expect(runs.stream('done')).toHaveLength(before);
      expect(report.run).toMatchObject({ run_id: 'done', n: 4, passed: 1, pass_rate: 0.25, completeness: 'incomplete' });
      expect(report.cases.map((c: { label: string }) => c.label)).toEqual(['match', 'mismatch', 'missing_output', 'missing_output']);
    });

    it('GT4: an existing run whose judge was called, gated while a budget blocks: nothing is left to judge, so nothing is refused, and its cost is not recorded again', async () => {
      const { gate, stores } = setup();
      const first: Report = await gate.gate(DEFAULT_PROJECT, request('judged', { run_id: 'judged-run' }));
      expect(stores.spend).toEqual([{ scope: 'judge', gate_id: first.gate_id, usd: 2 * COST_PER_CALL }]);
      stores.budgets = [{ scope: 'judge', mode: 'block' }];
      const again: Report = await gate.gate(DEFAULT_PROJECT, { suite_key: 'judged', subject_kind: 'agent', subject_id: 'bot', run_id: 'judged-run' });
      expect(again.reasons).toEqual([]);
      expect(again.budget).toMatchObject({ decision: 'allowed', estimate_usd: 0 });
      expect(again.judge).toMatchObject({ skipped: null, usage: { calls: 2, cost_usd: 2 * COST_PER_CALL } });
      expect(stores.spend).toHaveLength(1);
    });

    it('GT4 in money (issue 13): a block budget with room allows; without room it blocks with the estimate and what is left; an unreadable store refuses and logs why', async () => {
      const roomy = setup();
      roomy.stores.budgets = [{ scope: 'judge', mode: 'block', limit_usd: 1000, spent_usd: 0 }];
      const allowed: Report = await roomy.gate.gate(DEFAULT_PROJECT, request('judged', { run_id: 'r-roomy' }));
      expect(allowed.budget).toMatchObject({ decision: 'allowed', left_usd: 1000 });
      expect(allowed.budget.estimate_usd).toBeGreaterThan(0);
      expect(allowed.judge.skipped).toBeNull();
      // GT4: the estimate was held while the run was judged, and the hold became the recorded spend.
      expect(roomy.stores.reserved).toEqual([{ gate_id: allowed.gate_id, usd: allowed.budget.estimate_usd }]);
      expect(roomy.stores.holds.size).toBe(0);
      expect(roomy.stores.spend.map((x) => x.gate_id)).toEqual([allowed.gate_id]);

      const tight = setup();
      tight.stores.budgets = [{ scope: 'suite:judged', mode: 'block', limit_usd: 1, spent_usd: 1 }];
      const blocked: Report = await tight.gate.gate(DEFAULT_PROJECT, request('judged', { run_id: 'r-tight' }));
      expect(blocked.reasons.map((r: { code: string }) => r.code)).toContain('budget_blocked');
      expect(blocked.reasons.find((r: { code: string }) => r.code === 'budget_blocked').message).toMatch(/estimated at \$0\.\d{4} exceeds the \$0\.0000 left of budget suite:judged/);
      expect(blocked.judge.skipped).toBe('budget_blocked');
      expect(tight.stores.reserved).toEqual([]);

      const broken = setup();
      broken.stores.budgets = 'unreadable';
      const refused: Report = await broken.gate.gate(DEFAULT_PROJECT, request('judged', { run_id: 'r-broken' }));
      expect(refused.budget).toEqual({ decision: 'store_unreadable' });
      expect(broken.stores.logs).toContainEqual(expect.objectContaining({ level: 'warn', error: 'Error: relation "budgets" does not exist' }));
    });

    it('an unknown suite is SUITE_NOT_FOUND; a sample larger than the suite is INVALID_REQUEST; neither opens a run', async () => {
      const { gate, stores } = setup();
      expect((await refusal(gate.gate(DEFAULT_PROJECT, request('plain', { suite_key: 'nope' })))).code).toBe('SUITE_NOT_FOUND');
      const big = await refusal(gate.gate(DEFAULT_PROJECT, request('plain', { run_id: 'r1', sample: { size: 5, seed: 's' } })));
      expect([big.code, big.field]).toEqual(['INVALID_REQUEST', 'sample.size']);
      expect(stores.gates.size).toBe(0);
    });
  });

  describe('the report (GT1, GT6, R7)', () => {
    it('carries the reasons, the warnings, the comparison with its baseline and the run\'s completeness', async () => {
      const { gate, pipeline, stores } = setup({ ...JUDGE, credential_missing: true });
      stores.calibration = 'uncalibrated';
      const diff = { diff: -0.5, lower: -0.8, upper: -0.1, level: 0.95 };
      pipeline.comparison = { verdict: 'regressed', baseline_run_id: 'base', chosen_by: 'explicit', comparison: { score_drop: 0.5, pass_rate_diff: diff } };
      const report: Report = await gate.gate(DEFAULT_PROJECT, request('judged', { run_id: 'r1' }));

      expect(report.recorded_verdict).toBe('fail');
      expect(report.effective_verdict).toBe('fail');
      expect(report.reasons.map((r: { code: string }) => r.code)).toEqual(['regressed', 'judge_uncalibrated']);
      expect(report.warnings.map((w: { code: string }) => w.code)).toEqual(['judge_credential_missing']);
      expect(report.comparison).toEqual({ verdict: 'regressed', baseline_run_id: 'base', chosen_by: 'explicit', score_drop: 0.5, pass_rate_diff: diff });
      // The skipped judge cases count as failed and leave the run incomplete (R7): never the next baseline.
      expect(report.run).toMatchObject({ run_id: 'r1', suite_key: 'judged', n: 6, passed: 4, pass_threshold: 0.5, completeness: 'incomplete' });
      expect(report.run.pass_rate_ci).toMatchObject({ level: 0.95 });
      expect(report.run.pass_rate_ci.lower).toBeLessThan(4 / 6);
      expect(report.run.pass_rate_ci.upper).toBeGreaterThan(4 / 6);
      expect(report.judge).toMatchObject({ status: 'uncalibrated', skipped: 'judge_credential_missing', cases_not_scored: 2, usage: { cases: 2, calls: 0, credential_missing: 2 } });
      // What was recorded is what was answered.
      expect(stores.gates.get(report.gate_id)).toEqual({ recorded_verdict: 'fail', report, overrides: [] });
    });

    it('a complete run without a baseline passes with a no_baseline warning and completeness complete', async () => {
      const { gate } = setup();
      const report: Report = await gate.gate(DEFAULT_PROJECT, request('judged'));
      expect(report.recorded_verdict).toBe('pass');
      expect(report.warnings.map((w: { code: string }) => w.code)).toEqual(['no_baseline']);
      expect(report.run.completeness).toBe('complete');
      expect(report.run.run_id).toBe(`gate-${report.gate_id}`);
      expect(report.judge.usage).toMatchObject({ calls: 2, cost_usd: 2 * COST_PER_CALL });
    });
  });

  describe('override (GT5)', () => {
    async function failedGate() {
      const s = setup();
      const report: Report = await s.gate.gate(DEFAULT_PROJECT, request('plain', { outputs: [{ case_id: 'c0', output: 'no' }] }));
      expect(report.recorded_verdict).toBe('fail');
      return { ...s, gateId: report.gate_id as string };
    }
    const admin = { key_id: 'key-1', name: 'on-call lead' };

    it('needs a written reason: too short or saying nothing is INVALID_REQUEST and records nothing', async () => {
      const { verdicts, stores, gateId } = await failedGate();
      for (const reason of [undefined, 'too short', 'x'.repeat(30)]) {
        const refused = await refusal(verdicts.override(DEFAULT_PROJECT, gateId, reason, admin));
        expect([refused.code, refused.field]).toEqual(['INVALID_REQUEST', 'reason']);
      }
      expect(stores.gates.get(gateId)!.overrides).toEqual([]);
    });

    it('changes the effective verdict only, audited; a gate that passes has nothing to override; an unknown gate is GATE_NOT_FOUND', async () => {
      const { verdicts, stores, gateId } = await failedGate();
      const after: Report = await verdicts.override(DEFAULT_PROJECT, gateId, '  known flaky upstream, accepted by the on-call lead ', admin);

      expect(after).toMatchObject({ gate_id: gateId, recorded_verdict: 'fail', effective_verdict: 'pass' });
      expect(after.override).toEqual({ actor_key_id: 'key-1', actor_name: 'on-call lead', reason: 'known flaky upstream, accepted by the on-call lead', before: 'fail', after: 'pass', at: NOW.toISOString() });
      expect(stores.gates.get(gateId)!.recorded_verdict).toBe('fail');
      expect(await verdicts.status(DEFAULT_PROJECT, gateId)).toMatchObject({ recorded_verdict: 'fail', effective_verdict: 'pass', overrides: [after.override] });

      expect((await refusal(verdicts.override(DEFAULT_PROJECT, gateId, 'another perfectly good reason here', admin))).code).toBe('NOTHING_TO_OVERRIDE');
      expect(stores.gates.get(gateId)!.overrides).toHaveLength(1);
      expect((await refusal(verdicts.override(DEFAULT_PROJECT, '00000000-0000-4000-8000-999999999999', 'another perfectly good reason here', admin))).code).toBe('GATE_NOT_FOUND');
      expect((await refusal(verdicts.status(DEFAULT_PROJECT, 'nope'))).code).toBe('GATE_NOT_FOUND');
    });
  });

  describe('a family of suites (GT7, Holm)', () => {
    /** The comparison of a run x/20 against a baseline y/20 (independent; scores = pass rates), as the regression app records it. */
    function compared(x: number, y: number): Omit<RunComparedV1, 'run_id' | 'completeness'> {
      const c = compareRuns({ run_id: 'r', n: 20, passed: x, score: x / 20 }, { run_id: 'base', n: 20, passed: y, score: y / 20 }, 0.1);
      return { verdict: c.verdict, baseline_run_id: 'base', chosen_by: 'explicit', comparison: c as unknown as Record<string, unknown> };
    }
    const family = (suites: unknown, over: Record<string, unknown> = {}) => ({ subject_kind: 'agent', subject_id: 'bot', suites, ...over });
    const member = (key: string, over: Record<string, unknown> = {}) => {
      const outputs = SUITES.some((s) => s.suite_key === key) ? request(key)['outputs'] : [{ case_id: 'c0', output: 'yes' }];
      return { suite_key: key, outputs, ...over };
    };

    it("gates each suite as on its own, then Holm: a raw p just under 0.05 is not significant over three tests; the family gate is recorded, readable and overridable", async () => {
      const { gate, verdicts, pipeline, stores } = setup();
      // 14/20 against 19/20: the 95% interval excludes zero, raw p = 0.0434 (scipy, libs/stats pvalue.spec.ts method).
      pipeline.comparisons.set('plain', compared(14, 19));
      pipeline.comparisons.set('judged', compared(15, 18));
      pipeline.comparisons.set('other', compared(16, 19));
      const report: Report = await gate.gate(DEFAULT_PROJECT, family([member('plain'), member('judged'), member('other')]));

      expect(report.family).toEqual({ method: 'holm', tests: 3, alpha: 0.05 });
      expect(report.recorded_verdict).toBe('pass');
      expect(report.effective_verdict).toBe('pass');
      const plain = report.suites[0];
      expect(plain.suite_key).toBe('plain');
      expect(plain.suite_verdict).toBe('fail');
      expect(plain.verdict).toBe('pass');
      expect(plain.regression_p.raw).toBeCloseTo(0.04342095547216589, 10);
      expect(plain.regression_p.adjusted).toBeGreaterThanOrEqual(0.05);
      expect(plain.warnings[0]).toMatchObject({ code: 'inconclusive_noise', message: expect.stringContaining('not significant after Holm over 3 suites') });
      expect(plain.comparison).toMatchObject({ verdict: 'regressed', baseline_run_id: 'base' });
      // Each suite has its own recorded gate, as on its own: plain's failed.
      expect(stores.gates.get(plain.gate_id)!.recorded_verdict).toBe('fail');
      expect(report.suites.map((s: Report) => s.gate_id)).toEqual([...new Set(report.suites.map((s: Report) => s.gate_id))]);
      expect(stores.gates.size).toBe(4);
      // GET /v1/gate/:id of the family.
      expect(await verdicts.status(DEFAULT_PROJECT, report.gate_id)).toMatchObject({ gate_id: report.gate_id, kind: 'family', recorded_verdict: 'pass', effective_verdict: 'pass', overrides: [] });
    });

    it('a strong regression survives the adjustment: the family fails, and an override changes the family\'s effective verdict only', async () => {
      const { gate, verdicts, pipeline, stores } = setup();
      pipeline.comparisons.set('plain', compared(8, 19));
      pipeline.comparisons.set('other', compared(16, 18));
      const report: Report = await gate.gate(DEFAULT_PROJECT, family([member('plain'), member('other')]));
      expect(report.recorded_verdict).toBe('fail');
      expect(report.suites[0].regression_p.adjusted).toBeLessThan(0.05);
      expect(report.reasons).toEqual([expect.objectContaining({ code: 'regressed', suite_key: 'plain' })]);
      const after: Report = await verdicts.override(DEFAULT_PROJECT, report.gate_id, 'accepted by the release manager for the hotfix', { key_id: 'k', name: 'lead' });
      expect(after).toMatchObject({ recorded_verdict: 'fail', effective_verdict: 'pass' });
      expect(stores.gates.get(report.suites[0].gate_id)!.overrides).toEqual([]);
    });

    it('refuses a malformed family before any suite runs, naming the field', async () => {
      const { gate, stores, readModel } = setup();
      const cases: Array<[unknown, string, number, string]> = [
        [family([member('plain')]), 'INVALID_REQUEST', 400, 'suites'],
        [family(Array.from({ length: 21 }, (_, i) => member(`s${i}`))), 'INVALID_REQUEST', 400, 'suites'],
        [family('plain'), 'INVALID_REQUEST', 400, 'suites'],
        [family([member('plain'), 'other']), 'INVALID_REQUEST', 400, 'suites[1]'],
        [family([member('plain'), member('plain')]), 'DUPLICATE_SUITE', 422, 'suites[1].suite_key'],
        [family([member('plain'), { ...member('other'), suite_key: 7 }]), 'INVALID_REQUEST', 400, 'suites[1].suite_key'],
        [family([member('plain'), { suite_key: 'other' }]), 'INVALID_REQUEST', 400, 'suites[1].outputs'],
        [family([member('plain'), member('other', { subject_id: 'x' })]), 'INVALID_REQUEST', 400, 'suites[1].subject_id'],
        [family([member('plain'), member('other')], { suite_key: 'plain' }), 'INVALID_REQUEST', 400, 'suite_key'],
        [family([member('plain'), member('nope')]), 'SUITE_NOT_FOUND', 404, 'suites[1].suite_key'],
        [family([member('plain'), member('other', { sample: { size: 9, seed: 's' } })]), 'INVALID_REQUEST', 400, 'suites[1].sample.size'],
        [family([member('plain'), member('other', { outputs: [{ case_id: 'c0', output: 'yes' }, { case_id: 'zz', output: 'yes' }] })]), 'UNKNOWN_CASE', 422, 'suites[1].outputs[1].case_id'],
        [family([member('plain'), member('other', { outputs: [{ case_id: 'c0', output: 'yes' }, { case_id: 'c0', output: 'no' }] })]), 'DUPLICATE_OUTPUT', 422, 'suites[1].outputs[1].case_id'],
        [family([member('plain'), member('other')], { subject_id: undefined }), 'INVALID_REQUEST', 400, 'subject_id'],
      ];
      for (const [body, code, status, field] of cases) {
        const refused = await refusal(gate.gate(DEFAULT_PROJECT, body));
        expect([code, status, field, refused.code, refused.status, refused.field]).toEqual([code, status, field, code, status, field]);
      }
      expect(stores.gates.size).toBe(0);
      expect(readModel.waits).toEqual([]);
    });
  });
});

describe('unit: the gate checks the certification scope its cases use (J4, issue 13)', () => {
  const SUITE_RUBRIC = 'The answer offers a refund politely.';

  it('a pin certified on another rubric does not count: judge_uncalibrated, naming the uncovered scope and the path to a passing gate', async () => {
    const { gate, runs, stores } = setup();
    stores.calibrationScope = rubricScope('Another rubric altogether.');
    const report: Report = await gate.gate(DEFAULT_PROJECT, request('judged', { run_id: 'r1' }));
    expect(report.recorded_verdict).toBe('fail');
    expect(RunModel.judgeSkipLabel((await runs.load('r1')).state)).toBe('judge_uncalibrated');
    expect(report.judge).toMatchObject({ status: 'uncalibrated', skipped: 'judge_uncalibrated', scopes: { needed: [rubricScope(SUITE_RUBRIC)], uncovered: [rubricScope(SUITE_RUBRIC)], certified: [] } });
    expect(report.judge.corrected_pass_rates).toEqual([]);
    const reason = report.reasons.find((r: { code: string }) => r.code === 'judge_uncalibrated');
    expect(reason.message).toContain(rubricScope(SUITE_RUBRIC));
    for (const step of ['JUDGE_PROVIDER', 'evals label', 'evals calibrate', 'evals gate']) expect(reason.message).toContain(step);
  });

  it("the rubric's own certified scope passes, and the report carries the corrected pass rate of the judged cases with its interval and denominators", async () => {
    const { gate, stores } = setup();
    stores.calibrationScope = rubricScope(SUITE_RUBRIC);
    const report: Report = await gate.gate(DEFAULT_PROJECT, request('judged', { run_id: 'r2' }));
    expect(report.recorded_verdict).toBe('pass');
    expect(report.judge.scopes).toMatchObject({ uncovered: [], certified: [{ scope: rubricScope(SUITE_RUBRIC), report_id: 'report-1' }] });
    // The fake judge passed both judge cases; the fake calibration has Se 45/50, Sp 40/50.
    const expected = correctedPassRate({ x: 2, n: 2, se: { x: 45, n: 50 }, sp: { x: 40, n: 50 } });
    expect(report.judge.corrected_pass_rates).toEqual([
      expect.objectContaining({ scope: rubricScope(SUITE_RUBRIC), apparent: { passed: 2, n: 2, rate: 1 }, sensitivity: { x: 45, n: 50 }, specificity: { x: 40, n: 50 }, rate: expected.point, lower: expected.lower, upper: expected.upper, level: 0.95 }),
    ]);
    // Rogan-Gladen by hand, clamped: (1 + 0.8 - 1) / (0.9 + 0.8 - 1) > 1.
    expect(expected.point).toBe(1);
  });

  it('no judge configured: one label per cause - judge_not_configured in the gate as in a run, never judge_credential_missing', async () => {
    const { gate, runs } = setup(null);
    const report: Report = await gate.gate(DEFAULT_PROJECT, request('judged', { run_id: 'r3' }));
    expect(RunModel.judgeSkipLabel((await runs.load('r3')).state)).toBe('judge_not_configured');
    expect(report.judge).toMatchObject({ skipped: 'judge_not_configured', cases_not_scored: 2 });
    expect(report.cases.filter((c: { label: string }) => c.label === 'judge_not_configured')).toHaveLength(2);
    expect(report.warnings.map((w: { code: string }) => w.code)).not.toContain('judge_credential_missing');
    const reason = report.reasons.find((r: { code: string }) => r.code === 'judge_uncalibrated');
    expect(reason.message).toContain('no judge is configured');
    expect(reason.message).toContain('JUDGE_PROVIDER');
  });
});
