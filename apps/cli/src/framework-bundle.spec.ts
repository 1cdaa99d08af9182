import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { repoRoot } from './cli.testing';

const BUNDLED = ['@nestjs/common', '@nestjs/core', '@nestjs/platform-express', '@nestjs/swagger', 'rxjs'];

/** Loads the all-in-one's framework half as bin/evals.js does, and reports what each package resolved to. */
function load(env: Record<string, string> = {}): { resolved: Record<string, string>; nestFromNodeModules: string[] } {
  const script = [
    `require(${JSON.stringify(path.join(repoRoot, 'bin/register-sources.js'))});`,
    `require(${JSON.stringify(path.join(repoRoot, 'apps/cli/src/embedded/embedded-app.ts'))});`,
    `const resolved = Object.fromEntries(${JSON.stringify(BUNDLED)}.map((name) => [name, require.resolve(name)]));`,
    `const nestFromNodeModules = Object.keys(require.cache).filter((f) => /node_modules[\\\\/](@nestjs|rxjs)[\\\\/]/.test(f));`,
    `process.stdout.write(JSON.stringify({ resolved, nestFromNodeModules }));`,
  ].join('\n');
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, ...env } }));
}

/**
 * Issue 15, the cold start: the checkout's `evals` loads Nest 12 and rxjs from one bundled file
 * (bin/framework-bundle.js) instead of about 1 000 ES modules. What must hold: every request for one of the
 * packages gets the bundle - a second copy of @nestjs/common beside it would break dependency injection and
 * the decorators' metadata - and it can be turned off.
 */
describe('unit: the framework bundle of the checkout CLI (issue 15)', () => {
  it('every bundled package resolves to the bundle, and none of them is loaded from node_modules beside it', () => {
    const { resolved, nestFromNodeModules } = load();
    for (const name of BUNDLED) expect([name, resolved[name]]).toEqual([name, expect.stringMatching(/[\\/]node_modules[\\/]\.cache[\\/]evals-cli[\\/]framework-[0-9a-f]{16}[\\/][a-z-]+\.js$/)]);
    expect(nestFromNodeModules).toEqual([]);
  });

  it('the bundle calls no import(), and says so on its first line, so the code cache may keep it (bin/code-cache.js)', () => {
    const { resolved } = load();
    const bundle = fs.readFileSync(path.join(path.dirname(resolved['@nestjs/common']), 'bundle.js'), 'utf8');
    const { NO_DYNAMIC_IMPORT } = require(path.join(repoRoot, 'bin', 'code-cache.js')) as { NO_DYNAMIC_IMPORT: string };
    expect(bundle.startsWith(`${NO_DYNAMIC_IMPORT}\n`)).toBe(true);
    // Nest's calls are `() => import(...)`, `await import(...)` and `return import(...)`; esbuild makes them require().
    expect(bundle.match(/(=>|await|return)\s*import\s*\(/g)).toBeNull();
    expect(bundle).toContain('__toESM(require("@nestjs/microservices")');
  });

  it('the bundle is ASCII, comments included: one other character makes V8 hold all of it as a two-byte string', () => {
    const { resolved } = load();
    const bundle = fs.readFileSync(path.join(path.dirname(resolved['@nestjs/common']), 'bundle.js'), 'utf8');
    expect(bundle.match(/[^\x00-\x7f]/g)).toBeNull();
  });

  it('EVALS_FRAMEWORK_BUNDLE=0 loads the packages as installed', () => {
    const { resolved } = load({ EVALS_FRAMEWORK_BUNDLE: '0' });
    expect(resolved['@nestjs/common']).toBe(require.resolve('@nestjs/common'));
  });

  it('a bundle that cannot be built leaves the packages as installed (null), and nothing half-written', () => {
    const { frameworkBundle } = require(path.join(repoRoot, 'bin', 'framework-bundle.js')) as { frameworkBundle(root: string, cacheDir: string): Map<string, string> | null };
    const blocked = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-bundle-'));
    try {
      // The cache directory's parent is a file: nothing can be created under it.
      fs.writeFileSync(path.join(blocked, 'file'), '');
      expect(frameworkBundle(repoRoot, path.join(blocked, 'file', 'cache'))).toBeNull();
      expect(fs.readdirSync(blocked)).toEqual(['file']);
    } finally {
      fs.rmSync(blocked, { recursive: true, force: true });
    }
  });
});
