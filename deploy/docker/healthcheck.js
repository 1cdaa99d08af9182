#!/usr/bin/env node
// Docker HEALTHCHECK of the evals image: GET /health of the app running in this container.
// The app is found from the running processes (the entrypoint may have chosen it from its first argument,
// which the health check cannot see), its port from PORT or the app's default. Containers that run no
// service (the CLI, the migration job) are reported healthy: there is nothing to probe.
'use strict';
const fs = require('node:fs');

const DEFAULT_PORTS = { ingestion: 3001, 'scoring-worker': 3002, 'read-model': 3003, regression: 3004 };

function runningApp() {
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let cmdline = '';
    try {
      cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    const match = /dist\/apps\/([a-z-]+)\/src\/main\.js/.exec(cmdline);
    if (match) return match[1];
  }
  return process.env.APP;
}

const app = runningApp();
const fallback = DEFAULT_PORTS[app];
if (fallback === undefined) process.exit(0);
const port = Number(process.env.PORT || fallback);

fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2500) })
  .then((res) => process.exit(res.ok ? 0 : 1))
  .catch(() => process.exit(1));
