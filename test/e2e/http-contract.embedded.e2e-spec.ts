import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startEmbeddedServe } from '../support/embedded-process';
import { CONTRACT_ENV, httpApiContract } from './http-contract';

/**
 * The HTTP API contract (issue 7) on the one-process deployment: `evals serve` on PGlite and the in-process
 * bus, no servers, every route on one URL. Stopping it with SIGTERM must be graceful (exit code 0).
 */
httpApiContract('embedded', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-contract-embedded-'));
  let serve;
  try {
    serve = await startEmbeddedServe({ dataDir: path.join(dir, 'data'), env: { ...CONTRACT_ENV } });
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const server = serve;
  // On the embedded adapters, not on servers that happened to be configured.
  expect(server.stdout()).toContain('(database: pglite, bus: in-process,');
  return {
    url: (_app, route) => `${server.url}${route}`,
    async stop() {
      try {
        const code = await server.stop('SIGTERM');
        if (code !== 0) throw new Error(`evals serve exited with ${code} on SIGTERM:\n${server.stderr().slice(-3000)}`);
        expect(server.stdout()).toContain('evals serve: stopped');
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
});
