// What the `evals` process asks of V8, decided by what it is, before any module is compiled (issue 31,
// docs/benchmarks.md "round 4"). A command - `evals run`, `gate`, `suite push`, ... - lives seconds and is
// measured by its peak, and when it has no server it runs the whole service in its own process; `evals serve`
// lives long enough to repay V8's optimising compilers and has an idle collector that gives garbage back
// (apps/cli/src/embedded/idle-gc.ts), so it keeps V8's defaults.
//
// A command's flags:
// - `--liftoff-only`: PostgreSQL's WASM (PGlite) stays on V8's baseline code: 50-70 MiB lower at a first
//   run's peak, no slower for a command's length (libs/pglite, embedded-postgres.ts, which also raises it for
//   a caller of its own).
// - `--no-opt`: no TurboFan for JavaScript, for the same reason: its compile jobs run on background threads
//   whose zones come from glibc arenas that keep their high-water mark, and over a run this short the
//   compiles cost more CPU than the optimised code saves. A command still running after
//   OPTIMISE_AFTER_CPU_SECONDS of CPU is long enough to repay them and gets TurboFan back.
// - `--heap-growing-percent=30`: after a full collection the old generation may grow by 30% of what is live
//   before the next one, not up to four times it, so the garbage of a suite's push and of a run's scoring is
//   collected on the way instead of being carried to the end.
//
// Raised here, first, rather than where the embedded service starts: V8's code cache (bin/code-cache.js)
// records the flags a module was compiled under, and a flag raised half-way had every module loaded before
// it rejected and recompiled on every run (47 of them). Each profile keeps a code cache of its own, so a
// command and `evals serve` never reject each other's.
const v8 = require('node:v8');

const COMMAND_FLAGS = ['--liftoff-only', '--no-opt', '--heap-growing-percent=30'];

/** `serve` or `command`, from the CLI's arguments (the global `--project` may come first), and its flags. */
function v8Profile(args) {
  let i = 0;
  while (args[i] === '--project' || (typeof args[i] === 'string' && args[i].startsWith('--project='))) i += args[i] === '--project' ? 2 : 1;
  return args[i] === 'serve' ? { name: 'serve', flags: [] } : { name: 'command', flags: COMMAND_FLAGS };
}

/**
 * A command that has used this much CPU (every thread's) is long enough for optimised JavaScript to pay: a
 * first 100 000-case `evals run` took 46 s of CPU on baseline code against 33 s optimised. A 10 000-case
 * one uses about 5 s in all, and never gets there.
 */
const OPTIMISE_AFTER_CPU_SECONDS = 10;

const processCpuSeconds = () => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1e6;
};

/**
 * Raises the profile's flags in this process and returns the profile; a command on `--no-opt` gets
 * TurboFan back once it has used OPTIMISE_AFTER_CPU_SECONDS. `host` is this process (tests give their own).
 */
function applyV8Profile(args, host = { setFlags: v8.setFlagsFromString, cpuSeconds: processCpuSeconds, onExit: (fn) => process.once('exit', fn) }) {
  const profile = v8Profile(args);
  for (const flag of profile.flags) host.setFlags(flag);
  if (profile.flags.includes('--no-opt')) {
    const check = setInterval(() => {
      if (host.cpuSeconds() < OPTIMISE_AFTER_CPU_SECONDS) return;
      host.setFlags('--opt');
      clearInterval(check);
    }, 1000);
    check.unref();
    // The code cache is written at exit under the flags of that moment and read under those a start raises:
    // registered before bin/code-cache.js's own exit hook, this puts them back first.
    host.onExit(() => host.setFlags('--no-opt'));
  }
  return profile;
}

module.exports = { v8Profile, applyV8Profile, COMMAND_FLAGS, OPTIMISE_AFTER_CPU_SECONDS };
