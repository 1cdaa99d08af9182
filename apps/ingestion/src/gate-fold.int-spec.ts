import { randomUUID } from 'node:crypto';
import { DEFAULT_PROJECT } from '@evals/contracts';
import { caseOutcomeOf, encodeCaseOutcomes, foldRunView, parseRunEvent, runStreamId, type RunComparedV1, type RunEvent, type RunOpenedV1 } from '@evals/domain';
import {
  BudgetRepository,
  createDataSource,
  EventStore,
  EVIDENCE_COLUMNS,
  GateListQueries,
  GateRepository,
  insertEvidence,
  JudgeStatusRepository,
  appRole,
  appSchema,
  migrate,
  type EvidenceRow,
  type NewEvent,
} from '@evals/persistence';
import { RunProgress } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { createTestSchema, type TestSchema } from '../../../test/support/isolation';
import { testServers } from '../../../test/support/servers';
import type { IngestionConfig } from './config';
import { GateBudget } from './gate-budget';
import { GateJudgePolicy } from './gate-judge-policy';
import { GateRuns } from './gate-runs';
import { GateVerdicts } from './gate-verdicts';
import { GateService } from './gate.service';
import { IntakeError } from './intake-error';
import type { RunIntakeService } from './run-intake.service';
import { RunStreams } from './run-streams';
import { RunWaiter } from './run-waiter';
import { SuiteCatalogService } from './suite-catalog.service';

const NOW = new Date('2026-12-01T10:00:00.000Z');
const CASES = ['c0', 'c1', 'c2', 'c3'];

/** The suite every gate here runs, pushed into each project that needs it. */
const foldSuite = () => ({
  key: 'fold-suite',
  default_scorer: { type: 'exact' },
  pass_threshold: 0.75,
  regression_threshold: 0.1,
  golden_fixtures: false,
  cases: CASES.map((id) => ({ id, input: 'q', expected: 'yes', tags: [] })),
});

/**
 * Issue 27 (ADR 0006): the gate and the run waiter learn a run's state, EvalResult and regression verdict by
 * folding its stream in the shared log - here with the read model's tables empty (nothing ever projected) and
 * the ingestion connected as its own role, to which those tables are not even visible. Real PostgreSQL.
 */
