/**
 * Prints where a V8 CPU profile (`.cpuprofile`, as written by cpu-profile-hook.js) spent its time: the share
 * of samples by self time per function, per source area (our libs and apps, each dependency), the idle
 * share, and - what locates a cost in our code - self time charged to the nearest caller of ours (a `pg`
 * row parser's time lands on the repository method that ran the query; idle, program and garbage-collector
 * time stay out of that view). `dispatch` in every profile, idle apps included, is the inspector writing
 * the profile itself. Diagnostic only: `node -r @swc-node/register bench/pipeline/profile-summary.ts <file> [top]`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
  readonly startTime: number;
  readonly endTime: number;
}

const root = path.resolve(__dirname, '../..');

function area(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(native)';
  const file = url.replace(/^file:\/\//, '');
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
  if (nm) return nm[1];
  if (file.startsWith('node:')) return 'node internals';
  const rel = path.relative(root, file);
  const m = /^(?:dist\/)?(apps|libs)\/([^/]+)/.exec(rel); // dist/: the compiled apps the pipeline bench runs
  return m ? `${m[1]}/${m[2]}` : rel.startsWith('..') ? file : rel;
}

export function summarize(file: string, top = 25): string {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const ours = (url: string) => /^(?:dist\/)?(apps|libs)\//.test(path.relative(root, url.replace(/^file:\/\//, '')));
  const label = (f: ProfileNode['callFrame']) => `${f.functionName || '(anonymous)'} ${path.relative(root, f.url.replace(/^file:\/\//, ''))}:${f.lineNumber + 1}`;
  const nearest = new Map<string, number>();
  const fns = new Map<string, number>();
  const areas = new Map<string, number>();
  for (const [id, us] of self) {
    const f = byId.get(id)!.callFrame;
    const rel = f.url ? path.relative(root, f.url.replace(/^file:\/\//, '')) : '';
    const key = `${f.functionName || '(anonymous)'} ${rel ? `${rel}:${f.lineNumber + 1}` : ''}`.trim();
    fns.set(key, (fns.get(key) ?? 0) + us);
    const a = area(f.url, f.functionName);
    areas.set(a, (areas.get(a) ?? 0) + us);
    if (f.functionName === '(idle)' || f.functionName === '(program)' || f.functionName === '(garbage collector)') continue;
    let at: number | undefined = id;
    while (at !== undefined && !ours(byId.get(at)!.callFrame.url)) at = parent.get(at);
    const owner = at === undefined ? `(no caller of ours) ${f.functionName || '(anonymous)'}` : label(byId.get(at)!.callFrame);
    nearest.set(owner, (nearest.get(owner) ?? 0) + us);
  }
  const idle = areas.get('(idle)') ?? 0;
  const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)}%`;
  const lines = [
    `${path.basename(file)}: ${(total / 1e6).toFixed(1)} s sampled, idle ${pct(idle).trim()}`,
    '  by area (self time):',
    ...[...areas].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([k, v]) => `    ${pct(v)}  ${k}`),
    `  top ${top} functions (self time):`,
    ...[...fns].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, v]) => `    ${pct(v)}  ${k}`),
    `  top ${top} by the nearest caller in apps/ or libs/ (self time charged to it):`,
    ...[...nearest].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, v]) => `    ${pct(v)}  ${k}`),
  ];
  return lines.join('\n');
}

if (require.main === module) {
  const [file, top] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: profile-summary.ts <file.cpuprofile> [top]\n');
    process.exit(2);
  }
  process.stdout.write(`${summarize(file, top ? Number(top) : 25)}\n`);
}
