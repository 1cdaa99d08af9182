import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The source of truth (spec R3, V2, D1-D2). Tables that hold evidence of past verdicts are append-only,
 * and the database itself refuses UPDATE, DELETE and TRUNCATE on them, so no code path - ours or an
 * operator's psql session - can rewrite history. Names are unqualified: the schema comes from search_path.
 */
export class InitialSchema1764460800000 implements MigrationInterface {
  name = 'InitialSchema1764460800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION evals_refuse_mutation() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'table % is append-only: % refused', TG_TABLE_NAME, TG_OP
          USING ERRCODE = 'P0001', HINT = 'APPEND_ONLY_VIOLATION';
      END $$`);

    // Event store: a global order (position), and per stream an optimistic-concurrency version.
    await q.query(`
      CREATE TABLE events (
        position        bigserial PRIMARY KEY,
        stream_id       text        NOT NULL,
        stream_version  integer     NOT NULL CHECK (stream_version >= 1),
        type            text        NOT NULL,
        version         integer     NOT NULL,
        data            jsonb       NOT NULL,
        metadata        jsonb       NOT NULL,
        message_id      uuid        NOT NULL UNIQUE,
        recorded_at     timestamptz NOT NULL DEFAULT now(),
        UNIQUE (stream_id, stream_version)
      )`);

    await q.query(`
      CREATE TABLE suite_versions (
        suite_key            text        NOT NULL,
        version              integer     NOT NULL CHECK (version >= 1),
        content_hash         text        NOT NULL,
        description          text,
        default_scorer       jsonb       NOT NULL,
        pass_threshold       double precision NOT NULL CHECK (pass_threshold BETWEEN 0 AND 1),
        regression_threshold double precision NOT NULL CHECK (regression_threshold BETWEEN 0 AND 1),
        golden_fixtures      boolean     NOT NULL DEFAULT false,
        case_count           integer     NOT NULL,
        created_at           timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (suite_key, version)
      )`);
    await q.query(`CREATE INDEX suite_versions_hash ON suite_versions (suite_key, content_hash)`);

    await q.query(`
      CREATE TABLE suite_cases (
        suite_key     text    NOT NULL,
        suite_version integer NOT NULL,
        ordinal       integer NOT NULL,
        case_id       text    NOT NULL,
        input         jsonb,
        expected      jsonb,
        scorer        jsonb,
        tags          text[]  NOT NULL DEFAULT '{}',
        PRIMARY KEY (suite_key, suite_version, case_id),
        UNIQUE (suite_key, suite_version, ordinal),
        FOREIGN KEY (suite_key, suite_version) REFERENCES suite_versions (suite_key, version)
      )`);

    // Per-case evidence (R3, D2): never the output; a keyed hash of it and a redacted, clamped label.
    // The primary key is what makes redelivery harmless: a case is scored into evidence at most once.
    await q.query(`
      CREATE TABLE evidence (
        run_id         text             NOT NULL,
        case_id        text             NOT NULL,
        scorer         text             NOT NULL,
        scorer_version text             NOT NULL,
        score          double precision NOT NULL CHECK (score BETWEEN 0 AND 1),
        passed         boolean          NOT NULL,
        label          varchar(120)     NOT NULL,
        detail_hash    text,
        output_chars   integer,
        scored_at      timestamptz      NOT NULL,
        PRIMARY KEY (run_id, case_id)
      )`);

    // Outbox: rows written in the same transaction as the events they announce, relayed to JetStream
    // with message_id as Nats-Msg-Id, so a relay that repeats itself is de-duplicated by the server.
    await q.query(`
      CREATE TABLE outbox (
        id           bigserial   PRIMARY KEY,
        subject      text        NOT NULL,
        message_id   uuid        NOT NULL UNIQUE,
        payload      jsonb       NOT NULL,
        created_at   timestamptz NOT NULL DEFAULT now(),
        published_at timestamptz
      )`);
    await q.query(`CREATE INDEX outbox_unpublished ON outbox (id) WHERE published_at IS NULL`);

    // Dead letters keep the reason and the subject, never the message body (D1).
    await q.query(`
      CREATE TABLE dead_letters (
        id          bigserial   PRIMARY KEY,
        subject     text        NOT NULL,
        code        text        NOT NULL,
        reason      text        NOT NULL,
        message_id  text,
        stream_seq  bigint,
        received_at timestamptz NOT NULL DEFAULT now()
      )`);
    // One dead letter per delivery of a stream message, however often it is redelivered.
    await q.query(`CREATE UNIQUE INDEX dead_letters_delivery ON dead_letters (subject, stream_seq) WHERE stream_seq IS NOT NULL`);

    await q.query(`
      CREATE TABLE projection_checkpoints (
        name       text        PRIMARY KEY,
        position   bigint      NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);

    for (const table of ['events', 'suite_versions', 'suite_cases', 'evidence', 'dead_letters']) {
      await q.query(`
        CREATE TRIGGER ${table}_append_only BEFORE UPDATE OR DELETE ON ${table}
        FOR EACH ROW EXECUTE FUNCTION evals_refuse_mutation()`);
      await q.query(`
        CREATE TRIGGER ${table}_no_truncate BEFORE TRUNCATE ON ${table}
        FOR EACH STATEMENT EXECUTE FUNCTION evals_refuse_mutation()`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['projection_checkpoints', 'dead_letters', 'outbox', 'evidence', 'suite_cases', 'suite_versions', 'events']) {
      await q.query(`DROP TABLE IF EXISTS ${table}`);
    }
    await q.query(`DROP FUNCTION IF EXISTS evals_refuse_mutation()`);
  }
}