describe('integration: the gate answers from the run\'s stream, never the read model (issue 27)', () => {
  let schema: TestSchema;
  let admin: DataSource;
  let ingestion: DataSource;
  const store = new EventStore();
  const config = { runTimeoutMs: 500, judge: null, judgeEstimatedOutputTokens: 400 } as unknown as IngestionConfig;
  const clock = { now: () => NOW };
  let gate: GateService;
  let waiter: RunWaiter;
  let suiteVersion: number;

  const event = (type: string, data: object, minute: number): NewEvent => ({
    type,
    version: 1,
    data,
    metadata: { message_id: randomUUID(), correlation_id: 'corr-fold', causation_id: randomUUID(), occurred_at: new Date(NOW.getTime() - (60 - minute) * 60_000).toISOString() },
  });

  /** A run of the suite as the apps write it: opened, sealed, scored by the worker (with its evidence); compared unless `compared` is null. */
  async function seedRun(runId: string, passed: number, compared: Omit<RunComparedV1, 'run_id'> | null): Promise<NewEvent[]> {
    const opened: RunOpenedV1 = {
      run_id: runId,
      suite_key: 'fold-suite',
      suite_version: suiteVersion,
      suite_content_hash: 'sha256:fold',
      pass_threshold: 0.75,
      regression_threshold: 0.1,
      subject_kind: 'agent',
      subject_id: 'fold-bot',
      variant: null,
      baseline_run_id: null,
      source: 'ci',
      case_count: CASES.length,
      scorer_versions: { exact: '1.0.0' },
    };
    const rows: EvidenceRow[] = CASES.map((case_id, i) => ({
      run_id: runId,
      case_id,
      scorer: 'exact',
      scorer_version: '1.0.0',
      score: i < passed ? 1 : 0,
      passed: i < passed,
      label: i < passed ? 'match' : 'mismatch',
      detail_hash: null,
      output_chars: 3,
      scored_at: NOW.toISOString(),
    }));
    await insertEvidence(admin, rows, EVIDENCE_COLUMNS);
    // ... and its cases.scored v3 in the log, one batch's stream, as the worker appends it with the evidence.
    await store.append(
      admin,
      `${runStreamId(runId)}.cases.b1`,
      0,
      encodeCaseOutcomes(runId, rows.map(caseOutcomeOf)).map((data) => ({ type: 'cases.scored', version: 3, data, metadata: { message_id: randomUUID(), correlation_id: 'corr-fold', causation_id: randomUUID(), occurred_at: NOW.toISOString() } })),
    );
    const events = [
      event('run.opened', opened, 1),
      event('run.sealed', { run_id: runId }, 2),
      event('run.scored', { run_id: runId, n: CASES.length, passed, score_sum: passed, missing_count: 0, missing_case_ids: [] }, 3),
      ...(compared ? [event('run.compared', { run_id: runId, ...compared }, 4)] : []),
    ];
    // Appended as the admin: the authorship trigger checks the apps' roles, and each of these is another app's.
    await store.append(admin, runStreamId(runId), 0, events);
    return events;
  }

  const regressed = (baseline: string): Omit<RunComparedV1, 'run_id'> => ({
    verdict: 'regressed',
    completeness: 'complete',
    baseline_run_id: baseline,
    chosen_by: 'automatic',
    comparison: { score_drop: 0.75, run: { passed: 1, n: 4 }, baseline: { passed: 4, n: 4 } },
    finding_id: randomUUID(),
  });

  beforeAll(async () => {
    schema = await createTestSchema('gatefold');
    admin = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize: 2 });
    await admin.initialize();
    await migrate(admin);
    const url = new URL(testServers.postgres.url);
    url.username = appRole('ingestion');
    url.password = '';
    ingestion = createDataSource({ url: url.toString(), schema: schema.schema, poolSize: 4 });
    await ingestion.initialize();

    const suites = new SuiteCatalogService(ingestion);
    const pushed = await suites.push(DEFAULT_PROJECT, foldSuite());
    suiteVersion = pushed.version.version;

    const logger = { event: () => undefined };
    const budget = new GateBudget(ingestion, new BudgetRepository(), clock, logger, config);
    waiter = new RunWaiter(ingestion, config, new RunProgress());
    // An existing run is gated: nothing is opened, so the intake is never asked.
    const intake = {} as RunIntakeService;
    const streams = new RunStreams(ingestion, store, {} as never, clock, { uuid: () => randomUUID() });
    const runs = new GateRuns(suites, intake, waiter, streams);
    let next = 0;
    gate = new GateService(runs, new GateJudgePolicy(ingestion, config, new JudgeStatusRepository(), budget), new GateVerdicts(ingestion, new GateRepository(), budget, clock), clock, {
      uuid: () => `00000000-0000-4000-8000-${String(++next).padStart(12, '0')}`,
    });
  });

  afterAll(async () => {
    await ingestion?.destroy();
    await admin?.destroy();
    await schema?.drop();
  });

  it('the read model is empty, and its tables are out of the ingestion role\'s reach', async () => {
    const readModel = appSchema(schema.schema, 'read_model');
    for (const table of ['runs', 'eval_results', 'read_run_verdicts']) {
      expect(await admin.query(`SELECT count(*)::int AS n FROM "${readModel}".${table}`)).toEqual([{ n: 0 }]);
      // Unqualified it is not on the role's path at all (no USAGE on the schema); qualified it is refused.
      await expect(ingestion.query(`SELECT 1 FROM ${table}`)).rejects.toMatchObject({ code: '42P01' });
      await expect(ingestion.query(`SELECT 1 FROM "${readModel}".${table}`)).rejects.toMatchObject({ code: '42501' });
    }
  });

  it('gates an existing run on its folded verdict: fail, regressed, with the run\'s counts and cases', async () => {
    await seedRun('fold-base', 4, { verdict: 'no_baseline', completeness: 'complete', baseline_run_id: null, chosen_by: null, comparison: null, finding_id: null });
    const events = await seedRun('fold-cand', 1, regressed('fold-base'));

    const report = (await gate.gate(DEFAULT_PROJECT, { suite_key: 'fold-suite', subject_kind: 'agent', subject_id: 'fold-bot', run_id: 'fold-cand' })) as Record<string, any>;
    expect(report).toMatchObject({ recorded_verdict: 'fail', effective_verdict: 'fail' });
    expect(report.reasons.map((r: { code: string }) => r.code)).toContain('regressed');
    expect(report.run).toMatchObject({ run_id: 'fold-cand', suite_version: suiteVersion, n: 4, passed: 1, pass_rate: 0.25, completeness: 'complete' });
    expect(report.comparison).toMatchObject({ verdict: 'regressed', baseline_run_id: 'fold-base', chosen_by: 'automatic', score_drop: 0.75 });
    expect(report.cases.map((c: { case_id: string; passed: boolean }) => [c.case_id, c.passed])).toEqual([['c0', true], ['c1', false], ['c2', false], ['c3', false]]);

    // The view the waiter answers POST /v1/runs with: the EvalResult exactly as the read model would record it.
    const folded = foldRunView(events.map((e) => ({ event: parseRunEvent(e) as RunEvent, occurred_at: e.metadata.occurred_at })));
    const view = await waiter.completed('fold-cand', { includeCases: true });
    expect(view.eval_result).toEqual(folded.eval_result);
    expect(view.eval_result).toMatchObject({ run_id: 'fold-cand', passed: false, occurred_at: events[2]!.metadata.occurred_at, metrics: { n: 4, passed: 1, pass_rate: 0.25 } });
    expect(view.regression).toMatchObject({ verdict: 'regressed', baseline_eligible: false, baseline_ineligible_reason: 'regressed' });
    expect(view.cases).toHaveLength(4);

    // The gate list: the recorded gate with both verdicts, from the ingestion's own gate_verdicts.
    const list = await new GateListQueries().list(ingestion, DEFAULT_PROJECT, { run_id: ['fold-cand'] }, 0, 10);
    expect(list.items).toEqual([expect.objectContaining({ gate_id: report.gate_id, run_id: 'fold-cand', recorded_verdict: 'fail', effective_verdict: 'fail', reasons: expect.arrayContaining(['regressed']) })]);
  });

  it('a run scored but not compared yet is pending; the waiter answers once run.compared reaches the log', async () => {
    await seedRun('fold-late', 4, null);
    const early = await gate.gate(DEFAULT_PROJECT, { suite_key: 'fold-suite', subject_kind: 'agent', subject_id: 'fold-bot', run_id: 'fold-late' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(early).toBeInstanceOf(IntakeError);
    expect(early).toMatchObject({ code: 'RUN_PENDING' });

    const waiting = waiter.completed('fold-late');
    await store.append(admin, runStreamId('fold-late'), 3, [event('run.compared', { run_id: 'fold-late', verdict: 'no_regression', completeness: 'complete', baseline_run_id: 'fold-base', chosen_by: 'automatic', comparison: null, finding_id: null }, 5)]);
    const view = await waiting;
    expect(view.regression).toMatchObject({ verdict: 'no_regression', baseline_eligible: true });
    expect(view.eval_result).toMatchObject({ run_id: 'fold-late', passed: true });

    const report = (await gate.gate(DEFAULT_PROJECT, { suite_key: 'fold-suite', subject_kind: 'agent', subject_id: 'fold-bot', run_id: 'fold-late' })) as Record<string, any>;
    expect(report).toMatchObject({ recorded_verdict: 'pass', comparison: { verdict: 'no_regression' } });
  });

  it('an unknown run is UNKNOWN_RUN, as before', async () => {
    await expect(gate.gate(DEFAULT_PROJECT, { suite_key: 'fold-suite', subject_kind: 'agent', subject_id: 'fold-bot', run_id: 'fold-nope' })).rejects.toMatchObject({ code: 'UNKNOWN_RUN' });
  });

  it("issue 30: another project's gate and run are not found from a project with the same suite key; its gates list only its own", async () => {
    const other = 'fold-other';
    await admin.query(`INSERT INTO projects (id, name) VALUES ($1, 'other') ON CONFLICT DO NOTHING`, [other]);
    // The same suite key in the other project, so a miss cannot be its suite's.
    await new SuiteCatalogService(ingestion).push(other, foldSuite());
    const gated = (await gate.gate(DEFAULT_PROJECT, { suite_key: 'fold-suite', subject_kind: 'agent', subject_id: 'fold-bot', run_id: 'fold-cand' })) as Record<string, any>;
    expect(gated.recorded_verdict).toBe('fail');

    // The default project's run, gated from the other project: the answer of a run that does not exist.
    const foreignRun = await gate.gate(other, { suite_key: 'fold-suite', subject_kind: 'agent', subject_id: 'fold-bot', run_id: 'fold-cand' }).catch((e: IntakeError) => e);
    const missingRun = await gate.gate(other, { suite_key: 'fold-suite', subject_kind: 'agent', subject_id: 'fold-bot', run_id: 'fold-nope' }).catch((e: IntakeError) => e);
    expect(foreignRun).toMatchObject({ code: 'UNKNOWN_RUN', message: 'no run fold-cand', field: 'run_id' });
    expect((missingRun as IntakeError).message.replace('fold-nope', 'fold-cand')).toBe((foreignRun as IntakeError).message);

    // Its gate: not found from the other project, by status or override (the audit gets no row), and not listed.
    const verdicts = new GateVerdicts(ingestion, new GateRepository(), new GateBudget(ingestion, new BudgetRepository(), clock, { event: () => undefined }, config), clock);
    await expect(verdicts.status(other, gated.gate_id)).rejects.toMatchObject({ code: 'GATE_NOT_FOUND', message: `no gate ${gated.gate_id}` });
    await expect(verdicts.override(other, gated.gate_id, 'accepted by the other team, who should not be able to', { key_id: 'k-other', name: 'other' })).rejects.toMatchObject({ code: 'GATE_NOT_FOUND' });
    expect(await admin.query(`SELECT count(*)::int AS n FROM gate_overrides WHERE gate_id = $1`, [gated.gate_id])).toEqual([{ n: 0 }]);
    expect(await verdicts.status(DEFAULT_PROJECT, gated.gate_id)).toMatchObject({ gate_id: gated.gate_id, overrides: [] });
    const lists = new GateListQueries();
    expect((await lists.list(ingestion, other, { run_id: ['fold-cand'] }, 0, 10)).items).toEqual([]);
    expect((await lists.list(ingestion, other, {}, 0, 10)).total).toBe(0);
    expect((await lists.list(ingestion, DEFAULT_PROJECT, { run_id: ['fold-cand'] }, 0, 10)).items.map((g) => g.gate_id)).toContain(gated.gate_id);
    // The overridden gate in its own project: the audit row is written.
    await verdicts.override(DEFAULT_PROJECT, gated.gate_id, 'accepted by the release manager for the hotfix', { key_id: 'k', name: 'lead' });
    expect(await admin.query(`SELECT count(*)::int AS n FROM gate_overrides WHERE gate_id = $1`, [gated.gate_id])).toEqual([{ n: 1 }]);
  });
});
