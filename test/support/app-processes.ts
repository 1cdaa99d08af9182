import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { appRole, createDataSource, migrate } from '@evals/persistence';
import { testServers } from './servers';

/**
 * Starts the service's apps as real, separate processes for end-to-end tests, each on its own port, all
 * sharing one test schema and one set of prefixed streams and subjects. Logs go to files, so tests can
 * scan them (D1 canaries) and show them when something fails.
 */
export type AppName = 'ingestion' | 'scoring-worker' | 'read-model' | 'regression';

export interface AppProcess {
  readonly name: AppName;
  readonly port: number;
  readonly logFile: string;
  child: ChildProcess;
}

export interface AppCluster {
  readonly apps: Map<AppName, AppProcess>;
  readonly env: Record<string, string>;
  readonly logDir: string;
  url(app: AppName, route: string): string;
  start(app: AppName, instance?: string): Promise<AppProcess>;
  stop(app: AppName, signal?: NodeJS.Signals): Promise<void>;
  stopAll(): Promise<void>;
  logs(): string;
}

const ownRoot = path.resolve(__dirname, '../..');
// Below Linux's ephemeral range (32768-60999): a port there can be taken at any moment by the local end of
// an outgoing connection (to PostgreSQL, NATS, ...), which made an app fail with EADDRINUSE now and then.
let nextPort = 20000 + Math.floor(Math.random() * 10000);

export async function startCluster(options: {
  schema: string;
  streamPrefix: string;
  subjectPrefix: string;
  apps: AppName[];
  env?: Record<string, string>;
  /**
   * 'source' (default): apps/<app>/src/main.ts through @swc-node/register. 'dist': the compiled
   * dist/apps/<app>/src/main.js of `npm run build`, as the image runs it (benchmarks: the loader alone
   * costs ~75 MiB of resident memory per process).
   */
  runtime?: 'source' | 'dist';
  /** Extra environment of one app, over `env` (benchmarks: each app's NODE_OPTIONS as deploy/ sets it). */
  appEnv?: Partial<Record<AppName, Record<string, string>>>;
  /**
   * The checkout whose apps run (default this one). Another one - a previous release checked out by
   * test/upgrade/upgrade-fixture.ts - is also migrated by its own migration job, not by this checkout's code.
   */
  root?: string;
}): Promise<AppCluster> {
  const root = options.root ?? ownRoot;
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-e2e-'));
  // Issue 27: the migrations run once, as the admin the tests use; each app then connects as its own role
  // (libs/persistence ownership.ts), so a read or write of another app's table fails the test that makes it.
  const asRoles = options.env?.DATABASE_URL === undefined;
  if (asRoles) await (root === ownRoot ? migrateSchema(options.schema) : migrateWithJob(root, options.schema));
  const env: Record<string, string> = {
    DATABASE_URL: testServers.postgres.url,
    ...(asRoles ? { EVALS_MIGRATE: 'job' } : {}),
    DATABASE_SCHEMA: options.schema,
    NATS_URL: testServers.nats.url,
    REDIS_URL: testServers.redis.url,
    EVALS_STREAM_PREFIX: options.streamPrefix,
    EVALS_SUBJECT_PREFIX: options.subjectPrefix,
    EVALS_HMAC_SECRET: 'e2e-secret-0123456789-0123456789-0123456789',
    LOG_LEVEL: 'info',
    // Access control is off unless a test asks for it (env: { EVALS_AUTH: 'required' }): test/e2e/access.e2e-spec.ts.
    EVALS_AUTH: 'disabled',
    ...(options.env ?? {}),
  };
  const apps = new Map<AppName, AppProcess>();
  const cluster: AppCluster = {
    apps,
    env,
    logDir,
    url: (app, route) => `http://127.0.0.1:${apps.get(app)!.port}${route}`,
    async start(app, instance = '') {
      for (let attempt = 1; ; attempt++) {
        const port = nextPort++;
        const logFile = path.join(logDir, `${app}${instance}.log`);
        const out = fs.openSync(logFile, 'a');
        const args = options.runtime === 'dist' ? [path.join(root, 'dist', 'apps', app, 'src', 'main.js')] : ['-r', '@swc-node/register', path.join(root, 'apps', app, 'src', 'main.ts')];
        const child = spawn(process.execPath, args, {
          cwd: root,
          env: { ...process.env, ...env, ...(asRoles ? { DATABASE_URL: roleUrl(app) } : {}), ...(options.appEnv?.[app] ?? {}), PORT: String(port) },
          stdio: ['ignore', out, out],
        });
        const proc: AppProcess = { name: app, port, logFile, child };
        try {
          await waitForHealth(port, child, logFile);
        } catch (error) {
          // Another listener had the port: the next one, a few times.
          if (attempt < 3 && /EADDRINUSE/.test(String(error))) continue;
          throw error;
        }
        if (!instance) apps.set(app, proc);
        return proc;
      }
    },
    async stop(app, signal = 'SIGTERM') {
      const proc = apps.get(app);
      if (!proc) return;
      await stopProcess(proc.child, signal);
    },
    async stopAll() {
      await Promise.all([...apps.values()].map((p) => stopProcess(p.child, 'SIGTERM')));
    },
    logs() {
      return fs.readdirSync(logDir).map((f) => fs.readFileSync(path.join(logDir, f), 'utf8')).join('\n');
    },
  };
  for (const app of options.apps) await cluster.start(app);
  return cluster;
}

const ROLE_OF_APP: Record<AppName, string> = { ingestion: 'ingestion', 'scoring-worker': 'scoring', regression: 'regression', 'read-model': 'read_model' };

/** The test server's URL with the app's own login role (trust authentication on the test server). */
export function roleUrl(app: AppName): string {
  const url = new URL(testServers.postgres.url);
  url.username = appRole(ROLE_OF_APP[app] as Parameters<typeof appRole>[0]);
  url.password = '';
  return url.toString();
}

async function migrateSchema(schema: string): Promise<void> {
  const ds = createDataSource({ url: testServers.postgres.url, schema, poolSize: 1, applicationName: 'evals-e2e-migrate' });
  await ds.initialize();
  try {
    await migrate(ds);
  } finally {
    await ds.destroy();
  }
}

/** `npm run migrate` of the checkout at `root`, on `schema`, as the admin the tests use. */
async function migrateWithJob(root: string, schema: string): Promise<void> {
  await runScript(root, path.join('libs', 'persistence', 'src', 'migrate.ts'), { DATABASE_URL: testServers.postgres.url, DATABASE_SCHEMA: schema });
}

/** Runs a TypeScript script of the checkout at `root` (as its npm scripts do) to its end; its output, or an error with it. */
export function runScript(root: string, script: string, env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-r', '@swc-node/register', path.join(root, script)], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(output) : reject(new Error(`${script} in ${root} exited with ${code}: ${output.slice(-3000)}`))));
  });
}

export async function stopProcess(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(timer);
}

async function waitForHealth(port: number, child: ChildProcess, logFile: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`app on port ${port} exited with ${child.exitCode}:\n${fs.readFileSync(logFile, 'utf8').slice(-3000)}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`app on port ${port} not healthy in time:\n${fs.readFileSync(logFile, 'utf8').slice(-3000)}`);
}

/** Polls until `probe` returns a value (not undefined), or fails with the last state. */
export async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 30_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let delay = 20;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} not reached in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 250);
  }
}
