import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';

/**
 * `evals serve` as a child process on the embedded adapters (PGlite, the in-process bus, no servers), for
 * end-to-end tests of the one-process deployment. The child's environment has no DATABASE_URL, NATS_URL or
 * REDIS_URL (unless `env` sets them on purpose), so every port is embedded.
 */
export interface EmbeddedServe {
  /** The base URL the server printed, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything the child wrote to stderr so far (errors). */
  stderr(): string;
  /** Everything the child wrote to stdout so far: the banner first, `evals serve: stopped` last (its log lines go to `<data-dir>/serve.log`). */
  stdout(): string;
  /** Sends `signal` (SIGTERM by default), waits for the exit and returns its code (null when killed by a signal). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const root = path.resolve(__dirname, '../..');
const BANNER = /evals serve: (http:\/\/[^\s]+)\s/;
const SERVER_VARIABLES = ['DATABASE_URL', 'DATABASE_SCHEMA', 'NATS_URL', 'REDIS_URL', 'EVALS_STREAM_PREFIX', 'EVALS_SUBJECT_PREFIX'];

export async function startEmbeddedServe(options: {
  dataDir: string;
  env?: Record<string, string>;
  /** How long to wait for the banner (PGlite init and migrations on a fresh dir take ~5 s). */
  startTimeoutMs?: number;
  /** Extra arguments after `serve --port 0 --data-dir DIR`. */
  args?: string[];
}): Promise<EmbeddedServe> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const name of SERVER_VARIABLES) delete env[name];
  Object.assign(env, { NO_COLOR: '1' }, options.env ?? {});

  const child = spawn(process.execPath, [path.join(root, 'bin', 'evals.js'), 'serve', '--port', '0', '--data-dir', options.dataDir, ...(options.args ?? [])], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  let out = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const stop = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> => {
    if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code = await exited;
    clearTimeout(timer);
    return code;
  };

  const timeoutMs = options.startTimeoutMs ?? 90_000;
  const url = await new Promise<string>((resolve, reject) => {
    const fail = (why: string) => {
      cleanup();
      reject(new Error(`evals serve ${why}:\n--- stderr ---\n${err.slice(-3000)}\n--- stdout ---\n${out.slice(-3000)}`));
    };
    const onData = () => {
      const m = BANNER.exec(out);
      if (m) {
        cleanup();
        resolve(m[1]);
      }
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => fail(`exited before it listened (code ${code}, signal ${signal})`);
    const timer = setTimeout(() => fail(`printed no URL in ${timeoutMs} ms`), timeoutMs);
    function cleanup() {
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      child.off('exit', onExit);
    }
    child.stdout!.on('data', onData);
    child.once('exit', onExit);
    onData();
  }).catch(async (error: unknown) => {
    await stop('SIGKILL');
    throw error;
  });

  return { url, child, stderr: () => err, stdout: () => out, stop };
}
