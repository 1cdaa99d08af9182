import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { repoRoot } from './cli.testing';

const codeCache = path.join(repoRoot, 'bin', 'code-cache.js');

interface Loaded {
  readonly status: number | null;
  readonly stderr: string;
  readonly out: { result: unknown; on: boolean; stats: { cached: number; accepted: number; rejected: number } } | null;
}

/**
 * A fresh Node process that turns the code cache on (`cacheDir`), loads `entry` and awaits what its
 * `run()` returns - the way bin/register-sources.js does for the checkout's `evals`.
 */
function load(dir: string, cacheDir: string, env: Record<string, string> = {}): Loaded {
  const script = [
    `const { enableCodeCache, stats } = require(${JSON.stringify(codeCache)});`,
    `const on = enableCodeCache(${JSON.stringify(cacheDir)});`,
    `Promise.resolve(require(${JSON.stringify(path.join(dir, 'entry.js'))}).run()).then((result) => process.stdout.write(JSON.stringify({ result, on, stats })));`,
  ].join('\n');
  const child = spawnSync(process.execPath, ['-e', script], { cwd: dir, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', ...env } });
  return { status: child.status, stderr: child.stderr, out: child.stdout ? JSON.parse(child.stdout) : null };
}

/**
 * A small module graph that uses what a compiled module gets from Node: require and its resolve, the
 * module's names, a hashbang - and import(), which only Node's own compile step can give a module on Node 20,
 * so entry.js is never cached; generated.js says it calls none, whatever its comments say.
 */
function writeModules(dir: string, answer = 42): void {
  fs.writeFileSync(
    path.join(dir, 'entry.js'),
    [
      `const other = require('./other');`,
      `exports.run = async () => ({`,
      `  answer: other.answer(),`,
      `  resolved: path.basename(require.resolve('./other')),`,
      `  names: [path.basename(__filename), path.basename(__dirname) === path.basename(process.cwd()), module.id === __filename, this === exports],`,
      `  esm: (await import('./esm.mjs')).value,`,
      `  hashbang: require('./tool').tool,`,
      `  generated: require('./generated').generated(),`,
      `});`,
      `const path = require('node:path');`,
    ].join('\n'),
  );
  fs.writeFileSync(path.join(dir, 'other.js'), `exports.answer = function () { return ${answer}; };\n`);
  fs.writeFileSync(path.join(dir, 'esm.mjs'), `export const value = 'from an ES module';\n`);
  fs.writeFileSync(path.join(dir, 'tool.js'), `#!/usr/bin/env node\nexports.tool = 'hashbang';\n`);
  const { NO_DYNAMIC_IMPORT } = require(codeCache) as { NO_DYNAMIC_IMPORT: string };
  fs.writeFileSync(path.join(dir, 'generated.js'), `${NO_DYNAMIC_IMPORT}\n/** @type {import('./x').Y} */\nexports.generated = () => 'generated';\n`);
}

/**
 * Issue 15, the cold start: the checkout's `evals` hands V8 the code it compiled for each CommonJS module
 * on an earlier start (bin/code-cache.js). What must hold: a module behaves exactly as Node's own loader
 * runs it, the second start really uses the cache, a changed or damaged cache never changes what runs,
 * and it can be turned off.
 */
describe('unit: the V8 code cache of the checkout CLI (issue 15)', () => {
  let dir: string;
  let cacheDir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-code-cache-'));
    cacheDir = path.join(dir, 'cache');
    writeModules(dir);
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const expected = { answer: 42, resolved: 'other.js', names: ['entry.js', true, true, true], esm: 'from an ES module', hashbang: 'hashbang', generated: 'generated' };

  // entry.js's import() on the second start is what fails when a module that calls it is cached (Node 20).
  it('the first start writes a cache per module and the second start uses all of them, with the same results', () => {
    const first = load(dir, cacheDir);
    expect(first.stderr).toBe('');
    expect(first.out).toEqual({ result: expected, on: true, stats: { cached: 3, accepted: 0, rejected: 0 } });
    expect(fs.readdirSync(cacheDir)).toHaveLength(3);

    const second = load(dir, cacheDir);
    expect(second.stderr).toBe('');
    expect(second.out).toEqual({ result: expected, on: true, stats: { cached: 3, accepted: 3, rejected: 0 } });
  });

  it('a changed source runs as changed: its old cache is not used', () => {
    load(dir, cacheDir);
    writeModules(dir, 7);
    const changed = load(dir, cacheDir);
    expect(changed.out?.result).toEqual({ ...expected, answer: 7 });
    expect(changed.out?.stats).toEqual({ cached: 3, accepted: 2, rejected: 0 });
  });

  it('a damaged cache file is rejected by V8, the module runs as written, and the file is written anew', () => {
    load(dir, cacheDir);
    for (const file of fs.readdirSync(cacheDir)) fs.writeFileSync(path.join(cacheDir, file), Buffer.alloc(64, 7));
    const damaged = load(dir, cacheDir);
    expect(damaged.out).toEqual({ result: expected, on: true, stats: { cached: 3, accepted: 0, rejected: 3 } });
    expect(load(dir, cacheDir).out?.stats).toEqual({ cached: 3, accepted: 3, rejected: 0 });
  });

  it('a syntax error is reported by Node as always, with the file and line', () => {
    fs.writeFileSync(path.join(dir, 'other.js'), `exports.answer = function () {\n  return 42 +;\n};\n`);
    const broken = load(dir, cacheDir);
    expect(broken.status).not.toBe(0);
    expect(broken.stderr).toContain(`${path.join(dir, 'other.js')}:2`);
    expect(broken.stderr).toContain('SyntaxError');
  });

  it('EVALS_CODE_CACHE=0 leaves Node compiling as it does, and writes nothing', () => {
    const off = load(dir, cacheDir, { EVALS_CODE_CACHE: '0' });
    expect(off.out).toEqual({ result: expected, on: false, stats: { cached: 0, accepted: 0, rejected: 0 } });
    expect(fs.existsSync(cacheDir)).toBe(false);
  });

  it('with source maps on it stays off: Node registers a module map only in its own compile step', () => {
    expect(load(dir, cacheDir, { EVALS_SOURCE_MAPS: '1' }).out?.on).toBe(false);
    expect(load(dir, cacheDir, { NODE_OPTIONS: '--enable-source-maps' }).out?.on).toBe(false);
  });

  it('a cache directory that cannot be created costs nothing but the cache', () => {
    fs.writeFileSync(path.join(dir, 'file'), '');
    const blocked = load(dir, path.join(dir, 'file', 'cache'));
    expect(blocked.status).toBe(0);
    expect(blocked.out?.result).toEqual(expected);
  });
});
