#!/usr/bin/env node
// `npm run pglite:template` (issue 31): writes libs/pglite/assets/pgdata-<PGlite version>.tar.gz, a freshly
// initialised PGlite data directory, which a new embedded data directory is unpacked from instead of running
// initdb (libs/pglite/src/data-dir-template.ts). Run it after upgrading @electric-sql/pglite, and commit the
// file; `npm run build` copies it beside the compiled library.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const entry = require.resolve('@electric-sql/pglite', { paths: [root] });
const version = JSON.parse(fs.readFileSync(path.join(entry, '..', '..', 'package.json'), 'utf8')).version;
const out = path.join(root, 'libs', 'pglite', 'assets', `pgdata-${version}.tar.gz`);

async function main() {
  if (process.argv.includes('--copy-to-dist')) {
    // `npm run build`: the compiled library looks for its template beside it (dist/libs/pglite/assets).
    const to = path.join(root, 'dist', 'libs', 'pglite', 'assets');
    fs.mkdirSync(to, { recursive: true });
    if (fs.existsSync(out)) fs.copyFileSync(out, path.join(to, path.basename(out)));
    process.stdout.write(`pglite template: ${fs.existsSync(out) ? 'copied to' : 'none for this PGlite version, not copied to'} ${path.relative(root, to)}\n`);
    return;
  }
  const { PGlite } = await import(require('node:url').pathToFileURL(entry).href);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-pglite-template-'));
  try {
    // The settings of every embedded start (embedded-postgres.ts, PGLITE_SETTINGS) are start parameters,
    // not written into the directory, so the template is initdb's output alone.
    const db = await PGlite.create(dir);
    await db.query('CHECKPOINT');
    const blob = await db.dumpDataDir('gzip');
    await db.close();
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, Buffer.from(await blob.arrayBuffer()));
    process.stdout.write(`pglite template: ${path.relative(root, out)} (${fs.statSync(out).size} bytes)\n`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
