import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The judge (S3, J1-J6, D4): what each judged case records about its judge, and the judge's own evidence -
 * calibration sets and reports (J4), pairwise comparison reports (J5).
 *
 * - Evidence gains nullable judge columns: the exact model pin, the prompt version, tokens and cost of the
 *   call, and whether the verdict was a recorded one (J6). Never the reasoning (J2), never the output (D1).
 * - Calibration sets and their items are human labels: evidence, append-only. An item holds the output's
 *   hash and length; its text only in a golden set (D4), clamped to 4 000 characters by the handler and
 *   bounded here as a last line of defence.
 * - Calibration and comparison reports are append-only evidence (J4, J5): a newer report supersedes an
 *   older one for the same judge pin, never rewrites it.
 */
export class Judge1764461400000 implements MigrationInterface {
  name = 'Judge1764461400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE evidence
        ADD COLUMN judge_model         text,
        ADD COLUMN prompt_version      text,
        ADD COLUMN judge_cost_usd      double precision CHECK (judge_cost_usd >= 0),
        ADD COLUMN judge_input_tokens  integer CHECK (judge_input_tokens >= 0),
        ADD COLUMN judge_output_tokens integer CHECK (judge_output_tokens >= 0),
        ADD COLUMN judge_cached        boolean`);

    await q.query(`
      CREATE TABLE calibration_sets (
        id            uuid        PRIMARY KEY,
        name          text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
        golden        boolean     NOT NULL DEFAULT false,
        rubric        text        CHECK (rubric IS NULL OR char_length(rubric) BETWEEN 1 AND 20000),
        suite_key     text,
        suite_version integer,
        item_count    integer     NOT NULL CHECK (item_count >= 0),
        created_at    timestamptz NOT NULL DEFAULT now(),
        CHECK (rubric IS NOT NULL OR suite_key IS NOT NULL)
      )`);

    await q.query(`
      CREATE TABLE calibration_items (
        set_id        uuid    NOT NULL REFERENCES calibration_sets (id),
        item_id       text    NOT NULL,
        ordinal       integer NOT NULL,
        case_id       text,
        output_hash   text    NOT NULL CHECK (output_hash ~ '^[0-9a-f]{64}$'),
        human_verdict text    NOT NULL CHECK (human_verdict IN ('pass', 'fail')),
        output_chars  integer NOT NULL CHECK (output_chars >= 0),
        golden_output text    CHECK (golden_output IS NULL OR char_length(golden_output) <= 4000),
        golden_input  text    CHECK (golden_input IS NULL OR char_length(golden_input) <= 4000),
        PRIMARY KEY (set_id, item_id),
        UNIQUE (set_id, ordinal)
      )`);

    await q.query(`
      CREATE TABLE calibration_reports (
        id             uuid        PRIMARY KEY,
        set_id         uuid        NOT NULL REFERENCES calibration_sets (id),
        judge_model    text        NOT NULL,
        prompt_version text        NOT NULL,
        targets        jsonb       NOT NULL,
        report         jsonb       NOT NULL,
        status         text        NOT NULL CHECK (status IN ('certified', 'not_certified', 'not_certifiable')),
        created_at     timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await q.query(`CREATE INDEX calibration_reports_pin ON calibration_reports (judge_model, prompt_version, created_at DESC)`);

    await q.query(`
      CREATE TABLE comparison_reports (
        id             uuid        PRIMARY KEY,
        run_a          text        NOT NULL,
        run_b          text        NOT NULL,
        judge_model    text        NOT NULL,
        prompt_version text        NOT NULL,
        rubric_hash    text        NOT NULL,
        report         jsonb       NOT NULL,
        created_at     timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await q.query(`CREATE INDEX comparison_reports_runs ON comparison_reports (run_a, run_b, created_at DESC)`);

    for (const table of ['calibration_sets', 'calibration_items', 'calibration_reports', 'comparison_reports']) {
      await q.query(`CREATE TRIGGER ${table}_append_only BEFORE UPDATE OR DELETE ON ${table} FOR EACH ROW EXECUTE FUNCTION evals_refuse_mutation()`);
      await q.query(`CREATE TRIGGER ${table}_no_truncate BEFORE TRUNCATE ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION evals_refuse_mutation()`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['comparison_reports', 'calibration_reports', 'calibration_items', 'calibration_sets']) {
      await q.query(`DROP TABLE IF EXISTS ${table}`);
    }
    await q.query(`
      ALTER TABLE evidence
        DROP COLUMN IF EXISTS judge_cached,
        DROP COLUMN IF EXISTS judge_output_tokens,
        DROP COLUMN IF EXISTS judge_input_tokens,
        DROP COLUMN IF EXISTS judge_cost_usd,
        DROP COLUMN IF EXISTS prompt_version,
        DROP COLUMN IF EXISTS judge_model`);
  }
}
