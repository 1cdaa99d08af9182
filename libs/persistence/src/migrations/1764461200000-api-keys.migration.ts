import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * API keys (docs/security.md). Only a keyed hash of each key's secret is stored, never the secret. The table
 * is mutable in exactly one way: a key's `revoked_at` goes from NULL to a time, once. Every other UPDATE,
 * un-revoking, DELETE and TRUNCATE are refused by the database, so a revoked key stays revoked and the list
 * of who ever held a key survives.
 */
export class ApiKeys1764461200000 implements MigrationInterface {
  name = 'ApiKeys1764461200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE api_keys (
        id          text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{16}$'),
        name        text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
        tier        text        NOT NULL CHECK (tier IN ('viewer', 'operator', 'admin')),
        prefix      text        NOT NULL,
        secret_hash text        NOT NULL CHECK (secret_hash ~ '^[0-9a-f]{64}$'),
        created_at  timestamptz NOT NULL DEFAULT now(),
        revoked_at  timestamptz,
        created_by  text
      )`);
    await q.query(`
      CREATE FUNCTION evals_api_keys_guard() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'UPDATE' THEN
          IF OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL
             AND (NEW.id, NEW.name, NEW.tier, NEW.prefix, NEW.secret_hash, NEW.created_at, NEW.created_by)
                 IS NOT DISTINCT FROM (OLD.id, OLD.name, OLD.tier, OLD.prefix, OLD.secret_hash, OLD.created_at, OLD.created_by) THEN
            RETURN NEW;
          END IF;
          RAISE EXCEPTION 'table api_keys: only revocation (revoked_at from NULL to a time) is allowed'
            USING ERRCODE = 'P0001', HINT = 'API_KEY_IMMUTABLE';
        END IF;
        RAISE EXCEPTION 'table api_keys: % refused (revoke a key instead)', TG_OP
          USING ERRCODE = 'P0001', HINT = 'API_KEY_IMMUTABLE';
      END $$`);
    await q.query(`
      CREATE TRIGGER api_keys_guard BEFORE UPDATE OR DELETE ON api_keys
      FOR EACH ROW EXECUTE FUNCTION evals_api_keys_guard()`);
    await q.query(`
      CREATE TRIGGER api_keys_no_truncate BEFORE TRUNCATE ON api_keys
      FOR EACH STATEMENT EXECUTE FUNCTION evals_api_keys_guard()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS api_keys`);
    await q.query(`DROP FUNCTION IF EXISTS evals_api_keys_guard()`);
  }
}
