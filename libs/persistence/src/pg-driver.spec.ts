import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

const root = path.resolve(__dirname, '../../..');

/** In a process of its own (what is loaded is per process): the modules of Node itself loaded, and `navigator` after. */
function afterCreatingADataSource(): { undici: string[]; navigator: string } {
  const script = [
    `require(${JSON.stringify(path.join(root, 'bin/register-sources.js'))});`,
    `const { createDataSource } = require(${JSON.stringify(path.join(root, 'libs/persistence/src/data-source.ts'))});`,
    // Not connected: the driver loads with the data source.
    `createDataSource({ url: 'postgres://nobody@127.0.0.1:1/none' });`,
    `if (!Object.keys(require.cache).some((f) => f.endsWith('/pg/lib/stream.js'))) throw new Error('pg did not load');`,
    `process.stdout.write(JSON.stringify({ undici: process.moduleLoadList.filter((m) => m.includes('undici')), navigator: typeof navigator }));`,
  ].join('\n');
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: root, encoding: 'utf8' })) as { undici: string[]; navigator: string };
}

// Issue 15: pg asks, while it loads, whether it runs in a Cloudflare Worker by constructing a web Response;
// on Node 20 that loads Node's fetch implementation (undici) at every start. loadPgDriver answers it without.
describe('unit: loading the pg driver (issue 15)', () => {
  it("loads no fetch implementation (undici), and leaves no global navigator behind on a Node that has none", () => {
    const after = afterCreatingADataSource();
    expect(after.undici).toEqual([]);
    expect(after.navigator).toBe(Number(process.versions.node.split('.')[0]) >= 21 ? 'object' : 'undefined');
  });
});
