// Runs the checkout's TypeScript sources in plain Node for the `evals` CLI: `.ts` files compiled by swc
// with the project's .swcrc (cached on disk by content), `@evals/<lib>` resolved to libs/<lib>/src. A few
// lines instead of @swc-node/register, which loads the TypeScript compiler to read tsconfig.json and costs
// about half a second on every command.
const crypto = require('node:crypto');
const fs = require('node:fs');
const Module = require('node:module');
const path = require('node:path');

const root = path.join(__dirname, '..');
// Stack traces point into the TypeScript sources only when asked (`EVALS_SOURCE_MAPS=1`, or node's own
// --enable-source-maps): with maps on, Node decodes and keeps the map of every compiled module - about 55 MiB of
// an idle `evals serve` (issue 15, docs/benchmarks.md). Without, the compiled code carries no map either: an
// inline map is two thirds of a compiled file (3.4 of 5.0 MB over the CLI's modules), read and hashed on every
// start and held in V8's heap as part of the module's source for the life of the process.
const { enableCodeCache, sourceMapsWanted } = require('./code-cache');
const options = { ...JSON.parse(fs.readFileSync(path.join(root, '.swcrc'), 'utf8')), swcrc: false, sourceMaps: sourceMapsWanted() ? 'inline' : false };
const cacheDir = path.join(root, 'node_modules', '.cache', 'evals-cli');
// Compiled files kept at most before the unused old ones go (bin/cache-prune.js): the checkout has about 600 sources.
const COMPILED_LIMIT = 2000;
const { pruneFiles } = require('./cache-prune');
// swc's version from its package.json: the compiler itself (a native binding, ~30 ms) loads on a cache miss only.
const swcVersion = JSON.parse(fs.readFileSync(require.resolve('@swc/core/package.json', { paths: [root] }), 'utf8')).version;
const salt = `${swcVersion}:${JSON.stringify(options)}`;

// One code cache per V8 profile (bin/v8-profile.js, which bin/evals.js applied from the same arguments): a
// cache records the flags it was made under.
enableCodeCache(path.join(cacheDir, 'v8', require('./v8-profile').v8Profile(process.argv.slice(2)).name));
require('./framework-bundle').useFrameworkBundle(root, cacheDir);

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  const lib = /^@evals\/([a-z-]+)$/.exec(request);
  return resolve.call(this, lib ? path.join(root, 'libs', lib[1], 'src', 'index.ts') : request, ...rest);
};

// The compiled files this process used, and whether it wrote one: a process that added to the cache prunes it.
const used = [];
let wrote = false;
Module._extensions['.ts'] = function (module, filename) {
  const source = fs.readFileSync(filename, 'utf8');
  const key = crypto.createHash('sha256').update(salt).update(filename).update(source).digest('hex');
  const cached = path.join(cacheDir, `${key}.js`);
  let code;
  try {
    code = fs.readFileSync(cached, 'utf8');
    used.push(cached);
  } catch {
    code = require('@swc/core').transformSync(source, { ...options, filename }).code;
    try {
      fs.mkdirSync(cacheDir, { recursive: true });
      fs.writeFileSync(`${cached}.${process.pid}`, code);
      fs.renameSync(`${cached}.${process.pid}`, cached);
      used.push(cached);
      if (!wrote) process.once('exit', () => pruneFiles(cacheDir, used, { limit: COMPILED_LIMIT }));
      wrote = true;
    } catch {
      // A read-only checkout compiles every time; nothing else changes.
    }
  }
  module._compile(code, filename);
};

if (process.env.EVALS_SOURCE_MAPS === '1') process.setSourceMapsEnabled(true);
