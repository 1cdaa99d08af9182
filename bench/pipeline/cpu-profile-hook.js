/**
 * Diagnostic only, loaded into the app processes by the pipeline benchmark with `NODE_OPTIONS=--require`
 * when BENCH_CPU_PROFILE_DIR is set (Node refuses `--cpu-prof` in NODE_OPTIONS). It changes nothing in the
 * apps: it polls `<dir>/control`; when the file names a phase it starts the V8 sampling profiler, and when
 * the file is emptied it writes `<dir>/<phase>-<app>.cpuprofile` (open it in Chrome DevTools, or summarise
 * it with `node -r @swc-node/register bench/pipeline/profile-summary.ts <file>`).
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const inspector = require('node:inspector');

const dir = process.env.EVALS_BENCH_PROFILE_DIR;
const main = process.argv.find((a) => /apps[\\/][^\\/]+[\\/]src[\\/]main\.[jt]s$/.test(a));
// The apps of bench:pipeline (apps/<app>/src/main.ts from source, dist/apps/<app>/src/main.js built), or `evals serve` of bench:embedded.
const app = main ? path.basename(path.dirname(path.dirname(main))) : process.argv.includes('serve') ? 'serve' : null;
if (dir && app) {
  const control = path.join(dir, 'control');
  const session = new inspector.Session();
  session.connect();
  let phase = '';
  const timer = setInterval(() => {
    let wanted = '';
    try {
      wanted = fs.readFileSync(control, 'utf8').trim();
    } catch {
      wanted = '';
    }
    if (wanted === phase) return;
    if (phase) {
      const done = phase;
      session.post('Profiler.stop', (error, result) => {
        if (!error && result) fs.writeFileSync(path.join(dir, `${done}-${app}.cpuprofile`), JSON.stringify(result.profile));
      });
    }
    phase = wanted;
    if (phase) {
      session.post('Profiler.enable', () => session.post('Profiler.setSamplingInterval', { interval: 500 }, () => session.post('Profiler.start')));
    }
  }, 100);
  timer.unref();
}
