import type { EmbeddedService } from '../command';
import { liveOwner } from './data-dir';
import type * as EmbeddedServerModule from './embedded-server';

/**
 * The embedded service for one CLI command: the `evals serve` that has the directory open (its URL is in
 * owner.json), else an all-in-one started in this process on a free loopback port, logging warnings to
 * stderr only so stdout stays the command's report. The server code is loaded only here: commands that
 * need no service never pay for Nest or PGlite.
 */
export async function openEmbedded(dataDir: string, env: Readonly<Record<string, string | undefined>>, waitMs = 30_000): Promise<EmbeddedService> {
  const deadline = Date.now() + waitMs;
  for (let owner = liveOwner(dataDir); owner; owner = liveOwner(dataDir)) {
    if (owner.url) return { url: owner.url, mode: 'shared', close: async () => undefined };
    // Another process is opening the directory right now: its URL appears once it listens.
    if (Date.now() > deadline) throw Object.assign(new Error(`process ${owner.pid} holds it but serves no URL`), { code: 'DATA_DIR_BUSY' });
    await new Promise((r) => setTimeout(r, 100));
  }
  const { startEmbeddedServer } = require('./embedded-server') as typeof EmbeddedServerModule;
  const server = await startEmbeddedServer({ dataDir, env, port: 0, logLevel: 'error', log: (line: string) => process.stderr.write(`${line}\n`) });
  return { url: server.url, mode: 'started', close: () => server.close() };
}
