import type { MigrationInterface, QueryRunner } from 'typeorm';
import { APPS, TABLE_OWNERS, appRole, appSchema, applyOwnershipGrants } from '../ownership';

/**
 * Issue 27: each app's tables in a schema of its own. Moves every table to its owner's schema beside the
 * shared one (`ingestion`, `scoring`, `regression`, `read_model` on `public`; ownership.ts, `appSchema`) and
 * grants each role USAGE on its own schema only (and on those of the foreign reads still listed). ALTER
 * TABLE ... SET SCHEMA keeps every row, index, trigger and grant: a single-schema database of the previous
 * release is upgraded in place. migrate() places and grants again after any later migration, so a table a
 * later migration creates (unqualified, hence in the shared schema) reaches its owner's schema too.
 */
export class AppSchemas1796400000500 implements MigrationInterface {
  name = 'AppSchemas1796400000500';

  async up(q: QueryRunner): Promise<void> {
    const [{ schema }] = (await q.query('SELECT current_schema() AS schema')) as Array<{ schema: string }>;
    await applyOwnershipGrants(q, schema);
  }

  async down(q: QueryRunner): Promise<void> {
    const [{ schema }] = (await q.query('SELECT current_schema() AS schema')) as Array<{ schema: string }>;
    const base = `"${schema.replace(/"/g, '""')}"`;
    for (const app of APPS) {
      const s = `"${appSchema(schema, app)}"`;
      const tables = (await q.query('SELECT tablename FROM pg_tables WHERE schemaname = $1', [appSchema(schema, app)])) as Array<{ tablename: string }>;
      for (const { tablename } of tables) if (tablename in TABLE_OWNERS) await q.query(`ALTER TABLE ${s}."${tablename}" SET SCHEMA ${base}`);
      for (const role of APPS.map(appRole)) {
        const exists = (await q.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role])) as unknown[];
        if (exists.length > 0) await q.query(`REVOKE ALL ON SCHEMA ${s} FROM ${role}`);
      }
      await q.query(`DROP SCHEMA IF EXISTS ${s}`);
    }
  }
}
