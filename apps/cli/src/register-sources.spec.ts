import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { repoRoot } from './cli.testing';

const register = path.join(repoRoot, 'bin', 'register-sources.js');
const cacheDir = path.join(repoRoot, 'node_modules', '.cache', 'evals-cli');

/** The compiled files of the checkout's swc cache that hold `marker` (each test file carries its own). */
function compiledWith(marker: string): string[] {
  if (!fs.existsSync(cacheDir)) return [];
  return fs
    .readdirSync(cacheDir)
    .filter((f) => f.endsWith('.js'))
    .map((f) => path.join(cacheDir, f))
    .filter((f) => fs.readFileSync(f, 'utf8').includes(marker));
}

/**
 * Issue 15 (memory, cold start): the checkout's `evals` compiles TypeScript with an inline source map only
 * when stack traces are to point into the sources (`EVALS_SOURCE_MAPS=1`, node's --enable-source-maps). A
 * map is two thirds of a compiled file, read on every start and kept in V8's heap with the module's source.
 */
describe('unit: bin/register-sources.js compiles source maps only when asked', () => {
  let dir: string;
  let marker: string;
  // The throw is on line 8 of the TypeScript; the type-only lines above it are gone from the compiled code.
  const throwLine = 8;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-register-'));
    marker = `marker-${randomUUID()}`;
    fs.writeFileSync(
      path.join(dir, 'thrower.ts'),
      [
        `export interface Shape {`,
        `  readonly a: string;`,
        `  readonly b: number;`,
        `}`,
        `export type Other = Shape & { c: boolean };`,
        `export function boom(): string {`,
        `  const m: string = ${JSON.stringify(marker)};`,
        `  throw new Error(m);`,
        `}`,
      ].join('\n'),
    );
  });

  afterEach(() => {
    for (const f of compiledWith(marker)) fs.rmSync(f, { force: true });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const run = (env: Record<string, string>) =>
    spawnSync(process.execPath, ['-e', `require(${JSON.stringify(register)}); try { require(${JSON.stringify(path.join(dir, 'thrower.ts'))}).boom(); } catch (e) { process.stdout.write(e.stack); }`], {
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '', EVALS_SOURCE_MAPS: '', ...env },
    });

  it('without EVALS_SOURCE_MAPS: the compiled code carries no map', () => {
    const child = run({});
    expect(child.stderr).toBe('');
    expect(child.stdout).toContain(marker);
    const compiled = compiledWith(marker);
    expect(compiled).toHaveLength(1);
    expect(fs.readFileSync(compiled[0], 'utf8')).not.toContain('sourceMappingURL');
  });

  it('with EVALS_SOURCE_MAPS=1: an inline map, and the stack names the TypeScript line; both kinds are cached apart', () => {
    run({});
    const child = run({ EVALS_SOURCE_MAPS: '1' });
    expect(child.stderr).toBe('');
    expect(child.stdout).toContain(`thrower.ts:${throwLine}:`);
    const compiled = compiledWith(marker).map((f) => fs.readFileSync(f, 'utf8').includes('sourceMappingURL=data:application/json;base64,'));
    expect(compiled.sort()).toEqual([false, true]);
  });
});
