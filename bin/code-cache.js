// V8's code cache for the checkout's `evals` (bin/register-sources.js): every CommonJS module it loads - our
// compiled TypeScript, the framework bundle, TypeORM, class-validator, pg - is compiled by V8 on every
// start, and a cold `evals run` spends a good part of its first second doing so (issue 15,
// docs/benchmarks.md). Node 22 has module.enableCompileCache(); Node 20 has the mechanism underneath it,
// vm.Script's cachedData, which this uses the same way: a module's cache is written when the process that
// compiled it without one exits - after the run, so it holds the functions the run actually called, not
// only the top level - and later starts hand it to V8, which checks it against its own version and flags
// and the source's length, and compiles afresh when it does not fit. The file name carries a checksum of
// the source, so a changed file never meets an old cache. EVALS_CODE_CACHE=0 turns it off.
const fs = require('node:fs');
const Module = require('node:module');
const path = require('node:path');
const vm = require('node:vm');
const zlib = require('node:zlib');
const { pruneFiles } = require('./cache-prune');

const DYNAMIC_IMPORT = /\bimport\s*\(/;
/** The first line of a generated file that has no import() call, whatever its comments say. */
const NO_DYNAMIC_IMPORT = '/* evals: no dynamic import() */';

/** Entries kept at most before the unused old ones go: a checkout's CLI and serve use about 2 400. */
const CODE_CACHE_LIMIT = 6000;

/** What this process's modules met: read by the tests (apps/cli/src/code-cache.spec.ts). */
const stats = { cached: 0, accepted: 0, rejected: 0 };

/** `require` for a module compiled here, as Node's own loader builds it. */
function makeRequire(mod) {
  const require = (id) => mod.require(id);
  require.resolve = (request, options) => Module._resolveFilename(request, mod, false, options);
  require.resolve.paths = (request) => Module._resolveLookupPaths(request, mod);
  require.main = process.mainModule;
  require.extensions = Module._extensions;
  require.cache = Module._cache;
  return require;
}

function cacheKey(filename, content) {
  return `${zlib.crc32(filename).toString(16)}-${zlib.crc32(content).toString(16)}-${content.length.toString(16)}`;
}

/** Stack traces are to point into the sources: `EVALS_SOURCE_MAPS=1`, or node's own --enable-source-maps. */
function sourceMapsWanted() {
  return process.env.EVALS_SOURCE_MAPS === '1' || process.execArgv.includes('--enable-source-maps') || /--enable-source-maps/.test(process.env.NODE_OPTIONS ?? '');
}

/**
 * Compiles every CommonJS module through vm.Script with its cached data from `dir`, and writes the data of
 * those compiled without (or with a rejected) one when the process exits. Returns false, and changes
 * nothing, where it cannot work alike: before Node 20.15 (no zlib.crc32), or with source maps on (Node
 * registers a module's map only in its own compile step).
 */
function enableCodeCache(dir) {
  if (process.env.EVALS_CODE_CACHE === '0' || typeof zlib.crc32 !== 'function') return false;
  if (sourceMapsWanted()) return false;

  const compile = Module.prototype._compile;
  const produce = [];
  const read = [];
  Module.prototype._compile = function (content, filename) {
    // On Node 20 a script that comes from cached data has lost what routes its `import()` to a loader
    // (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING at the call): a source that may call import() is compiled by
    // Node, uncached. The framework bundle is built without one (bin/framework-bundle.js).
    if (!content.startsWith(NO_DYNAMIC_IMPORT) && DYNAMIC_IMPORT.test(content)) return compile.call(this, content, filename);
    // A hashbang is valid only at the very start of a script, not inside the wrapper.
    const source = content.startsWith('#!') ? `//${content}` : content;
    const file = path.join(dir, cacheKey(filename, source));
    let cachedData;
    try {
      cachedData = fs.readFileSync(file);
      read.push(file);
    } catch {
      cachedData = undefined;
    }
    let script;
    try {
      script = new vm.Script(Module.wrap(source), { filename, cachedData });
    } catch {
      // A syntax error: Node's own compile step reports it as it always does.
      return compile.call(this, content, filename);
    }
    if (cachedData === undefined || script.cachedDataRejected) produce.push({ file, script });
    stats.cached += 1;
    if (cachedData !== undefined) stats[script.cachedDataRejected ? 'rejected' : 'accepted'] += 1;
    const wrapper = script.runInThisContext({ displayErrors: true });
    return Reflect.apply(wrapper, this.exports, [this.exports, makeRequire(this), this, filename, path.dirname(filename)]);
  };

  process.once('exit', () => {
    if (produce.length === 0) return;
    try {
      fs.mkdirSync(dir, { recursive: true });
      for (const { file, script } of produce) {
        fs.writeFileSync(`${file}.${process.pid}`, script.createCachedData());
        fs.renameSync(`${file}.${process.pid}`, file);
      }
      // Entries of sources that changed since are never read again (bin/cache-prune.js).
      pruneFiles(dir, [...read, ...produce.map((p) => p.file)], { limit: CODE_CACHE_LIMIT });
    } catch {
      // A read-only checkout compiles every time; nothing else changes.
    }
  });
  return true;
}

module.exports = { enableCodeCache, sourceMapsWanted, stats, NO_DYNAMIC_IMPORT };
