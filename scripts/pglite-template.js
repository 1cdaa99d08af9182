#!/usr/bin/env node
// `npm run pglite:template` (issue 31): writes libs/pglite/assets/pgdata-<PGlite version>.tar.gz, a PGlite data
// directory initialised AND migrated (every migration of libs/persistence applied, as the embedded service's
// first start would), which a new embedded data directory is unpacked from instead of running initdb and the
// migrations (libs/pglite/src/data-dir-template.ts), and beside it pgdata-<version>.migrations.json, the
// migrations it holds: a migration added later still runs on the first start, and data-dir-template.spec.ts
// fails until the template is written again. Run it after adding a migration or upgrading
// @electric-sql/pglite, and commit both files; `npm run build` copies them beside the compiled library.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const entry = require.resolve('@electric-sql/pglite', { paths: [root] });
const version = JSON.parse(fs.readFileSync(path.join(entry, '..', '..', 'package.json'), 'utf8')).version;
const out = path.join(root, 'libs', 'pglite', 'assets', `pgdata-${version}.tar.gz`);
const manifest = out.replace(/\.tar\.gz$/, '.migrations.json');

async function main() {
  if (process.argv.includes('--copy-to-dist')) {
    // `npm run build`: the compiled library looks for its template beside it (dist/libs/pglite/assets).
    const to = path.join(root, 'dist', 'libs', 'pglite', 'assets');
    fs.mkdirSync(to, { recursive: true });
    for (const file of [out, manifest]) if (fs.existsSync(file)) fs.copyFileSync(file, path.join(to, path.basename(file)));
    process.stdout.write(`pglite template: ${fs.existsSync(out) ? 'copied to' : 'none for this PGlite version, not copied to'} ${path.relative(root, to)}\n`);
    return;
  }
  // The migrations are TypeScript (libs/persistence): loaded as the benches load them.
  require('@swc-node/register');
  const { startEmbeddedPostgres } = require('../libs/pglite/src');
  const { createDataSource, migrate } = require('../libs/persistence/src');
  const { PGlite } = await import(require('node:url').pathToFileURL(entry).href);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-pglite-template-'));
  const data = path.join(dir, 'pgdata');
  try {
    // initdb (no template is read: the directory is made here, so startEmbeddedPostgres finds it initialised).
    await (await PGlite.create(data)).close();
    // The settings of every embedded start (embedded-postgres.ts, PGLITE_SETTINGS) are start parameters, not
    // written into the directory; the migrations run exactly as on an embedded first start.
    const pg = await startEmbeddedPostgres(data);
    const ds = createDataSource({ url: pg.url, poolSize: 1, applicationName: 'evals-pglite-template' });
    let applied;
    try {
      await ds.initialize();
      await migrate(ds);
      applied = (await ds.query('SELECT name FROM schema_migrations ORDER BY id')).map((r) => r.name);
      await ds.query('CHECKPOINT');
    } finally {
      if (ds.isInitialized) await ds.destroy();
      await pg.stop();
    }
    const db = await PGlite.create(data);
    const blob = await db.dumpDataDir('gzip');
    await db.close();
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, Buffer.from(await blob.arrayBuffer()));
    fs.writeFileSync(manifest, `${JSON.stringify({ pglite: version, migrations: applied }, null, 2)}\n`);
    process.stdout.write(`pglite template: ${path.relative(root, out)} (${fs.statSync(out).size} bytes, ${applied.length} migrations)\n`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
