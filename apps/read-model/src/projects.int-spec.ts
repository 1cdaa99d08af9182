import { randomUUID } from 'node:crypto';
import { decodeMessage, DEFAULT_PROJECT, SUBJECTS } from '@evals/contracts';
import { rubricScope } from '@evals/domain';
import {
  CaseResultRepository,
  createDataSource,
  DashboardQueries,
  JudgeCorrectionQueries,
  migrate,
  OutboxRelay,
  RunQueries,
  RunReadModelRepository,
  SuiteEvents,
  type JudgeStatusRepository,
  type StoredEvent,
} from '@evals/persistence';
import type { DataSource } from 'typeorm';
import { createTestSchema, type TestSchema } from '../../../test/support/isolation';
import { testServers } from '../../../test/support/servers';
import { rebuildReadModel } from './rebuild-read-model';
import { result, RunScript } from './run-events.testing';
import { RunProjector } from './run.projector';

const TEAM_A = 'team-a';
const TEAM_B = 'team-b';

/**
 * Issue 30 (docs/adr/0009-projects.md) in the read model's projection and queries: runs of two projects on
 * the same suite key and subject, each run's project folded from its own run.opened. Every row carries it,
 * every query answers within one project only (another project's run is a missing one), the EvalResult is
 * announced on the project's subject, and a rebuild from the log gives the same rows. Real PostgreSQL.
 */
