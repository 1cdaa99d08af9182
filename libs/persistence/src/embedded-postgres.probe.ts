/**
 * Exercises the embedded PostgreSQL on a data directory in a process of its own, closed and reopened as
 * `evals serve` does it across a restart, and prints one JSON line of findings for
 * embedded-postgres.int-spec.ts to assert on. Usage: node -r @swc-node/register embedded-postgres.probe.ts DIR [in-process|worker]
 */
import { createDataSource, migrate, migrations } from './data-source';
import { startEmbeddedPostgres, templateMigrations, type EmbeddedPostgresOptions } from '@evals/pglite';
import type { DataSource } from 'typeorm';

async function main(dir: string, connection: EmbeddedPostgresOptions['connection']): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  let pg = await startEmbeddedPostgres(dir, { connection });
  let ds = createDataSource({ url: pg.url, poolSize: 1 });
  await ds.initialize();
  out.applied = (await migrate(ds)).length;
  // Issue 31: a new directory is unpacked from the template, which holds migrations applied already.
  out.expected = migrations.length - templateMigrations().length;
  out.catalog = await catalog(ds);
  await ds.query(`INSERT INTO dead_letters (subject, code, reason) VALUES ('s', 'C', 'r')`);
  out.update_refused = await ds.query(`UPDATE dead_letters SET reason = 'x'`).then(() => false, (e: Error) => /append-only/.test(e.message));
  out.delete_refused = await ds.query(`DELETE FROM dead_letters`).then(() => false, (e: Error) => /append-only/.test(e.message));
  await ds.query(`CREATE TABLE iso (v text)`);
  const committed = ds.transaction(async (m) => {
    await m.query(`INSERT INTO iso VALUES ('committed')`);
    await new Promise((r) => setTimeout(r, 50));
  });
  const rolledBack = ds
    .transaction(async (m) => {
      await m.query(`INSERT INTO iso VALUES ('rolled-back')`);
      throw new Error('roll back');
    })
    .catch(() => 'rolled back');
  await Promise.all([committed, rolledBack]);
  out.after_concurrent = (await ds.query(`SELECT v FROM iso ORDER BY v`)).map((r: { v: string }) => r.v);
  await ds.destroy();
  await pg.stop();
  pg = await startEmbeddedPostgres(dir, { connection });
  ds = createDataSource({ url: pg.url, poolSize: 1 });
  await ds.initialize();
  out.applied_after_restart = (await migrate(ds)).length;
  out.shared_buffers = (await ds.query(`SHOW shared_buffers`))[0].shared_buffers;
  out.after_restart = (await ds.query(`SELECT v FROM iso ORDER BY v`)).map((r: { v: string }) => r.v);
  await ds.destroy();
  await pg.stop();
  // The same migrations run from nothing, in memory: the schema a directory from the template must have.
  const scratch = await startEmbeddedPostgres(undefined, { connection });
  const fresh = createDataSource({ url: scratch.url, poolSize: 1 });
  await fresh.initialize();
  out.applied_from_scratch = (await migrate(fresh)).length;
  out.catalog_from_scratch = await catalog(fresh);
  await fresh.destroy();
  await scratch.stop();
  return out;
}

/** What the migrations made, named and ordered: tables and columns, indexes, triggers, functions, schemas, grants. */
async function catalog(ds: DataSource): Promise<unknown> {
  const own = `NOT IN ('pg_catalog', 'information_schema', 'pg_toast')`;
  return {
    schemas: await ds.query(`SELECT nspname FROM pg_namespace WHERE nspname ${own} AND nspname NOT LIKE 'pg_%' ORDER BY 1`),
    columns: await ds.query(`SELECT table_schema, table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns WHERE table_schema ${own} ORDER BY 1, 2, ordinal_position`),
    indexes: await ds.query(`SELECT schemaname, tablename, indexdef FROM pg_indexes WHERE schemaname ${own} ORDER BY 1, 2, 3`),
    triggers: await ds.query(`SELECT c.relname, t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE NOT t.tgisinternal ORDER BY 1, 2`),
    functions: await ds.query(`SELECT n.nspname, p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname ${own} ORDER BY 1, 2`),
    grants: await ds.query(`SELECT grantee, table_schema, table_name, privilege_type FROM information_schema.role_table_grants WHERE grantee LIKE 'evals_%' ORDER BY 1, 2, 3, 4`),
    migrations: await ds.query(`SELECT name FROM schema_migrations ORDER BY id`),
  };
}

main(process.argv[2]!, (process.argv[3] ?? 'in-process') as EmbeddedPostgresOptions['connection']).then(
  (out) => process.stdout.write(`${JSON.stringify(out)}\n`),
  (error: unknown) => {
    process.stderr.write(`probe failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
