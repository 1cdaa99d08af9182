import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { repoRoot } from './cli.testing';

interface Host {
  setFlags(flag: string): void;
  cpuSeconds(): number;
  onExit(fn: () => void): void;
}
const { v8Profile, applyV8Profile, COMMAND_FLAGS, OPTIMISE_AFTER_CPU_SECONDS } = require(path.join(repoRoot, 'bin', 'v8-profile.js')) as {
  v8Profile: (args: readonly string[]) => { name: string; flags: readonly string[] };
  applyV8Profile: (args: readonly string[], host: Host) => { name: string };
  COMMAND_FLAGS: readonly string[];
  OPTIMISE_AFTER_CPU_SECONDS: number;
};

/**
 * Issue 31, round 4: what the `evals` process asks of V8 (bin/v8-profile.js) - a command favours its peak
 * memory, `evals serve` keeps V8's defaults - raised before any module is compiled, with a code cache per
 * profile.
 */
describe('unit: bin/v8-profile.js', () => {
  it('keeps V8 defaults for evals serve, wherever the global --project puts it, and the command flags for the rest', () => {
    for (const args of [['serve'], ['serve', '--port', '0'], ['--project', 'team-a', 'serve'], ['--project=team-a', 'serve']]) expect([args, v8Profile(args)]).toEqual([args, { name: 'serve', flags: [] }]);
    for (const args of [['run', '--suite', 'serve'], ['gate'], ['--project', 'serve', 'run'], [], ['--help']]) expect([args, v8Profile(args).name]).toEqual([args, 'command']);
    expect(v8Profile(['run']).flags).toEqual(COMMAND_FLAGS);
  });

  it('gives a long command TurboFan back once it has used enough CPU, once, and puts the start flags back at exit for the code cache', () => {
    jest.useFakeTimers();
    try {
      const raised: string[] = [];
      let cpu = 0;
      let exit: (() => void) | undefined;
      applyV8Profile(['run'], { setFlags: (f) => raised.push(f), cpuSeconds: () => cpu, onExit: (fn) => (exit = fn) });
      expect(raised).toEqual(COMMAND_FLAGS);
      cpu = OPTIMISE_AFTER_CPU_SECONDS - 0.5;
      jest.advanceTimersByTime(5_000);
      expect(raised).toEqual(COMMAND_FLAGS);
      cpu = OPTIMISE_AFTER_CPU_SECONDS;
      jest.advanceTimersByTime(1_000);
      jest.advanceTimersByTime(10_000);
      expect(raised).toEqual([...COMMAND_FLAGS, '--opt']);
      exit!();
      expect(raised.at(-1)).toBe('--no-opt');

      const serve: string[] = [];
      applyV8Profile(['serve'], { setFlags: (f) => serve.push(f), cpuSeconds: () => 1_000, onExit: () => undefined });
      jest.advanceTimersByTime(5_000);
      expect(serve).toEqual([]);
    } finally {
      jest.useRealTimers();
    }
  });

  it('raises only flags this V8 knows (setFlagsFromString would ignore a renamed one; node refuses it)', () => {
    expect(COMMAND_FLAGS).toEqual(expect.arrayContaining(['--liftoff-only', '--no-opt']));
    const known = spawnSync(process.execPath, [...COMMAND_FLAGS, '-e', '0'], { encoding: 'utf8' });
    expect({ status: known.status, stderr: known.stderr }).toEqual({ status: 0, stderr: '' });
    expect(spawnSync(process.execPath, ['--no-opt-not-a-flag', '-e', '0']).status).not.toBe(0);
  });

  it('a command that starts the embedded service meets no code-cache entry it must reject on its second run', () => {
    // Before the profile, --liftoff-only was raised where PGlite starts: every module loaded until then had its
    // cache written under the new flags and rejected by the next start (47 recompiled on every command).
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-v8-profile-'));
    try {
      const stats = path.join(dir, 'stats.js');
      fs.writeFileSync(stats, `process.on('exit', () => process.stderr.write('CODE-CACHE ' + JSON.stringify(require(${JSON.stringify(path.join(repoRoot, 'bin', 'code-cache.js'))}).stats) + '\\n'));\n`);
      const run = () => {
        const child = spawnSync(
          process.execPath,
          ['-r', stats, path.join(repoRoot, 'bin', 'evals.js'), 'run', '--suite', path.join(repoRoot, 'examples', 'support-triage.suite.yaml'), '--outputs', path.join(repoRoot, 'examples', 'support-triage.good.outputs.jsonl'), '--subject-id', 'profile', '--json'],
          { cwd: dir, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', EVALS_SERVER: '', EVALS_DATA_DIR: path.join(dir, 'data'), EVALS_CODE_CACHE: '' } },
        );
        const line = /CODE-CACHE (.*)/.exec(child.stderr)?.[1];
        expect({ status: child.status, line: line !== undefined }).toEqual({ status: 0, line: true });
        return JSON.parse(line!) as { cached: number; accepted: number; rejected: number };
      };
      run();
      const second = run();
      expect(second.cached).toBeGreaterThan(100);
      expect(second.rejected).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
