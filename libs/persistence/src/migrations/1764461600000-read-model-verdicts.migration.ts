import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The read model's own copy of each run's regression decision, projected from `run.compared` on the run's
 * stream (docs/read-model.md): the run views' `regression` and the scorecards read it, never the regression
 * app's `run_verdicts` (apps share events, not tables). Derived from the event log like `runs` and
 * `eval_results`, so mutable: a rebuild truncates it and replays it.
 */
export class ReadModelVerdicts1764461600000 implements MigrationInterface {
  name = 'ReadModelVerdicts1764461600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE read_run_verdicts (
        run_id          text PRIMARY KEY,
        suite_key       text             NOT NULL,
        suite_version   integer          NOT NULL,
        subject_kind    text             NOT NULL,
        subject_id      text             NOT NULL,
        variant         text,
        completed_at    timestamptz      NOT NULL,
        n               integer          NOT NULL,
        passed          integer          NOT NULL,
        score           double precision NOT NULL,
        verdict         text             NOT NULL CHECK (verdict IN ('regressed', 'inconclusive_noise', 'no_regression', 'no_baseline')),
        completeness    text             NOT NULL CHECK (completeness IN ('complete', 'incomplete', 'expired')),
        baseline_run_id text,
        chosen_by       text,
        comparison      jsonb,
        finding_id      uuid,
        position        bigint           NOT NULL
      )`);
    await q.query(`CREATE INDEX read_run_verdicts_subject ON read_run_verdicts (suite_key, subject_kind, subject_id, completed_at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS read_run_verdicts`);
  }
}
