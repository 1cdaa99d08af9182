/**
 * How the benchmarks start the service's apps: BENCH_APPS=dist (default) runs the compiled
 * dist/apps/<app>/src/main.js, as the image does (deploy/docker/entrypoint.sh); BENCH_APPS=source runs
 * apps/<app>/src/main.ts through @swc-node/register, as the tests do. The loader alone keeps ~75 MiB
 * resident in every process, so memory is only comparable with production in `dist`.
 *
 * `dist` is rebuilt first when any source file of apps/ or libs/ is newer than the last build (tsc
 * incremental, then tsc-alias and the dashboard assets: `npm run build`'s steps). Type errors do not stop
 * it: tsc still emits, and the bench runs what it emitted, as @swc-node/register would run the same source.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export type AppRuntime = 'source' | 'dist';

const root = path.resolve(__dirname, '../..');

export function appRuntime(): AppRuntime {
  const raw = process.env.BENCH_APPS ?? 'dist';
  if (raw !== 'dist' && raw !== 'source') throw new Error(`BENCH_APPS must be dist or source, got ${raw}`);
  return raw;
}

/** Builds dist/ when it is missing or older than a source file; returns a line saying what it did. */
export function ensureBuilt(): string {
  const stamp = path.join(root, 'dist', '.bench-build-stamp');
  const built = fs.existsSync(stamp) && fs.existsSync(path.join(root, 'dist', 'apps', 'ingestion', 'src', 'main.js')) ? fs.statSync(stamp).mtimeMs : 0;
  const newest = Math.max(newestSource(path.join(root, 'apps')), newestSource(path.join(root, 'libs')), mtime(path.join(root, 'tsconfig.json')), mtime(path.join(root, 'tsconfig.build.json')));
  if (built > newest) return 'apps: dist/ (compiled; up to date)';
  const started = Date.now();
  // The stamp's time is taken before the build: a file saved during it makes the next run build again.
  const stampTime = new Date();
  const bin = (name: string) => path.join(root, 'node_modules', '.bin', name);
  const tsc = spawnSync(bin('tsc'), ['-p', 'tsconfig.build.json', '--incremental', '--tsBuildInfoFile', 'dist/.tsbuildinfo'], { cwd: root, encoding: 'utf8' });
  if (tsc.error) throw tsc.error;
  const typeErrors = (tsc.stdout.match(/error TS\d+/g) ?? []).length;
  if (tsc.status !== 0 && typeErrors === 0) throw new Error(`tsc failed:\n${tsc.stdout}${tsc.stderr}`);
  for (const [cmd, args] of [
    [bin('tsc-alias'), ['-p', 'tsconfig.build.json']],
    [process.execPath, ['scripts/copy-dashboard-assets.js']],
  ] as const) {
    const step = spawnSync(cmd, [...args], { cwd: root, encoding: 'utf8' });
    if (step.error) throw step.error;
    if (step.status !== 0) throw new Error(`${path.basename(cmd)} failed:\n${step.stdout}${step.stderr}`);
  }
  fs.writeFileSync(stamp, '');
  fs.utimesSync(stamp, stampTime, stampTime);
  const warn = typeErrors > 0 ? `; ${typeErrors} type error(s) in the working tree, emitted anyway` : '';
  return `apps: dist/ (compiled; rebuilt in ${((Date.now() - started) / 1000).toFixed(1)} s${warn})`;
}

function mtime(file: string): number {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(full), mtime(full));
    else if (/\.(ts|json|html|css|js|svg)$/.test(entry.name)) newest = Math.max(newest, mtime(full));
  }
  return newest;
}

/**
 * BENCH_APP_HEAP: `deploy` (default) gives each app the NODE_OPTIONS its Deployment sets in
 * deploy/k8s/base/<app>.yaml (the V8 heap cap sized to its container), so the bench measures memory as
 * deployed; `none` leaves V8's own heap sizing. Extra NODE_OPTIONS (BENCH_APP_ENV, the profile hook) are
 * appended after it, so a flag given there wins.
 */
export function deployNodeOptions(app: string): string | undefined {
  const mode = process.env.BENCH_APP_HEAP ?? 'deploy';
  if (mode === 'none') return undefined;
  if (mode !== 'deploy') throw new Error(`BENCH_APP_HEAP must be deploy or none, got ${mode}`);
  const file = path.join(root, 'deploy', 'k8s', 'base', `${app}.yaml`);
  // The container's env list, `- name: NODE_OPTIONS` then `value: "..."` (the manifests are checked by deploy/manifests.spec.ts).
  const m = /- name: NODE_OPTIONS\s*\n\s*value:\s*"?([^"\n]*)"?/.exec(fs.readFileSync(file, 'utf8'));
  return m?.[1]?.trim() || undefined;
}

/** Per-app environment for startCluster: NODE_OPTIONS of deploy/ (see deployNodeOptions) before `extra`'s. */
export function appEnvs(apps: readonly string[], extra: Readonly<Record<string, string>>): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const app of apps) {
    const options = [deployNodeOptions(app), extra.NODE_OPTIONS].filter((x) => x !== undefined && x !== '').join(' ');
    if (options !== '') out[app] = { NODE_OPTIONS: options };
  }
  return out;
}
