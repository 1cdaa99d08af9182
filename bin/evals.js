#!/usr/bin/env node
// The `evals` CLI. In a checkout (the TypeScript sources and swc are there) it runs the sources, so it is
// never a stale build; an installed package, which has only the build, runs dist/.
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
// Before any module is compiled (bin/v8-profile.js).
require('./v8-profile').applyV8Profile(process.argv.slice(2));
const source = path.join(root, 'apps', 'cli', 'src', 'main.ts');
let swc = false;
try {
  require.resolve('@swc/core', { paths: [root] });
  swc = true;
} catch {
  swc = false;
}
if (swc && fs.existsSync(source)) {
  require('./register-sources');
  require(source);
} else {
  require('./framework-bundle').useFrameworkBundle(root, path.join(root, 'dist', 'framework'));
  require(path.join(root, 'dist', 'apps', 'cli', 'src', 'main.js'));
}
