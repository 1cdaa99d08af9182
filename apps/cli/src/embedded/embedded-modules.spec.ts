import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { repoRoot } from '../cli.testing';

/**
 * Issue 15, the cold start of an embedded command: the all-in-one's module graph holds no client of a server
 * it does not talk to. ioredis (about 0.1 s of CPU to load) and the NATS TCP transport are required only
 * when REDIS_URL / NATS_URL name a server; a top-level `import Redis from 'ioredis'` anywhere in the
 * graph would bring them back into every `evals run`.
 */
describe('unit: the modules of the embedded all-in-one (issue 15)', () => {
  /** The files `require` loaded for one module of the all-in-one. */
  function loadedBy(file: string): string[] {
    return load(file).files;
  }

  /** The files `require` loaded, and the modules of Node itself (`process.moduleLoadList`). */
  function load(file: string): { files: string[]; builtins: string[] } {
    const script = [
      `require(${JSON.stringify(path.join(repoRoot, 'bin/register-sources.js'))});`,
      `require(${JSON.stringify(path.join(repoRoot, file))});`,
      `process.stdout.write(JSON.stringify({ files: Object.keys(require.cache), builtins: process.moduleLoadList }));`,
    ].join('\n');
    return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: repoRoot, encoding: 'utf8' })) as { files: string[]; builtins: string[] };
  }

  it('loads no Redis client, no NATS client and no YAML parser', () => {
    const files = loadedBy('apps/cli/src/embedded/embedded-app.ts');
    // The graph did load (a broken require would make the lists below trivially empty).
    expect(files.some((f) => f.includes(`${path.sep}typeorm${path.sep}`))).toBe(true);
    expect(files.some((f) => f.endsWith(path.join('libs', 'bus', 'src', 'in-process.bus.ts')))).toBe(true);
    // Nor the YAML library: it loads with the first suite parsed (suite.parser.ts).
    const unwanted = files.filter((f) => /node_modules[\\/](ioredis|@nats-io[\\/][a-z-]+|yaml)[\\/]/.test(f));
    expect(unwanted).toEqual([]);
  });

  // A parameter typed `Response` from express, imported under that name, makes the decorator metadata name the
  // global `Response` - the web Response - and reading it loads Node's fetch implementation (undici, about 50 ms
  // of CPU at every start). The controllers import express's types under other names.
  it("does not load Node's fetch implementation (undici): no decorator metadata names the web Request or Response", () => {
    const { files, builtins } = load('apps/cli/src/embedded/embedded-app.ts');
    expect(files.some((f) => f.endsWith(path.join('apps', 'read-model', 'src', 'dashboard', 'dashboard-upstream.controller.ts')))).toBe(true);
    expect(builtins.filter((m) => m.includes('undici'))).toEqual([]);
  });

  // PGlite's start overlaps the framework's loading only if it is started before the framework loads.
  it('starts PGlite from a module that loads neither Nest nor TypeORM: they are required after', () => {
    const files = loadedBy('apps/cli/src/embedded/embedded-server.ts');
    expect(files.some((f) => f.endsWith(path.join('libs', 'pglite', 'src', 'embedded-postgres.ts')))).toBe(true);
    // Nor TypeORM (@evals/persistence): the sooner the worker starts, the more of its start is hidden.
    expect(files.filter((f) => /node_modules[\\/]typeorm[\\/]/.test(f))).toEqual([]);
    // Nest from node_modules, or from the framework bundle (bin/framework-bundle.js) that stands in for it.
    expect(files.filter((f) => /node_modules[\\/](@nestjs[\\/]|\.cache[\\/]evals-cli[\\/]framework-)/.test(f) || f.endsWith('embedded-app.ts'))).toEqual([]);
  });
});
