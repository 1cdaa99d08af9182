import * as path from 'node:path';
import { runCli } from './cli';
import type { EmbeddedService, Io } from './command';
import { fakeFetch, repoRoot } from './cli.testing';

/**
 * The embedded default of the CLI (docs/embedded.md, docs/cli.md): a service command with no --server and
 * no EVALS_SERVER runs against the embedded service on the data directory, every endpoint that one URL.
 */
function harness(env: Record<string, string>, embedded?: (dataDir: string) => Promise<EmbeddedService>) {
  const opened: string[] = [];
  let closed = 0;
  const { fetch, calls } = fakeFetch((req) => (req.url.endsWith('/v1/baselines') ? { status: 200, json: { pins: [] } } : undefined));
  let out = '';
  let err = '';
  const io: Io = {
    out: (t) => (out += `${t}\n`),
    err: (t) => (err += `${t}\n`),
    env,
    isTty: false,
    cwd: repoRoot,
    fetch,
    embedded:
      embedded ??
      (async (dataDir) => {
        opened.push(dataDir);
        return { url: 'http://127.0.0.1:45678', mode: 'started', close: async () => void closed++ };
      }),
  };
  return { io, calls, opened, closed: () => closed, out: () => out, err: () => err };
}

describe('unit: the CLI uses the embedded service when no server is named (issue 7)', () => {
  it('opens it on ./.evals, sends every request to its one URL, and closes it after the command', async () => {
    const h = harness({});
    expect(await runCli(['baseline', 'list', '--json'], h.io)).toBe(0);
    expect(h.opened).toEqual([path.join(repoRoot, '.evals')]);
    expect(h.calls.map((c) => c.url)).toEqual(['http://127.0.0.1:45678/v1/baselines']);
    expect(h.closed()).toBe(1);
    expect(h.err()).toContain('no --server: embedded service on .evals');
  });

  it('honours EVALS_DATA_DIR', async () => {
    const h = harness({ EVALS_DATA_DIR: '/tmp/elsewhere' });
    await runCli(['baseline', 'list'], h.io);
    expect(h.opened).toEqual(['/tmp/elsewhere']);
  });

  it('does not start it when --server or EVALS_SERVER names a service', async () => {
    const flag = harness({});
    await runCli(['baseline', 'list', '--server', 'http://svc.test:3001'], flag.io);
    const variable = harness({ EVALS_SERVER: 'http://svc.test:3001' });
    await runCli(['baseline', 'list'], variable.io);
    expect(flag.opened).toEqual([]);
    expect(variable.opened).toEqual([]);
    expect(flag.calls.map((c) => c.url)).toEqual(['http://svc.test:3004/v1/baselines']);
    expect(variable.calls.map((c) => c.url)).toEqual(['http://svc.test:3004/v1/baselines']);
  });

  it('does not start it for a command that needs no service, nor for `demo --local`', async () => {
    const h = harness({});
    expect(await runCli(['suite', 'validate', 'examples/support-triage.suite.yaml'], h.io)).toBe(0);
    expect(await runCli(['demo', '--local'], h.io)).toBe(0);
    expect(h.opened).toEqual([]);
    expect(h.out()).toContain('verdict: REGRESSED');
  });

  it('closes it even when the command fails, and a shared `evals serve` is not announced as started', async () => {
    let closed = 0;
    const h = harness({}, async () => ({ url: 'http://127.0.0.1:45678', mode: 'shared', close: async () => void closed++ }));
    // The service refuses the run (the scripted API has no /v1/runs: 404).
    expect(await runCli(['run', '--suite', 's', '--outputs', 'examples/support-triage.good.outputs.jsonl', '--subject-id', 'x'], h.io)).toBe(2);
    expect(closed).toBe(1);
    expect(h.err()).not.toContain('started for this command');
  });

  it('does not open it at all when the command fails by itself (a missing outputs file: issue 16)', async () => {
    const h = harness({});
    expect(await runCli(['run', '--suite', 's', '--outputs', 'missing.jsonl', '--subject-id', 'x'], h.io)).toBe(2);
    expect(h.err()).toContain('cannot read outputs file');
    expect(h.opened).toEqual([]);
    expect(h.calls).toEqual([]);
  });

  it('a service that cannot start is exit 3, naming the directory and the cause', async () => {
    const h = harness({}, async () => {
      throw Object.assign(new Error('process 42 holds it but serves no URL'), { code: 'DATA_DIR_BUSY' });
    });
    expect(await runCli(['baseline', 'list'], h.io)).toBe(3);
    expect(h.err()).toContain(`the embedded service on ${path.join(repoRoot, '.evals')} did not start (DATA_DIR_BUSY: process 42 holds it but serves no URL)`);
  });
});
