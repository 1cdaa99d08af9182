import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * promptfoo 0.120.0 installed with npm into a folder of the temporary directory, as bench/peer does (the same
 * folder, BENCH_PROMPTFOO_DIR or os.tmpdir()/evals-bench-peer-promptfoo-0.120.0, so one install serves both).
 * Returns its binary.
 */
export const PROMPTFOO_VERSION = '0.120.0';

export function installPromptfoo(log: (line: string) => void = () => undefined): string {
  const dir = process.env.BENCH_PROMPTFOO_DIR ?? path.join(os.tmpdir(), `evals-bench-peer-promptfoo-${PROMPTFOO_VERSION}`);
  const bin = path.join(dir, 'node_modules', '.bin', 'promptfoo');
  if (!fs.existsSync(bin)) {
    log(`installing promptfoo ${PROMPTFOO_VERSION} into ${dir} (npm registry) ...`);
    fs.mkdirSync(dir, { recursive: true });
    if (!fs.existsSync(path.join(dir, 'package.json'))) fs.writeFileSync(path.join(dir, 'package.json'), '{"name":"peer-bench","private":true}\n');
    execFileSync('npm', ['install', `promptfoo@${PROMPTFOO_VERSION}`, '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, stdio: 'inherit' });
  }
  // promptfoo looks for its migrations beside dist/ (as bench/peer links them).
  const drizzle = path.join(dir, 'node_modules', 'promptfoo', 'drizzle');
  if (!fs.existsSync(drizzle)) fs.symlinkSync('dist/drizzle', drizzle);
  return bin;
}

/**
 * The environment promptfoo runs in, for the agreement test and bench:peer alike. Its per-run debug and
 * error log files are turned off: promptfoo 0.120.0 can write to its winston file transport after closing
 * it on exit ("write after end", an unhandled error that makes the eval exit 1 at random, seen in CI), and
 * neither caller reads those files. PROMPTFOO_CONFIG_DIR keeps its database out of the home directory.
 */
export function promptfooEnv(configDir: string): Record<string, string> {
  return {
    PROMPTFOO_DISABLE_TELEMETRY: '1',
    PROMPTFOO_DISABLE_UPDATE: '1',
    PROMPTFOO_DISABLE_DEBUG_LOG: '1',
    PROMPTFOO_DISABLE_ERROR_LOG: '1',
    PROMPTFOO_CONFIG_DIR: configDir,
  };
}
