import { integerOption, parseOptions, type Command } from '../command';
import { dataDirOf } from '../cli';
import { CliError, EXIT } from '../exit-codes';
import { DataDirBusyError } from '../embedded/data-dir';
import type * as EmbeddedServerModule from '../embedded/embedded-server';

/**
 * `evals serve`: the whole service in one process on the embedded default (docs/embedded.md) - PGlite,
 * the in-process bus and in-memory caches in `.evals/` - or on whichever of DATABASE_URL, NATS_URL and
 * REDIS_URL are set. Runs until SIGINT or SIGTERM, then shuts down gracefully (X4).
 */
export const serveCommand: Command = {
  name: 'serve',
  summary: 'Run the whole service in one process on the embedded default (no servers needed).',
  usage: 'evals serve [--port N] [--host ADDRESS] [--data-dir DIR]',
  options: [
    '--port N                 HTTP port (default 3000; 0 picks a free one)',
    '--host ADDRESS           listen address (default 127.0.0.1; access control is off unless EVALS_AUTH=required)',
    '--data-dir DIR           where the data lives (EVALS_DATA_DIR; default ./.evals)',
  ],
  example: 'evals serve --port 3000',
  async run(args, io) {
    const { values } = parseOptions(args, { port: { type: 'string' }, host: { type: 'string' }, 'data-dir': { type: 'string' } });
    const port = integerOption(values.port, '--port', 0, 65535) ?? 3000;
    const host = values.host ?? '127.0.0.1';
    if (host !== '127.0.0.1' && host !== 'localhost' && host !== '::1' && (io.env.EVALS_AUTH ?? '') !== 'required') {
      throw new CliError(EXIT.USAGE, `--host ${host} is reachable from other machines: set EVALS_AUTH=required (and create a key) first`);
    }
    const dataDir = dataDirOf({ cwd: io.cwd, env: values['data-dir'] ? { ...io.env, EVALS_DATA_DIR: values['data-dir'] } : io.env });
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
        server = await startEmbeddedServer({ dataDir, env: io.env, port, host, mode: 'serve' });
      } catch (error) {
        if (error instanceof DataDirBusyError) throw new CliError(EXIT.USAGE, `${error.message}: one process at a time opens a data directory`);
        const code = (error as { code?: unknown } | null)?.code;
        // ConfigError, by its code: importing the class would load Nest for every command.
        if (code === 'CONFIG_INVALID') throw new CliError(EXIT.USAGE, (error as Error).message);
        throw new CliError(code === 'EADDRINUSE' || code === 'EACCES' ? EXIT.USAGE : EXIT.UNREACHABLE, `could not start: ${(error as Error)?.name ?? 'error'}: ${(error as Error)?.message ?? ''}`);
      }
      io.err(
        [
          `evals serve: ${server.url}  (database: ${server.adapters.database}, bus: ${server.adapters.bus}, data: ${dataDir})`,
          `  the HTTP API: ${server.url}/openapi.json; other evals commands run here use it without --server`,
          '  Ctrl-C stops it; the data stays for the next start',
        ].join('\n'),
      );
      await stopped;
      await server.close();
      io.err('evals serve: stopped');
      return EXIT.PASS;
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  },
};