describe('integration: read model scoped by project (issue 30)', () => {
  let schema: TestSchema;
  let ds: DataSource;
  const projector = new RunProjector({ uuid: () => randomUUID() });
  const repo = new RunReadModelRepository();
  const log: StoredEvent[] = [];

  const apply = (events: ReadonlyArray<object | null>) => ds.transaction((m) => projector.apply(m, events));

  /** A completed and compared run: same suite key, version and subject in every project. */
  async function decidedRun(runId: string, project: string | undefined, start: number, passed: number): Promise<void> {
    const s = new RunScript(runId, project === undefined ? {} : { project }, start);
    log.push(await s.appendRun(ds, s.openedEvent()));
    log.push(await s.appendCases(ds, s.resultsEvent([result('c1', 1), result('c2', passed >= 2 ? 1 : 0, passed >= 2), result('c3', 0, false), result('c4', 0, false)])));
    log.push(await s.appendRun(ds, s.sealedEvent()));
    log.push(await s.appendRun(ds, s.scoredEvent(4, passed, passed)));
    log.push(await s.appendRun(ds, s.comparedEvent({ verdict: 'no_baseline', completeness: 'complete', baseline_run_id: null, chosen_by: null, comparison: null, finding_id: null })));
  }

  beforeAll(async () => {
    schema = await createTestSchema('rmprojects');
    ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize: 4 });
    await ds.initialize();
    await migrate(ds);
    // Same suite key `support-triage`, version 3 and subject agent/support-bot in all three projects.
    await decidedRun('pa-1', TEAM_A, 0, 1);
    await decidedRun('pb-1', TEAM_B, 10, 2);
    await decidedRun('pd-1', undefined, 20, 1); // opened before projects: `default`
    await decidedRun('pa-2', TEAM_A, 30, 2);
    const outcome = await apply(log);
    expect(outcome.deadLettered + outcome.deferred).toBe(0);
  });

  afterAll(async () => {
    await ds?.destroy();
    await schema?.drop();
  });

  it("writes each run's project, from its run.opened (default when absent), on runs and read_run_verdicts", async () => {
    const rows = (table: string) => ds.query(`SELECT run_id, project FROM ${table} ORDER BY run_id`);
    const expected = [
      { run_id: 'pa-1', project: TEAM_A },
      { run_id: 'pa-2', project: TEAM_A },
      { run_id: 'pb-1', project: TEAM_B },
      { run_id: 'pd-1', project: DEFAULT_PROJECT },
    ];
    expect(await rows('runs')).toEqual(expected);
    expect(await rows('read_run_verdicts')).toEqual(expected);
    // The document says so too; a default run's document is the one it was before projects (no field).
    expect((await repo.load(ds, 'pa-1'))?.project).toBe(TEAM_A);
    expect(Object.keys((await repo.load(ds, 'pd-1')) ?? {})).not.toContain('project');
  });

  it('announces a non-default EvalResult on evals.result.recorded.<project> with metadata.project, a default one on the bare subject without it', async () => {
    const rows: Array<{ subject: string; payload: any }> = await ds.query(`SELECT subject, payload FROM outbox WHERE payload->>'type' = 'evals.result.recorded' ORDER BY id`);
    expect(rows.map((r) => [r.payload.data.run_id, r.subject, r.payload.metadata.project])).toEqual([
      ['pa-1', 'evals.result.recorded.team-a', TEAM_A],
      ['pb-1', 'evals.result.recorded.team-b', TEAM_B],
      ['pd-1', 'evals.result.recorded', undefined],
      ['pa-2', 'evals.result.recorded.team-a', TEAM_A],
    ]);
    expect(Object.keys(rows[2].payload.metadata).sort()).toEqual(['causation_id', 'correlation_id', 'message_id', 'occurred_at']);
    for (const r of rows) {
      const decoded = decodeMessage(r.subject, JSON.stringify(r.payload));
      expect(decoded.ok).toBe(true);
    }

    // The relay publishes each row on its own subject (the stream captures `evals.result.recorded.>`:
    // read-model.http.int-spec.ts, on JetStream).
    const published: string[] = [];
    const relay = new OutboxRelay(ds, { publish: async (subject) => void published.push(subject) }, { wireSubject: (s) => `pfx.${s}` });
    while ((await relay.tick()) > 0);
    expect(published.filter((s) => s.includes('result.recorded'))).toEqual([
      'pfx.evals.result.recorded.team-a',
      'pfx.evals.result.recorded.team-b',
      'pfx.evals.result.recorded',
      'pfx.evals.result.recorded.team-a',
    ]);
  });

  it("answers a run, its replay and its cases only within the run's project: another project's run is null, as a missing one", async () => {
    const runs = new RunQueries(ds);
    const dashboard = new DashboardQueries(ds);
    const view = await runs.run(TEAM_A, 'pa-1', { includeCases: true });
    expect(view?.run).toMatchObject({ run_id: 'pa-1', project: TEAM_A, status: 'completed' });
    expect(view?.eval_result?.run_id).toBe('pa-1');
    expect(view?.cases).toHaveLength(4);
    expect((await runs.replay(TEAM_A, 'pa-1'))?.map((f) => f.event)).toEqual(['case', 'case', 'case', 'case', 'summary']);
    expect((await dashboard.cases(TEAM_A, 'pa-1', {}, 0, 10))?.total).toBe(4);
    for (const other of [TEAM_B, DEFAULT_PROJECT]) {
      expect(await runs.run(other, 'pa-1', { includeCases: true })).toBeNull();
      expect(await runs.replay(other, 'pa-1')).toBeNull();
      expect(await dashboard.cases(other, 'pa-1', {}, 0, 10)).toBeNull();
    }
    // A default run is not seen from a project either.
    expect(await runs.run(TEAM_A, 'pd-1')).toBeNull();
    expect((await runs.run(DEFAULT_PROJECT, 'pd-1'))?.run.run_id).toBe('pd-1');
  });

  it("lists and counts only the project's own runs on the dashboard, filters included", async () => {
    const dashboard = new DashboardQueries(ds);
    const ids = async (project: string, filter = {}) => {
      const page = await dashboard.runs(project, filter, 0, 50);
      return { ids: page.items.map((r) => r.run_id), total: page.total };
    };
    expect(await ids(TEAM_A)).toEqual({ ids: ['pa-2', 'pa-1'], total: 2 });
    expect(await ids(TEAM_B)).toEqual({ ids: ['pb-1'], total: 1 });
    expect(await ids(DEFAULT_PROJECT)).toEqual({ ids: ['pd-1'], total: 1 });
    expect(await ids(TEAM_B, { suite_key: 'support-triage', subject_id: 'support-bot', verdict: 'no_baseline' })).toEqual({ ids: ['pb-1'], total: 1 });
    expect(await ids('team-c')).toEqual({ ids: [], total: 0 });
  });

  it('computes one scorecard per suite and subject per project: the same key and subject in two projects are two scorecards', async () => {
    const runs = new RunQueries(ds);
    const decided = async (project: string) => (await runs.decidedRuns(project, { suite_key: 'support-triage', subject_id: 'support-bot' }, 100)).map((h) => h.map((v) => v.run_id));
    expect(await decided(TEAM_A)).toEqual([['pa-2', 'pa-1']]);
    expect(await decided(TEAM_B)).toEqual([['pb-1']]);
    expect(await decided(DEFAULT_PROJECT)).toEqual([['pd-1']]);
    expect(await decided('team-c')).toEqual([]);
  });

  it('rebuilds the same rows, projects included, and announces no result of any project again', async () => {
    const snapshot = async () => ({
      runs: await ds.query(`SELECT * FROM runs ORDER BY run_id`),
      verdicts: await ds.query(`SELECT * FROM read_run_verdicts ORDER BY run_id`),
      results: await ds.query(`SELECT * FROM eval_results ORDER BY run_id`),
      cases: await ds.query(`SELECT * FROM read_case_results ORDER BY run_id, case_id`),
    });
    const before = await snapshot();
    const [{ n: outboxBefore }] = await ds.query(`SELECT count(*)::int AS n FROM outbox`);
    const report = await rebuildReadModel(ds, new RunProjector({ uuid: () => randomUUID() }), { pageSize: 3 });
    expect(report).toMatchObject({ runs: 4, evalResults: 4, verdicts: 4, published: 0, orphans: 0 });
    const after = await snapshot();
    expect(after).toEqual(before);
    expect(after.runs.map((r: { project: string }) => r.project)).toEqual([TEAM_A, TEAM_A, TEAM_B, DEFAULT_PROJECT]);
    const [{ n: outboxAfter }] = await ds.query(`SELECT count(*)::int AS n FROM outbox`);
    expect(outboxAfter).toBe(outboxBefore);
  });

  it("knows a result announced on a project's subject from the outbox alone: a rebuild without eval_results announces none again", async () => {
    await ds.query(`TRUNCATE eval_results`);
    const report = await rebuildReadModel(ds, new RunProjector({ uuid: () => randomUUID() }));
    expect(report).toMatchObject({ evalResults: 4, published: 0 });
    const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM outbox WHERE payload->>'type' = 'evals.result.recorded'`);
    expect(n).toBe(4);
  });

  it("corrects a judged run by the rubrics of its own project's suite version, not another project's of the same key", async () => {
    // The same suite key and version in team-a and default, each judging c1 with its own rubric.
    const suites = new SuiteEvents();
    for (const [project, rubric] of [[TEAM_A, 'rubric of team a'], [DEFAULT_PROJECT, 'rubric of default']] as const) {
      await suites.published(ds, {
        project,
        suite_key: 'support-triage',
        version: 3,
        content_hash: 'sha256:abc',
        description: null,
        default_scorer: { type: 'exact' },
        pass_threshold: 0.6,
        regression_threshold: 0.1,
        golden_fixtures: false,
        case_count: 1,
        created_at: '2026-11-30T08:00:00.000Z',
      });
      await suites.pages(ds, project, 'support-triage', 3, [{ case_id: 'c1', input: 'q', scorer: { type: 'llm_judge', rubric }, tags: [] }], 0);
    }
    const s = new RunScript('pj-a', { project: TEAM_A, case_count: 1 }, 40);
    const judged = { ...result('c1', 1), scorer: 'llm_judge', judge_model: 'judge-m', prompt_version: 'judge-v1' };
    await apply([await s.appendRun(ds, s.openedEvent()), await s.appendCases(ds, s.resultsEvent([judged])), await s.appendRun(ds, s.sealedEvent()), await s.appendRun(ds, s.scoredEvent(1, 1, 1))]);

    // Both rubrics certified for the pin (the judge's standing per project is the regression app's part).
    const rate = { value: 0.9, numerator: 45, denominator: 50, lower: 0.79, upper: 0.96 };
    const certified = (rubric: string) => ({ status: 'certified', scope: rubricScope(rubric), sensitivity: rate, specificity: rate });
    const statuses = { scopes: async () => [certified('rubric of team a'), certified('rubric of default')] } as unknown as JudgeStatusRepository;
    const cases = new CaseResultRepository();
    const corrections = new JudgeCorrectionQueries(cases, statuses);
    const scopes = async (project: string) => (await corrections.forRun(ds, { run_id: 'pj-a', project, suite_key: 'support-triage', suite_version: 3 })).map((c) => c.scope);
    expect(await scopes(TEAM_A)).toEqual([rubricScope('rubric of team a')]);
    expect(await scopes(DEFAULT_PROJECT)).toEqual([rubricScope('rubric of default')]);
    expect(await scopes(TEAM_B)).toEqual([]);
    // The run view takes the project from the run's document.
    const view = await new RunQueries(ds, undefined, cases, corrections).run(TEAM_A, 'pj-a');
    expect(view?.judge_corrected_pass_rates?.map((c) => c.scope)).toEqual([rubricScope('rubric of team a')]);
  });
});
