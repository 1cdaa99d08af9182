import { randomUUID } from 'node:crypto';
import { encodeCaseOutcomes, runStreamId, type CaseOutcome } from '@evals/domain';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The stream of a run's backfilled results: one per run, so a second run of the migration finds it. */
export function backfillStreamId(runId: string): string {
  return `${runStreamId(runId)}.cases.backfill`;
}

/**
 * Issue 27: per-case results cross as `cases.scored` v3, so the regression app and the read model stop
 * reading the scoring worker's `evidence`. This creates the read model's `read_case_results` (derived from
 * the log, truncated and replayed by a rebuild) and the partial index the regression app folds a run's
 * results by, and upgrades an existing database in place, no row lost: runs scored before v3 have only
 * v1/v2 events (v2 carries counts, not cases), so every run with evidence and no v3 event gets
 *  - its evidence rows as v3 events marked `backfill` (the counts were folded from its v1/v2 events already;
 *    folders take the results only), on the stream `run-<id>.cases.backfill`, without outbox rows - no live
 *    consumer needs them: the regression app reads the log, and
 *  - the same rows in `read_case_results`, which the live read model would otherwise never get (the events
 *    are not relayed); a rebuild later derives the same rows from the events.
 * Run as the admin before the new apps start (the deploy's migration job): a worker of the previous release
 * still writing v2 afterwards writes results no consumer sees.
 */
export class CaseOutcomes1796500000000 implements MigrationInterface {
  name = 'CaseOutcomes1796500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS read_case_results (
        run_id          text             NOT NULL,
        case_id         text             NOT NULL,
        scorer          text             NOT NULL,
        scorer_version  text             NOT NULL,
        score           double precision NOT NULL CHECK (score >= 0 AND score <= 1),
        passed          boolean          NOT NULL,
        label           varchar(120)     NOT NULL,
        judge_model     text,
        prompt_version  text,
        scored_at       timestamptz      NOT NULL,
        PRIMARY KEY (run_id, case_id)
      )`);
    await q.query(`CREATE INDEX IF NOT EXISTS events_cases_scored_run ON events ((data->>'run_id'), position) WHERE type = 'cases.scored'`);
    const runs: Array<{ run_id: string }> = await q.query(
      `SELECT DISTINCT ev.run_id FROM evidence ev
       WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.type = 'cases.scored' AND e.data->>'run_id' = ev.run_id AND e.version = 3)
       ORDER BY ev.run_id`,
    );
    const now = new Date().toISOString();
    for (const { run_id } of runs) {
      const rows: CaseOutcome[] = (
        await q.query(
          `SELECT case_id, scorer, scorer_version, score, passed, label, judge_model, prompt_version,
                  to_char(scored_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS scored_at
           FROM evidence WHERE run_id = $1 ORDER BY case_id`,
          [run_id],
        )
      ).map((r: CaseOutcome) => ({ ...r, score: Number(r.score) }));
      const events = encodeCaseOutcomes(run_id, rows, { backfill: true });
      for (const [i, data] of events.entries()) {
        const messageId = randomUUID();
        const metadata = { message_id: messageId, correlation_id: run_id, causation_id: this.name, occurred_at: now };
        await q.query(
          `INSERT INTO events (stream_id, stream_version, type, version, data, metadata, message_id) VALUES ($1, $2, 'cases.scored', 3, $3::jsonb, $4::jsonb, $5::uuid)`,
          [backfillStreamId(run_id), i + 1, JSON.stringify(data), JSON.stringify(metadata), messageId],
        );
      }
    }
    await q.query(`INSERT INTO read_case_results (run_id, case_id, scorer, scorer_version, score, passed, label, judge_model, prompt_version, scored_at)
      SELECT run_id, case_id, scorer, scorer_version, score, passed, label, judge_model, prompt_version, scored_at FROM evidence
      ON CONFLICT (run_id, case_id) DO NOTHING`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS events_cases_scored_run`);
    await q.query(`DROP TABLE IF EXISTS read_case_results`);
  }
}
