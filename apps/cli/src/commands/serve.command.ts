import * as fs from 'node:fs';
import * as path from 'node:path';
import { integerOption, oneOf, parseOptions, type Command, type Io } from '../command';
import { dataDirOf } from '../cli';
import { CliError, EXIT, UsageError } from '../exit-codes';
import { DataDirBusyError } from '../embedded/data-dir';
import { startIdleCollector } from '../embedded/idle-gc';
import type * as EmbeddedServerModule from '../embedded/embedded-server';
import { repairBusJournals } from './serve-repair';

/** The log of `evals serve`, in the data directory unless --log-file says otherwise (docs/embedded.md). */
export const LOG_FILE = 'serve.log';

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/**
 * `evals serve`: the whole service in one process on the embedded default (docs/embedded.md) - PGlite,
 * the in-process bus and in-memory caches in `.evals/` - or on whichever of DATABASE_URL, NATS_URL and
 * REDIS_URL are set. Runs until SIGINT or SIGTERM, then shuts down gracefully (X4).
 */
export const serveCommand: Command = {
  name: 'serve',
  summary: 'Run the whole service in one process on the embedded default (no servers needed).',
  usage: 'evals serve [--port N] [--host ADDRESS] [--data-dir DIR] [--repair] [--log-level LEVEL] [--log-file FILE|-]',
  options: [
    '--port N                 HTTP port (default 3000; 0 picks a free one)',
    '--host ADDRESS           listen address (default 127.0.0.1; access control is off unless EVALS_AUTH=required)',
    '--data-dir DIR           where the data lives (EVALS_DATA_DIR; default ./.evals)',
    '--repair                 first make a refused bus journal openable: keeps its intact records, lists what it drops',
    '--log-level LEVEL        debug, info, warn or error (LOG_LEVEL; default info)',
    `--log-file FILE|-        where the JSON log lines go (default DIR/${LOG_FILE}); - for stdout, after the banner`,
  ],
  environment: [
    'EVALS_DATA_DIR           the data directory (--data-dir)',
    'LOG_LEVEL                debug, info, warn or error (--log-level wins)',
    'EVALS_AUTH               required: API keys on every route (needed with a --host other than the loopback)',
    'DATABASE_URL, NATS_URL   run on these servers instead of the embedded PGlite and bus (both or neither); REDIS_URL',
  ],
  exitCodes: 'Exit codes: 0 stopped cleanly (Ctrl-C, SIGTERM), 2 bad option or configuration, data directory in use or port taken, 3 could not start (a dependency failed, or a damaged bus journal: see --repair).',
  example: 'evals serve --port 3000',
  async run(args, io) {
    const { values } = parseOptions(args, { port: { type: 'string' }, host: { type: 'string' }, 'data-dir': { type: 'string' }, repair: { type: 'boolean' }, 'log-level': { type: 'string' }, 'log-file': { type: 'string' } });
    const port = integerOption(values.port, '--port', 0, 65535) ?? 3000;
    const logLevel = values['log-level'] === undefined ? undefined : oneOf(values['log-level'], '--log-level', LEVELS, 'info');
    const host = values.host ?? '127.0.0.1';
    if (host !== '127.0.0.1' && host !== 'localhost' && host !== '::1' && (io.env.EVALS_AUTH ?? '') !== 'required') {
      throw new UsageError(`--host ${host} is reachable from other machines: set EVALS_AUTH=required (and create a key) first`);
    }
    const dataDir = dataDirOf({ cwd: io.cwd, env: values['data-dir'] ? { ...io.env, EVALS_DATA_DIR: values['data-dir'] } : io.env });
    const logFile = values['log-file'] === '-' ? null : path.resolve(io.cwd, values['log-file'] ?? path.join(dataDir, LOG_FILE));
    const log = openLog(logFile, io);
    if (values.repair) await repairBusJournals(dataDir, io);
    // Loaded here, not at the top: the other commands never pay for Nest and PGlite.
    const { startEmbeddedServer } = require('../embedded/embedded-server') as typeof EmbeddedServerModule;
    // Signals are taken from before the start: a Ctrl-C during PGlite's initdb or the migrations waits for
    // them to finish and then closes cleanly, instead of leaving a half-initialised directory. A second one
    // gives up waiting.
    let signals = 0;
    let stopRequested: () => void = () => undefined;
    const stopped = new Promise<void>((resolve) => (stopRequested = resolve));
    const onSignal = () => {
      signals += 1;
      if (signals > 1) process.exit(130);
      stopRequested();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    try {
      let server;
      try {
        server = await startEmbeddedServer({ dataDir, env: io.env, port, host, mode: 'serve', log: log.write, ...(logLevel ? { logLevel } : {}) });
      } catch (error) {
        log.close();
        if (error instanceof DataDirBusyError) throw new CliError(EXIT.USAGE, `${error.message}: one process at a time opens a data directory`);
        const code = (error as { code?: unknown } | null)?.code;
        // ConfigError, by its code: importing the class would load Nest for every command.
        if (code === 'CONFIG_INVALID') throw new CliError(EXIT.USAGE, (error as Error).message);
        // A damaged bus journal: its message names the file and says what to do (--repair).
        if (code === 'JOURNAL_DAMAGED') throw new CliError(EXIT.UNREACHABLE, (error as Error).message);
        throw new CliError(
          code === 'EADDRINUSE' || code === 'EACCES' ? EXIT.USAGE : EXIT.UNREACHABLE,
          `could not start: ${(error as Error)?.name ?? 'error'}: ${(error as Error)?.message ?? ''}${logFile ? ` (the log: ${logFile})` : ''}`,
        );
      }
      // The banner is the first line on stdout: whoever starts the server reads its URL there, before any log line.
      io.out(
        [
          `evals serve: ${server.url}  (database: ${server.adapters.database}, bus: ${server.adapters.bus}, data: ${dataDir})`,
          `  the dashboard: ${server.url}/ (runs, scorecards, findings, gates, judges; docs/dashboard.md)`,
          `  the HTTP API: ${server.url}/openapi.json; other evals commands run here use it without --server`,
          `  logs: ${logFile ?? 'stdout'}; Ctrl-C stops it; the data stays for the next start`,
        ].join('\n'),
      );
      log.bannerShown();
      // Between runs the server gives their garbage back instead of idling at its peak (idle-gc.ts).
      const stopCollector = startIdleCollector();
      await stopped;
      stopCollector();
      await server.close();
      log.close();
      io.out('evals serve: stopped');
      return EXIT.PASS;
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  },
};

/**
 * The JSON log lines' destination. A file (appended, 0600 like the rest of the data directory; the lines
 * carry ids and counts, never an output, D1), or stdout, where the lines of the start-up wait until the
 * banner is out, so the banner is always the first line.
 */
function openLog(file: string | null, io: Io): { write: (line: string) => void; bannerShown: () => void; close: () => void } {
  if (file === null) {
    let held: string[] | null = [];
    return {
      write: (line) => (held ? held.push(line) : io.out(line)),
      bannerShown: () => {
        const lines = held ?? [];
        held = null;
        for (const line of lines) io.out(line);
      },
      close: () => undefined,
    };
  }
  let fd: number;
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    fd = fs.openSync(file, 'a', 0o600);
  } catch (error) {
    throw new CliError(EXIT.USAGE, `cannot open the log file ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'} (--log-file FILE, or - for stdout)`);
  }
  let open = true;
  return {
    // Synchronous: a line written before a crash is on disk.
    write: (line) => {
      if (open) fs.writeSync(fd, `${line}\n`);
    },
    bannerShown: () => undefined,
    close: () => {
      if (!open) return;
      open = false;
      fs.closeSync(fd);
    },
  };
}
