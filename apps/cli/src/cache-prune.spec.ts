import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { repoRoot } from './cli.testing';

const { pruneFiles, pruneDirectories, DAY_MS } = require(path.join(repoRoot, 'bin', 'cache-prune.js')) as {
  pruneFiles(dir: string, used: readonly string[], options: { limit: number; maxAgeMs?: number; now?: number }): number;
  pruneDirectories(dir: string, prefix: string, current: string, options?: { maxAgeMs?: number; now?: number }): number;
  DAY_MS: number;
};

const NOW = Date.parse('2026-12-02T12:00:00Z');

function file(dir: string, name: string, ageMs: number, now = NOW): string {
  const f = path.join(dir, name);
  fs.writeFileSync(f, name);
  const t = (now - ageMs) / 1000;
  fs.utimesSync(f, t, t);
  return f;
}

/**
 * The checkout CLI's content-keyed caches (bin/cache-prune.js): every edit of a source adds entries, and
 * nothing removed the old ones. What must hold: nothing goes while the cache is within its bound; past it,
 * only entries that are old and unused by the pruning process go; what that process used stays and counts as
 * new; directories of other framework bundles go once old, the current one never.
 */
describe('unit: pruning the CLI caches (issue 15)', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-prune-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('within the limit nothing is removed, however old', () => {
    for (let i = 0; i < 5; i++) file(dir, `old-${i}`, 30 * DAY_MS);
    expect(pruneFiles(dir, [], { limit: 5, now: NOW })).toBe(0);
    expect(fs.readdirSync(dir)).toHaveLength(5);
  });

  it('past the limit: old unused entries go; used ones stay (touched) and so do young ones; directories are left alone', () => {
    const used = file(dir, 'used-but-old', 30 * DAY_MS);
    for (let i = 0; i < 4; i++) file(dir, `stale-${i}`, 2 * DAY_MS);
    file(dir, 'young', 60_000);
    fs.mkdirSync(path.join(dir, 'v8'));
    expect(pruneFiles(dir, [used], { limit: 3, now: NOW })).toBe(4);
    expect(fs.readdirSync(dir).sort()).toEqual(['used-but-old', 'v8', 'young']);
    expect(fs.statSync(used).mtimeMs).toBe(NOW);
  });

  it('framework bundles: other ones go once older than a day, the current one and young ones stay', () => {
    const mk = (name: string, ageMs: number) => {
      const d = path.join(dir, name);
      fs.mkdirSync(d);
      fs.writeFileSync(path.join(d, 'bundle.js'), '');
      const t = (NOW - ageMs) / 1000;
      fs.utimesSync(d, t, t);
      return d;
    };
    const current = mk('framework-current', 10 * DAY_MS);
    mk('framework-old', 2 * DAY_MS);
    mk('framework-young', 60_000);
    mk('other-old', 10 * DAY_MS);
    expect(pruneDirectories(dir, 'framework-', current, { now: NOW })).toBe(1);
    expect(fs.readdirSync(dir).sort()).toEqual(['framework-current', 'framework-young', 'other-old']);
  });

  it('the code cache prunes when its process added entries: stale entries past 6 000 go, the new one stays (bin/code-cache.js)', () => {
    const cacheDir = path.join(dir, 'v8');
    fs.mkdirSync(cacheDir);
    // Aged against the real clock: the child process prunes by it.
    for (let i = 0; i < 6_001; i++) file(cacheDir, `stale-${i}`, 2 * DAY_MS, Date.now());
    fs.writeFileSync(path.join(dir, 'mod.js'), 'exports.answer = 42;\n');
    const script = `require(${JSON.stringify(path.join(repoRoot, 'bin', 'code-cache.js'))}).enableCodeCache(${JSON.stringify(cacheDir)}); process.stdout.write(String(require(${JSON.stringify(path.join(dir, 'mod.js'))}).answer));`;
    const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', EVALS_CODE_CACHE: '', EVALS_SOURCE_MAPS: '' } });
    expect(child.stdout).toBe('42');
    const left = fs.readdirSync(cacheDir);
    expect(left.filter((n) => n.startsWith('stale-'))).toEqual([]);
    expect(left).toHaveLength(1);
  });
});
