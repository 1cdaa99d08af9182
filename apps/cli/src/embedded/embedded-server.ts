import { startEmbeddedPostgres } from '@evals/pglite';
import { claimDataDir, dataDirSecret, type OwnerMode } from './data-dir';
import type * as EmbeddedAppModule from './embedded-app';

export interface EmbeddedServerOptions {
  /** The data directory (`.evals` by default, docs/embedded.md). */
  readonly dataDir: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** 0: any free port. */
  readonly port: number;
  readonly host?: string;
  /**
   * `serve`: the URL goes into the directory, so other `evals` commands use this server; `command`: a CLI
   * command's own server, which others wait for instead of using (it stops with its command).
   */
  readonly mode: OwnerMode;
  /** Where the JSON log lines go (stdout for `evals serve`, stderr for a CLI command). */
  readonly log?: (line: string) => void;
  readonly logLevel?: 'debug' | 'info' | 'warn' | 'error';
}

export interface EmbeddedServer {
  readonly url: string;
  /** Which adapters it runs on: `embedded` or the configured server, per port. */
  readonly adapters: { readonly database: 'pglite' | 'postgresql'; readonly bus: 'in-process' | 'jetstream' };
  close(): Promise<void>;
}

/**
 * Starts the all-in-one (`evals serve`, and `evals run`/`gate`/... without --server): every empty one of
 * DATABASE_URL and NATS_URL is served by its embedded adapter - PGlite in `<dir>/postgres`, the
 * in-process bus journalled in `<dir>/bus` - and without REDIS_URL the rate limits and the verdict cache
 * live in memory. Access control defaults to disabled, since it listens on the loopback interface only.
 *
 * PGlite starts first, and this module imports nothing of the framework: for a command, in a worker
 * thread, its start (about a second of WASM) runs on another core while this thread loads Nest and the
 * four apps (embedded-app.ts) (issue 15).
 */
export async function startEmbeddedServer(options: EmbeddedServerOptions): Promise<EmbeddedServer> {
  const claim = claimDataDir(options.dataDir, options.mode);
  const cleanups: Array<() => Promise<void>> = [async () => claim.release()];
  const cleanup = async () => {
    for (const step of cleanups.splice(0).reverse()) await step().catch(() => undefined);
  };
  try {
    const env: Record<string, string | undefined> = {
      ...options.env,
      EVALS_HMAC_SECRET: options.env.EVALS_HMAC_SECRET || dataDirSecret(claim.dir.root),
      EVALS_AUTH: options.env.EVALS_AUTH || 'disabled',
      PORT: String(options.port),
    };
    // A command's own service runs PGlite in a worker thread, whose start then overlaps the framework's loading
    // (a cold 10 000-case `evals run` about 4% faster, 20-40 MiB more at its peak). `evals serve` keeps it in
    // this thread: over ten 10 000-case runs the worker cost 106 MiB more resident memory, and each
    // query's two thread hops 70 -> 99 ms at the median of a 100-case run (docs/benchmarks.md, fourth round).
    const connection = options.mode === 'command' ? 'worker' : 'in-process';
    // A command's PostgreSQL stays on V8's baseline WASM code: 50-70 MiB less at a first run's peak, no slower
    // for a command's length; `evals serve` lives long enough to repay the optimised code (embedded-postgres.ts).
    const wasmTier = options.mode === 'command' ? 'baseline' : 'optimising';
    const database = env.DATABASE_URL ? undefined : startEmbeddedPostgres(claim.dir.postgres, { connection, wasmTier });
    if (database) {
      // Its failure is answered where it is awaited (startAllInOne); until then it must not count as unhandled.
      database.catch(() => undefined);
      cleanups.push(async () => (await database).stop());
    }
    const { startAllInOne } = require('./embedded-app') as typeof EmbeddedAppModule;
    const app = await startAllInOne({ ...options, env, dir: claim.dir, database, cleanups });
    if (options.mode === 'serve') claim.advertise(app.url);
    return { ...app, close: cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
}
