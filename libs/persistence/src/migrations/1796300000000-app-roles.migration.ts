import type { MigrationInterface, QueryRunner } from 'typeorm';
import { applyEventAuthorship, applyOwnershipGrants } from '../ownership';

/**
 * Issue 27: one owner per table, enforced by the database. Creates the login roles of the four apps when
 * missing (`evals_ingestion`, `evals_scoring`, `evals_regression`, `evals_read_model`) and grants each the
 * tables it owns and the shared infrastructure, plus the foreign reads still listed in ownership.ts, in the
 * schema being migrated, and a trigger on `events` that lets each role append only its own event types
 * (EVENT_AUTHORS). Idempotent; an existing database keeps every row (nothing moves). A later change
 * of the map is a new migration calling applyOwnershipGrants again.
 */
export class AppRoles1796300000000 implements MigrationInterface {
  name = 'AppRoles1796300000000';

  async up(q: QueryRunner): Promise<void> {
    const [{ schema }] = (await q.query('SELECT current_schema() AS schema')) as Array<{ schema: string }>;
    await applyOwnershipGrants(q, schema);
    await applyEventAuthorship(q, schema);
  }

  async down(q: QueryRunner): Promise<void> {
    const [{ schema }] = (await q.query('SELECT current_schema() AS schema')) as Array<{ schema: string }>;
    await q.query(`DROP TRIGGER IF EXISTS events_author ON "${schema}".events; DROP FUNCTION IF EXISTS "${schema}".evals_event_author()`);
    for (const role of ['evals_ingestion', 'evals_scoring', 'evals_regression', 'evals_read_model']) {
      const exists = (await q.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role])) as unknown[];
      if (exists.length > 0) await q.query(`REVOKE ALL ON ALL TABLES IN SCHEMA "${schema}" FROM ${role}; REVOKE USAGE ON SCHEMA "${schema}" FROM ${role}`);
    }
  }
}
