/**
 * Exercises the embedded PostgreSQL on a data directory in a process of its own, closed and reopened as
 * `evals serve` does it across a restart, and prints one JSON line of findings for
 * embedded-postgres.int-spec.ts to assert on. Usage: node -r @swc-node/register embedded-postgres.probe.ts DIR [in-process|worker]
 */
import { createDataSource, migrate, migrations } from './data-source';
import { startEmbeddedPostgres, type EmbeddedPostgresOptions } from '@evals/pglite';

async function main(dir: string, connection: EmbeddedPostgresOptions['connection']): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  let pg = await startEmbeddedPostgres(dir, { connection });
  let ds = createDataSource({ url: pg.url, poolSize: 1 });
  await ds.initialize();
  out.applied = (await migrate(ds)).length;
  out.expected = migrations.length;
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
  return out;
}

main(process.argv[2]!, (process.argv[3] ?? 'in-process') as EmbeddedPostgresOptions['connection']).then(
  (out) => process.stdout.write(`${JSON.stringify(out)}\n`),
  (error: unknown) => {
    process.stderr.write(`probe failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
