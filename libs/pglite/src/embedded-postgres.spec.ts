import { spawnSync } from 'node:child_process';
import { wasmTierFlags } from './embedded-postgres';

describe('the embedded PostgreSQL WASM tier (issue 31)', () => {
  it('keeps a command on baseline code with a flag this V8 knows; the default raises none', () => {
    expect(wasmTierFlags('optimising')).toEqual([]);
    expect(wasmTierFlags(undefined)).toEqual([]);
    const flags = wasmTierFlags('baseline');
    expect(flags).toEqual(['--liftoff-only']);
    // v8.setFlagsFromString ignores a flag it does not know; node refuses one on its command line, so a V8
    // that renamed the flag fails here instead of quietly optimising again.
    expect(spawnSync(process.execPath, [...flags, '-e', '0']).status).toBe(0);
    expect(spawnSync(process.execPath, ['--liftoff-only-not-a-flag', '-e', '0']).status).not.toBe(0);
  });
});
