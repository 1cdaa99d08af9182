import { SuiteEvents, type Sql } from '@evals/persistence';

/**
 * A suite version of `project` as the regression app learns it (issue 27): its stream in the shared log,
 * `suite.published` then its case pages - never the ingestion's tables. Every case uses `defaultScorer`.
 */
export async function publishSuite(sql: Sql, project: string, key: string, version: number, defaultScorer: Record<string, unknown>, caseIds: readonly string[]): Promise<void> {
  const events = new SuiteEvents();
  await events.published(sql, {
    project,
    suite_key: key,
    version,
    content_hash: `${project}-${key}-${version}`.padEnd(64, '0'),
    description: null,
    default_scorer: defaultScorer,
    pass_threshold: 0.8,
    regression_threshold: 0.1,
    golden_fixtures: false,
    case_count: caseIds.length,
    created_at: '2026-12-01T00:00:00.000Z',
  });
  await events.pages(
    sql,
    project,
    key,
    version,
    caseIds.map((case_id) => ({ case_id, input: `question ${case_id}`, scorer: null, tags: [] })),
    0,
  );
}
