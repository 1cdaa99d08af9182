/**
 * P1: the repository stands alone. No tracked file - code, test, doc, script, CI or deploy file - may name a
 * path that leaves the checkout: a relative path that climbs above the repository root from where it is
 * written, the sibling `shared/` folder the project's data once came from, or an absolute path into a
 * home or workspace directory of some machine. A user's clone, a fork and CI's fresh clone have nothing
 * beside them; a test that reads a sibling folder passes only on the machine that happens to have one.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');

/** Absolute roots where a checkout, a home directory or a mounted disk lives: never the repository's own. */
const MACHINE_ROOTS = ['/home/', '/Users/', '/root/', '/work/', '/mnt/', '/media/'];

/**
 * Absolute paths that name a place inside a container image, not on the machine that holds the checkout.
 * Each is allowed only in the file named, for the reason given.
 */
const CONTAINER_PATHS: Record<string, readonly string[]> = {
  // The CLI service's working directory and its read-only mount of examples/ inside the container.
  'deploy/compose/compose.yaml': ['/work'],
  'docs/deploy.md': ['/work/examples'],
  // npm's cache inside the build container (a BuildKit cache mount).
  'deploy/docker/Dockerfile': ['/root/.npm'],
};

/** Words that name the sibling folder whatever the relative prefix, and the variable that pointed at it. */
const SIBLING_NAMES = /(?:\.\.\/)+shared\b|\bshared\/(?:reference|spec|seeds|bench)\b|\bEVALS_SHARED_DIR\b/g;

// A relative path token: one or more `../` then whatever path characters follow.
const RELATIVE = /(?<![\w.\/-])((?:\.\.\/)+(?:\.\.(?![\w.])|[\w.@+\-\/]*))/g;
const ABSOLUTE = /(?<![\w.:\/-])(\/[A-Za-z][\w.+\-]*(?:\/[\w.@+\-]*)*)/g;

export interface OutsidePath {
  readonly file: string;
  readonly line: number;
  readonly path: string;
  readonly why: string;
}

/** Every place in `text` (the content of `file`, relative to the root) that names a path outside the root. */
export function outsidePaths(file: string, text: string): OutsidePath[] {
  const found: OutsidePath[] = [];
  const dir = path.dirname(path.join(ROOT, file));
  text.split('\n').forEach((content, i) => {
    const at = (p: string, why: string) => found.push({ file, line: i + 1, path: p, why });
    for (const m of content.matchAll(SIBLING_NAMES)) at(m[0], 'names the sibling shared/ folder');
    for (const m of content.matchAll(RELATIVE)) {
      const target = path.resolve(dir, m[1]);
      if (target !== ROOT && !target.startsWith(ROOT + path.sep)) at(m[1], `climbs out of the repository from ${path.dirname(file)}/`);
    }
    for (const m of content.matchAll(ABSOLUTE)) {
      const p = m[1];
      if (!MACHINE_ROOTS.some((r) => p.startsWith(r) || p === r.slice(0, -1))) continue;
      if ((CONTAINER_PATHS[file] ?? []).some((allowed) => p === allowed || p.startsWith(allowed + '/'))) continue;
      at(p, 'is an absolute path on some machine');
    }
  });
  return found;
}

function trackedTextFiles(): string[] {
  // Tracked files and new ones not yet added (but not ignored), so a local run sees what a commit would add.
  const list = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' });
  const self = path.relative(ROOT, __filename);
  return [...new Set(list.split('\0').filter(Boolean))].filter((f) => {
    // Data, not prose or code: the lock file's URLs and the reference fixtures' values. This file names
    // outside paths on purpose, as the cases its scan must flag.
    if (f === 'package-lock.json' || (f.startsWith('test/fixtures/') && f.endsWith('.json')) || f === self) return false;
    const full = path.join(ROOT, f);
    if (!fs.existsSync(full) || !fs.statSync(full).isFile()) return false;
    return !fs.readFileSync(full).includes(0);
  });
}

/** The sibling folder as a doc would name it. */
const SIBLING = ['..', 'shared'].join('/');

describe('the repository names no path outside itself (P1)', () => {
  it('no tracked file names a path that leaves the checkout', () => {
    const files = trackedTextFiles();
    // Guards against a listing that silently found nothing (no git, wrong root): the tree has hundreds.
    expect(files.length).toBeGreaterThan(300);
    const found = files.flatMap((f) => outsidePaths(f, fs.readFileSync(path.join(ROOT, f), 'utf8')));
    expect(found.map((o) => `${o.file}:${o.line}: ${o.path} ${o.why}`)).toEqual([]);
  });

  describe('the scan itself', () => {
    it.each([
      // Built from parts, so that not even this file holds the sibling's path as written.
      ['docs/testing.md', `the values are in \`${SIBLING}/reference/x.json\``, SIBLING],
      ['docs/testing.md', 'see shared/spec/EVALS-SPEC.md', 'shared/spec'],
      ['libs/stats/src/a.spec.ts', "path.resolve(__dirname, '../../../../data.json')", '../../../../data.json'],
      ['libs/stats/src/a.spec.ts', "path.resolve(__dirname, '../../../..')", '../../../..'],
      ['README.md', 'read it at [the spec](../spec.md)', '../spec.md'],
      ['.ci/run', 'cp -r /work/main/node_modules .', '/work/main/node_modules'],
      ['docs/x.md', 'my checkout in /home/me/evals', '/home/me/evals'],
      ['test/e2e/a.e2e-spec.ts', "process.env.EVALS_SHARED_DIR ?? 'x'", 'EVALS_SHARED_DIR'],
    ])('flags %s: %s', (file, line, expected) => {
      const found = outsidePaths(file, `first line\n${line}\n`);
      expect(found).toContainEqual(expect.objectContaining({ file, line: 2, path: expected }));
      expect(found.every((f) => f.line === 2)).toBe(true);
    });

    it.each([
      ['libs/stats/src/a.spec.ts', "path.resolve(__dirname, '../../..')"],
      ['libs/stats/src/a.spec.ts', "import { x } from '../../../test/support/reference';"],
      ['deploy/k8s/overlays/production/kustomization.yaml', '  - ../../base'],
      ['docs/api.md', '`GET /v1/runs/:id/events` and /health'],
      ['scripts/x.sh', 'exec /usr/sbin/nats-server -js -sd /var/lib/nats-server'],
      ['deploy/compose/compose.yaml', '    working_dir: /work'],
    ])('passes %s: %s', (file, line) => {
      expect(outsidePaths(file, line)).toEqual([]);
    });
  });
});
