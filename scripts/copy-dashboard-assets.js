#!/usr/bin/env node
// `npm run build` step (docs/dashboard.md): tsc compiles only TypeScript, so the dashboard's own files (plain
// ES modules, CSS, the HTML shell) are copied next to the compiled controller, where it looks for them.
// Chart.js is not copied: it is served from node_modules, which the image ships.
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const from = path.join(root, 'apps', 'read-model', 'src', 'dashboard', 'assets');
const to = path.join(root, 'dist', 'apps', 'read-model', 'src', 'dashboard', 'assets');
fs.mkdirSync(to, { recursive: true });
let copied = 0;
for (const name of fs.readdirSync(from)) {
  if (!/\.(html|js|css|svg)$/.test(name)) continue;
  fs.copyFileSync(path.join(from, name), path.join(to, name));
  copied += 1;
}
process.stdout.write(`dashboard: ${copied} files copied to ${path.relative(root, to)}\n`);
