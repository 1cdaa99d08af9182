import { randomUUID } from 'node:crypto';
import { DEFAULT_PROJECT, projectField } from '@evals/contracts';
import { RUN_EVENTS, runStreamId, type PairwiseRequest, type RunOpenedV1 } from '@evals/domain';
import type { LangChainJudge, PairwiseComparison } from '@evals/judge';
import { createDataSource, EventStore, migrate } from '@evals/persistence';
import { ApiError } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { createTestSchema, type TestSchema } from '../../../test/support/isolation';
import { testServers } from '../../../test/support/servers';
import { ComparisonService } from './comparison.service';
import { publishSuite } from './suite-log.testing';

const A = 'team-a';
const D = DEFAULT_PROJECT;

const opened = (run_id: string, project: string): RunOpenedV1 => ({
  run_id,
  ...projectField(project),
  suite_key: 'support',
  suite_version: 1,
  suite_content_hash: 'h',
  pass_threshold: 0.5,
  regression_threshold: 0.1,
  subject_kind: 'agent',
  subject_id: 'bot',
  variant: null,
  baseline_run_id: null,
  source: 'ci',
  case_count: 2,
  scorer_versions: { llm_judge: '1.0.0' },
});

/** A judge that prefers A in both orders and remembers the rubric of every pair it was shown. */
function stubJudge(rubrics: string[]): LangChainJudge {
  return {
    model: 'stub-judge',
    pairwisePromptVersion: 'pairwise-v1',
    credentialMissing: false,
    compare: async (request: PairwiseRequest): Promise<PairwiseComparison> => {
      rubrics.push(request.rubric);
      return { winner: 'a', position_consistent: true, ab: 'first', ba: 'second', model: 'stub-judge', prompt_version: 'pairwise-v1', usage: { input_tokens: 1, output_tokens: 1 }, usage_estimated: false, cost_usd: 0 };
    },
  } as unknown as LangChainJudge;
}

async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string; field?: string; status: number }> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ApiError) return { code: e.code, message: e.message, field: e.field, status: e.status };
    throw e;
  }
  throw new Error('expected a refusal');
}

/**
 * Issue 30 (ADR 0009): a pairwise comparison (J5) is of two runs of the caller's project - another project's
 * run is RUN_NOT_FOUND, as a missing one - judged against the suite of that key in the project, and its
 * report is read back only from that project.
 */
describe('integration: pairwise comparisons per project (J5, issue 30)', () => {
  let schema: TestSchema;
  let ds: DataSource;
  const rubrics: string[] = [];
  const service = new ComparisonService(stubJudge(rubrics));
  const outputs = [
    { case_id: 'c1', output: 'one' },
    { case_id: 'c2', output: 'two' },
  ];

  beforeAll(async () => {
    schema = await createTestSchema('cmpproj');
    ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize: 2 });
    await ds.initialize();
    await migrate(ds);
    // The same suite key in both projects: team-a's is judged, default's is not.
    await publishSuite(ds, A, 'support', 1, { type: 'llm_judge', rubric: 'Team a rubric.' }, ['c1', 'c2']);
    await publishSuite(ds, D, 'support', 1, { type: 'contains', value: 'x' }, ['c1', 'c2']);
    const events = new EventStore();
    for (const [id, project] of [['ca-1', A], ['ca-2', A], ['cd-1', D], ['cd-2', D]] as const) {
      const at = '2026-12-01T00:00:00.000Z';
      await events.append(ds, runStreamId(id), 0, [{ type: RUN_EVENTS.opened, version: 1, data: opened(id, project), metadata: { message_id: randomUUID(), correlation_id: randomUUID(), causation_id: randomUUID(), occurred_at: at } }]);
    }
  });

  afterAll(async () => {
    await ds?.destroy();
    await schema?.drop();
  });

  let stored: string;

  it("compares two runs of the caller's project against that project's suite, and stores the report in it", async () => {
    const answer = await service.compare(ds, A, { run_a: 'ca-1', run_b: 'ca-2', outputs_a: outputs, outputs_b: outputs });
    expect(answer).toMatchObject({ run_a: 'ca-1', run_b: 'ca-2', shared: 2 });
    expect(rubrics).toEqual(['Team a rubric.', 'Team a rubric.']);
    stored = answer.comparison_id;
    expect(await ds.query(`SELECT project FROM comparison_reports WHERE id = $1`, [stored])).toEqual([{ project: A }]);
    expect(await service.find(ds, A, stored)).toMatchObject({ comparison_id: stored, run_a: 'ca-1' });
  });

  it("another project's run is refused as a missing run is: RUN_NOT_FOUND naming only the id sent", async () => {
    const missing = await refusal(service.compare(ds, A, { run_a: 'ca-1', run_b: 'nowhere', outputs_a: outputs, outputs_b: outputs }));
    expect(missing).toEqual({ code: 'RUN_NOT_FOUND', message: 'no run nowhere', field: 'run_b', status: 404 });
    expect(await refusal(service.compare(ds, A, { run_a: 'ca-1', run_b: 'cd-1', outputs_a: outputs, outputs_b: outputs }))).toEqual({ ...missing, message: 'no run cd-1' });
    expect(await refusal(service.compare(ds, D, { run_a: 'ca-1', run_b: 'cd-1', outputs_a: outputs, outputs_b: outputs }))).toEqual({ ...missing, message: 'no run ca-1', field: 'run_a' });
  });

  it("default's runs of the same suite key are judged against default's suite, whose cases carry no rubric", async () => {
    expect(await refusal(service.compare(ds, D, { run_a: 'cd-1', run_b: 'cd-2', outputs_a: outputs, outputs_b: outputs }))).toMatchObject({ code: 'RUBRIC_REQUIRED' });
    const answer = await service.compare(ds, D, { run_a: 'cd-1', run_b: 'cd-2', outputs_a: outputs, outputs_b: outputs, rubric: 'Default rubric.' });
    expect(await service.find(ds, D, answer.comparison_id)).toMatchObject({ run_a: 'cd-1' });
  });

  it("another project's report answers what a missing one does", async () => {
    const missing = await refusal(service.find(ds, A, randomUUID()));
    expect(missing).toMatchObject({ code: 'COMPARISON_NOT_FOUND', status: 404 });
    expect(await refusal(service.find(ds, D, stored))).toEqual({ ...missing, message: `no comparison ${stored}` });
  });
});
