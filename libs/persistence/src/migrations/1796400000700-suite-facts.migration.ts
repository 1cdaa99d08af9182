import type { MigrationInterface, QueryRunner } from 'typeorm';
import { applyEventAuthorship } from '../ownership';
import { SuiteEvents } from '../suite-stream';
import { DEFAULT_PROJECT } from '@evals/contracts';
import { CASE_COLUMNS, caseRecordOf, toVersion, type SuiteCaseRecord } from '../suite.repository';

/** Cases read and paged at a time: the ingestion's insert batch, so no version is ever held whole. */
const BATCH = 2_000;

/**
 * Issue 27: the worker, the regression app and the read model learn a suite version from its events
 * (`suite.published`, then its case pages) instead of reading the ingestion's suite tables. Every version
 * stored before this release gets its stream now, as a push writes it - head from the row (its created_at
 * included), pages from its cases in ordinal order, a batch at a time. A version whose stream exists is left
 * alone, so a second run writes nothing. A partial index finds a key's latest version; the authorship
 * trigger learns the two types.
 */
export class SuiteFacts1796400000700 implements MigrationInterface {
  name = 'SuiteFacts1796400000700';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX IF NOT EXISTS events_suite_published ON events ((data->>'suite_key'), ((data->>'version')::int)) WHERE type = 'suite.published'`);
    const versions = await q.query(
      `SELECT * FROM suite_versions v
       WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.stream_id = 'suite-' || v.suite_key || '@' || v.version)
       ORDER BY v.created_at, v.suite_key, v.version`,
    );
    const events = new SuiteEvents();
    for (const row of versions) {
      const head = toVersion(row);
      await events.published(q, { ...head, created_at: head.created_at! });
      for (let written = 0, ordinal = 0; ; ) {
        const batch = await casesFrom(q, head.suite_key, head.version, ordinal);
        if (batch.length === 0) break;
        await events.pages(q, DEFAULT_PROJECT, head.suite_key, head.version, batch.map(({ ordinal: _, ...c }) => c), written);
        written += batch.length;
        ordinal = batch[batch.length - 1].ordinal + 1;
      }
    }
    const [{ schema }] = (await q.query('SELECT current_schema() AS schema')) as Array<{ schema: string }>;
    await applyEventAuthorship(q, schema);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS events_suite_published`);
  }
}

/**
 * A batch of a version's cases from `ordinal` on, as this migration's schema has them: before projects
 * (Projects1796600000000), so the query is this migration's own and never changes with the repository.
 */
async function casesFrom(q: QueryRunner, suiteKey: string, version: number, ordinal: number): Promise<Array<SuiteCaseRecord & { readonly ordinal: number }>> {
  const rows = await q.query(
    `SELECT ordinal, ${CASE_COLUMNS} FROM suite_cases WHERE suite_key = $1 AND suite_version = $2 AND ordinal >= $3 ORDER BY ordinal LIMIT $4`,
    [suiteKey, version, ordinal, BATCH],
  );
  return rows.map((r: any) => ({ ...caseRecordOf(r), ordinal: r.ordinal }));
}
