import { randomUUID } from 'node:crypto';
import { RUN_EVENTS, runStreamId, type RunOpenedV1 } from '@evals/domain';
import { createDataSource, EventStore, migrate } from '@evals/persistence';
import type { DataSource } from 'typeorm';
import { createTestSchema, type TestSchema } from '../../../test/support/isolation';
import { testServers } from '../../../test/support/servers';
import { appendCaseResults } from './case-results.testing';
import { RegressionService } from './regression.service';

const opened = (run_id: string): RunOpenedV1 => ({
  run_id,
  suite_key: 'judged',
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

const meta = (at: string) => {
  const id = randomUUID();
  return { message_id: id, correlation_id: id, causation_id: id, occurred_at: at };
};

// G4 beyond the seeds: the comparison with the baseline names a change of judge model pin or prompt version.
describe('integration: what changed between two judged runs (G4: judge model pin, prompt version)', () => {
  let schema: TestSchema;
  let ds: DataSource;
  const events = new EventStore();
  const service = new RegressionService({ uuid: () => randomUUID() });

  beforeAll(async () => {
    schema = await createTestSchema('changes');
    ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize: 2 });
    await ds.initialize();
    await migrate(ds);
  });

  afterAll(async () => {
    await ds?.destroy();
    await schema?.drop();
  });

  async function judgedRun(runId: string, model: string, promptVersion: string, at: string) {
    const scored = { run_id: runId, n: 2, passed: 2, score_sum: 1.8, missing_case_ids: [] };
    await events.append(ds, runStreamId(runId), 0, [
      { type: RUN_EVENTS.opened, version: 1, data: opened(runId), metadata: meta(at) },
      { type: RUN_EVENTS.sealed, version: 1, data: { run_id: runId }, metadata: meta(at) },
      { type: RUN_EVENTS.scored, version: 1, data: scored, metadata: meta(at) },
    ]);
    await appendCaseResults(
      ds,
      runId,
      ['c1', 'c2'].map((case_id) => ({
        run_id: runId,
        case_id,
        scorer: 'llm_judge',
        scorer_version: '1.0.0',
        score: 0.9,
        passed: true,
        label: 'judge_pass',
        detail_hash: 'h',
        output_chars: 3,
        scored_at: at,
        judge: { judge_model: model, prompt_version: promptVersion, judge_cost_usd: 0.001, judge_input_tokens: 100, judge_output_tokens: 10, judge_cached: null },
      })),
      at,
    );
    return ds.transaction((m) => service.decide(m, { data: scored, metadata: meta(at) }));
  }

  it('reports the judge model and prompt version of baseline and run when they differ, nothing when they match', async () => {
    await judgedRun('j1', 'gpt-4o-2024-05-13', 'judge-v1', '2026-11-30T01:00:00.000Z');
    const same = await judgedRun('j2', 'gpt-4o-2024-05-13', 'judge-v1', '2026-11-30T02:00:00.000Z');
    expect(same).toMatchObject({ kind: 'recorded', row: { baseline_run_id: 'j1' } });
    expect((same as any).row.comparison.changes).toMatchObject({ judge_model: null, prompt_version: null, anything_changed: false });
    const changed = await judgedRun('j3', 'gpt-4o-2024-08-06', 'judge-v2', '2026-11-30T03:00:00.000Z');
    expect((changed as any).row.comparison.changes).toMatchObject({
      judge_model: { baseline: 'gpt-4o-2024-05-13', run: 'gpt-4o-2024-08-06' },
      prompt_version: { baseline: 'judge-v1', run: 'judge-v2' },
      anything_changed: true,
    });
  });
});
