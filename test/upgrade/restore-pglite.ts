/**
 * Restores a release's dump (test/fixtures/upgrade) into a new PGlite data directory, in `public` as the
 * embedded default keeps its tables, for the embedded half of test/e2e/upgrade.e2e-spec.ts: a child process,
 * since PGlite's WASM needs what Jest's e2e project does not start Node with. Reads UPGRADE_RELEASE and
 * UPGRADE_PGDATA (the data directory's `postgres` folder, which must not exist yet).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { restoreSql, UPGRADE_FIXTURES, type UpgradeFixture } from './upgrade-views';

async function main(): Promise<void> {
  const release = process.env.UPGRADE_RELEASE!;
  const dir = process.env.UPGRADE_PGDATA!;
  const fixture = JSON.parse(fs.readFileSync(path.join(UPGRADE_FIXTURES, `${release}.views.json`), 'utf8')) as UpgradeFixture;
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create(dir);
  try {
    await db.exec(restoreSql(fixture, 'public'));
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM public.events`);
    if (rows[0]!.n !== fixture.rows.events) throw new Error(`restored ${rows[0]!.n} events of ${fixture.rows.events}`);
  } finally {
    await db.close();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`restore-pglite: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
