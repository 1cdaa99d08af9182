// Nest 12 and rxjs as one CommonJS file, for the checkout's `evals` (bin/register-sources.js). Nest 12 ships
// as ES modules: loading @nestjs/common, core, platform-express, swagger and rxjs resolves, reads, parses
// and links about 1 000 files, about 0.9 s of CPU on every start of the embedded all-in-one - most of
// `evals run`'s cold start after PGlite's (issue 15, docs/benchmarks.md). One bundled file loads in about a
// quarter of that. It is built by esbuild on the first start after an install and kept in
// node_modules/.cache, keyed by the bundled packages' versions; when it cannot be built, the packages load
// as they are. `npm run build` builds it into dist/ for the installed package, which has no esbuild.
// EVALS_FRAMEWORK_BUNDLE=0 turns it off.
const crypto = require('node:crypto');
const fs = require('node:fs');
const Module = require('node:module');
const path = require('node:path');

/**
 * The bundled packages, each reached through a file of its own that re-exports its part of the bundle, so
 * that every `require` of one of them gets the one copy: Nest's dependency injection and its decorators'
 * metadata must never meet a second copy of @nestjs/common. Packages our own code and Nest load at run time
 * by name (class-validator, class-transformer, reflect-metadata) stay outside, for the same reason.
 */
const BUNDLED = {
  '@nestjs/common': 'common',
  '@nestjs/core': 'core',
  '@nestjs/platform-express': 'platform-express',
  '@nestjs/swagger': 'swagger',
  rxjs: 'rxjs',
};
const EXTERNAL = [
  'class-validator',
  'class-transformer',
  'reflect-metadata',
  // Optional packages Nest looks for and we do not use, and swagger-ui's assets (found from the bundle's place).
  '@nestjs/microservices',
  '@nestjs/websockets',
  '@nestjs/platform-fastify',
  '@fastify/*',
  'swagger-ui-dist',
];

const { NO_DYNAMIC_IMPORT } = require('./code-cache');
const { pruneDirectories } = require('./cache-prune');

function version(root, name) {
  return JSON.parse(fs.readFileSync(require.resolve(`${name}/package.json`, { paths: [root] }), 'utf8')).version;
}

function build(root, dir) {
  const esbuild = require(require.resolve('esbuild', { paths: [root] }));
  const tmp = `${dir}.${process.pid}.tmp`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  const entry = path.join(tmp, 'entry.js');
  fs.writeFileSync(entry, `module.exports = {\n${Object.entries(BUNDLED).map(([name, part]) => `  ${JSON.stringify(part)}: require(${JSON.stringify(name)}),`).join('\n')}\n};\n`);
  esbuild.buildSync({
    entryPoints: [entry],
    absWorkingDir: root,
    nodePaths: [path.join(root, 'node_modules')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile: path.join(tmp, 'bundle.js'),
    external: EXTERNAL,
    logLevel: 'silent',
    // ES modules that find files next to themselves (createRequire(import.meta.url)) find them from the bundle.
    // The first line tells bin/code-cache.js that no import() is left (its own comments still say `import(`).
    banner: { js: `${NO_DYNAMIC_IMPORT}\nconst __bundle_meta_url = require('node:url').pathToFileURL(__filename).href;` },
    define: { 'import.meta.url': '__bundle_meta_url' },
    // import() becomes require(): a script V8 runs from its code cache cannot call import() on Node 20
    // (bin/code-cache.js), and this file is most of what that cache saves. What Nest loads so - class-validator,
    // class-transformer, its optional packages when they are installed - is CommonJS; an ES-only one (file-type's
    // strtok3, for file uploads, which the service has none of) would fail to load as it would without the package.
    supported: { 'dynamic-import': false },
    charset: 'ascii',
  });
  // esbuild escapes every non-ASCII character of code (charset: 'ascii') but keeps comments as they are, and one
  // such character (four today: an em dash, `≥` twice, `¥`) makes V8 hold the whole 3 MB source as a two-byte
  // string: 6.4 MiB of heap in every process that loads Nest instead of 3.2. Escaped in the comments too.
  const out = path.join(tmp, 'bundle.js');
  const text = fs.readFileSync(out, 'utf8');
  if (/[^\x00-\x7f]/.test(text)) fs.writeFileSync(out, text.replace(/[^\x00-\x7f]/gu, (c) => `\\u{${c.codePointAt(0).toString(16)}}`));
  for (const part of Object.values(BUNDLED)) fs.writeFileSync(path.join(tmp, `${part}.js`), `module.exports = require('./bundle.js')[${JSON.stringify(part)}];\n`);
  fs.rmSync(entry);
  try {
    fs.renameSync(tmp, dir);
  } catch (error) {
    // Another process built the same bundle meanwhile: theirs is used.
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!fs.existsSync(path.join(dir, 'bundle.js'))) throw error;
  }
}

/**
 * Request -> file of the bundle, or null when the bundle is off or cannot be had. Keyed by the bundled
 * packages' versions and this file, not esbuild's: the installed package has the bundle its build made, and
 * no esbuild.
 */
function frameworkBundle(root, cacheDir) {
  if (process.env.EVALS_FRAMEWORK_BUNDLE === '0') return null;
  try {
    const key = crypto
      .createHash('sha256')
      .update(JSON.stringify(Object.keys(BUNDLED).map((name) => [name, version(root, name)])))
      .update(JSON.stringify(EXTERNAL))
      .update(fs.readFileSync(__filename))
      .digest('hex')
      .slice(0, 16);
    const dir = path.join(cacheDir, `framework-${key}`);
    if (!fs.existsSync(path.join(dir, 'bundle.js'))) {
      build(root, dir);
      // The bundles of other package versions or of an earlier bin/framework-bundle.js (bin/cache-prune.js).
      pruneDirectories(cacheDir, 'framework-', dir);
    }
    return new Map(Object.entries(BUNDLED).map(([name, part]) => [name, path.join(dir, `${part}.js`)]));
  } catch {
    return null;
  }
}

/**
 * Every later `require` of a bundled package gets the bundle in `cacheDir`. It is looked up (and built, when
 * esbuild is there and it is missing) on the first such request, so a command that loads no Nest - `--help` -
 * never pays for it.
 */
function useFrameworkBundle(root, cacheDir) {
  let framework;
  const resolve = Module._resolveFilename;
  Module._resolveFilename = function (request, ...rest) {
    if (Object.prototype.hasOwnProperty.call(BUNDLED, request)) {
      framework ??= frameworkBundle(root, cacheDir) ?? new Map();
      const bundled = framework.get(request);
      if (bundled) return bundled;
    }
    return resolve.call(this, request, ...rest);
  };
}

module.exports = { frameworkBundle, useFrameworkBundle };
