#!/usr/bin/env node
// The `evals` CLI. In a checkout (the TypeScript sources and swc are there) it runs the sources, so it is
// never a stale build; an installed package, which has only the build, runs dist/.
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const source = path.join(root, 'apps', 'cli', 'src', 'main.ts');
let swc = null;
try {
  swc = require.resolve('@swc-node/register', { paths: [root] });
} catch {
  swc = null;
}
if (swc && fs.existsSync(source)) {
  // The checkout's tsconfig (path aliases), wherever the command is run from.
  process.env.SWC_NODE_PROJECT = path.join(root, 'tsconfig.json');
  require(swc);
  require(source);
} else {
  require(path.join(root, 'dist', 'apps', 'cli', 'src', 'main.js'));
}
