import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

// Issue 7: the embedded PostgreSQL (PGlite through its socket server, a pool of one) on a data directory
// runs the same migrations and append-only triggers, isolates a concurrent commit from a rollback (the trap
// of one shared PGlite session), and keeps its data across a close and reopen, in a process of its own as
// `evals serve` is. persistence.contract.ts holds it to everything the server does, in memory.
describe('integration: embedded PostgreSQL', () => {
  it.each(['in-process', 'worker'])('migrates, enforces append-only, isolates concurrent transactions, survives a restart (PGlite %s)', (connection) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-pglite-'));
    try {
      const stdout = execFileSync(process.execPath, ['-r', '@swc-node/register', path.join(__dirname, 'embedded-postgres.probe.ts'), dir, connection], {
        cwd: path.resolve(__dirname, '../../..'),
        timeout: 180_000,
      }).toString();
      const out = JSON.parse(stdout.trim().split('\n').pop()!);
      expect(out.applied).toBe(out.expected);
      expect(out.update_refused).toBe(true);
      expect(out.delete_refused).toBe(true);
      expect(out.after_concurrent).toEqual(['committed']);
      expect(out.applied_after_restart).toBe(0);
      // Issue 31: the directory came from the template, migrated already; its schema is the one the same
      // migrations make from nothing, to the column, index, trigger and grant.
      expect(out.applied).toBeLessThan(out.applied_from_scratch);
      expect(out.catalog).toEqual(out.catalog_from_scratch);
      expect(out.after_restart).toEqual(['committed']);
      // Issue 15: the settings every start passes (PGLITE_SETTINGS), not initdb's 128MB of resident buffers.
      expect(out.shared_buffers).toBe('16MB');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 200_000);
});
