import type { EmbeddedService } from '../command';
import { DataDirBusyError, liveOwner } from './data-dir';
import type * as EmbeddedServerModule from './embedded-server';

/**
 * The embedded service for one CLI command: the `evals serve` that has the directory open (its URL is in
 * owner.json), else an all-in-one started in this process on a free loopback port, logging errors to stderr
 * only so stdout stays the command's report. While another command has the directory (its own server,
 * which ends with it) or an `evals serve` is still starting, this one waits for it, saying so once. The
 * server code is loaded only here: commands that need no service never pay for Nest or PGlite.
 */
export async function openEmbedded(
  dataDir: string,
  env: Readonly<Record<string, string | undefined>>,
  notify: (line: string) => void,
  waitMs = 10 * 60_000,
): Promise<EmbeddedService> {
  const deadline = Date.now() + waitMs;
  let said = false;
  for (;;) {
    const owner = liveOwner(dataDir);
    if (!owner) {
      const { startEmbeddedServer } = require('./embedded-server') as typeof EmbeddedServerModule;
      try {
        const server = await startEmbeddedServer({ dataDir, env, port: 0, mode: 'command', logLevel: 'error', log: (line: string) => process.stderr.write(`${line}\n`) });
        return { url: server.url, mode: 'started', close: () => server.close() };
      } catch (error) {
        // Another process claimed it between our look and our claim: wait for that one like for any other.
        if (!(error instanceof DataDirBusyError) || error.owner === null) throw error;
        continue;
      }
    }
    if (owner.mode === 'serve' && owner.url) return { url: owner.url, mode: 'shared', close: async () => undefined };
    if (Date.now() > deadline) throw Object.assign(new Error(`process ${owner.pid} still has it open`), { code: 'DATA_DIR_BUSY' });
    if (!said) {
      notify(
        owner.mode === 'command'
          ? `evals: waiting for process ${owner.pid}, another evals command using ${dataDir} (\`evals serve\` lets commands share one service)`
          : `evals: waiting for the evals serve starting in process ${owner.pid}`,
      );
      said = true;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
