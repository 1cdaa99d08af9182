#!/usr/bin/env node
// The `evals` CLI. Runs the compiled build when there is one (npm run build), else the TypeScript
// sources through swc, so `npx evals` works straight after `npm ci` in a checkout.
const fs = require('node:fs');
const path = require('node:path');

const built = path.join(__dirname, '..', 'dist', 'apps', 'cli', 'src', 'main.js');
if (fs.existsSync(built)) {
  require(built);
} else {
  require('@swc-node/register');
  require(path.join(__dirname, '..', 'apps', 'cli', 'src', 'main.ts'));
}
