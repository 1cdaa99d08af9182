import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Regression (G1-G6): one decision per completed run, the baseline pins, and the central findings.
 * Decisions and findings are evidence of past verdicts, so append-only; pins are configuration and move.
 */
export class Regression1764461000000 implements MigrationInterface {
  name = 'Regression1764461000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE run_verdicts (
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
        pass_threshold  double precision NOT NULL,
        scorer_versions jsonb            NOT NULL,
        verdict         text             NOT NULL,
        baseline_run_id text,
        baseline_choice text,
        comparison      jsonb,
        decided_at      timestamptz      NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX run_verdicts_subject ON run_verdicts (suite_key, subject_kind, subject_id, completed_at DESC)`);

    await q.query(`
      CREATE TABLE baseline_pins (
        suite_key    text        NOT NULL,
        subject_kind text        NOT NULL,
        subject_id   text        NOT NULL,
        variant      text        NOT NULL DEFAULT '',
        run_id       text        NOT NULL,
        pinned_at    timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (suite_key, subject_kind, subject_id, variant)
      )`);

    await q.query(`
      CREATE TABLE findings (
        finding_id  uuid        PRIMARY KEY,
        kind        text        NOT NULL,
        run_id      text        NOT NULL UNIQUE,
        payload     jsonb       NOT NULL,
        occurred_at timestamptz NOT NULL
      )`);

    for (const table of ['run_verdicts', 'findings']) {
      await q.query(`CREATE TRIGGER ${table}_append_only BEFORE UPDATE OR DELETE ON ${table} FOR EACH ROW EXECUTE FUNCTION evals_refuse_mutation()`);
      await q.query(`CREATE TRIGGER ${table}_no_truncate BEFORE TRUNCATE ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION evals_refuse_mutation()`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS findings`);
    await q.query(`DROP TABLE IF EXISTS baseline_pins`);
    await q.query(`DROP TABLE IF EXISTS run_verdicts`);
  }
}
