#!/usr/bin/env node
// Starts the service's apps as separate processes against the local servers (PostgreSQL, NATS JetStream):
// ingestion :3001, scoring-worker :3002, read-model :3003, regression :3004 when it exists. Each line of
// output is prefixed with its app. Ctrl-C (SIGINT) or SIGTERM stops them gracefully (X4); if one app dies,
// the others are stopped too, so a half-running service never looks healthy.
//
// Configuration comes from the environment (docs/configuration.md); local defaults are filled in here.
const { spawn } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const apps = [
  ['ingestion', 3001],
  ['scoring-worker', 3002],
  ['read-model', 3003],
  ['regression', 3004],
].filter(([name]) => fs.existsSync(path.join(root, 'apps', name, 'src', 'main.ts')));

function devSecret() {
  // A stable local secret, so detail hashes stay comparable across restarts; never printed.
  const file = path.join(root, '.evals', 'dev-hmac-secret');
  if (!fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, crypto.randomBytes(32).toString('hex'), { mode: 0o600 });
  }
  return fs.readFileSync(file, 'utf8').trim();
}

const env = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres',
  NATS_URL: 'nats://127.0.0.1:4222',
  REDIS_URL: 'redis://127.0.0.1:6379',
  ...process.env,
};
if (!env.EVALS_HMAC_SECRET) env.EVALS_HMAC_SECRET = devSecret();

const built = (name) => path.join(root, 'dist', 'apps', name, 'src', 'main.js');

// Issue 27: the migrations run first, as DATABASE_URL's user (the admin: it creates the schema's tables, the
// apps' login roles and their grants); each app then connects as its own role (evals_<app>, ownership.ts) and
// only checks that nothing is pending (EVALS_MIGRATE=job). EVALS_APP_ROLES=0 keeps every app on DATABASE_URL.
const ROLES = { ingestion: 'evals_ingestion', 'scoring-worker': 'evals_scoring', 'read-model': 'evals_read_model', regression: 'evals_regression' };
const asRoles = env.EVALS_APP_ROLES !== '0';
function roleUrl(name) {
  const url = new URL(env.DATABASE_URL);
  url.username = ROLES[name];
  // Trust authentication locally; elsewhere the role's password (set by the migration job, docs/deploy.md).
  url.password = env[`DATABASE_PASSWORD_${ROLES[name].slice('evals_'.length).toUpperCase()}`] ?? '';
  return url.toString();
}
if (asRoles) {
  const migrator = fs.existsSync(path.join(root, 'dist', 'libs', 'persistence', 'src', 'migrate.js'))
    ? [path.join(root, 'dist', 'libs', 'persistence', 'src', 'migrate.js')]
    : ['-r', '@swc-node/register', path.join(root, 'libs', 'persistence', 'src', 'migrate.ts')];
  const result = require('node:child_process').spawnSync(process.execPath, migrator, { cwd: root, env, stdio: 'inherit' });
  if (result.status !== 0) {
    process.stderr.write(`migrations failed (exit ${result.status}); no app started\n`);
    process.exit(result.status || 1);
  }
}
const children = new Map();
let stopping = false;

for (const [name, port] of apps) {
  const args = fs.existsSync(built(name)) ? [built(name)] : ['-r', '@swc-node/register', path.join(root, 'apps', name, 'src', 'main.ts')];
  const child = spawn(process.execPath, args, { cwd: root, env: { ...env, ...(asRoles ? { DATABASE_URL: roleUrl(name), EVALS_MIGRATE: 'job' } : {}), PORT: env[`${name.toUpperCase().replace('-', '_')}_PORT`] ?? String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  const prefix = `${name.padEnd(14)}|`;
  for (const stream of [child.stdout, child.stderr]) {
    let rest = '';
    stream.on('data', (chunk) => {
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop();
      for (const line of lines) process.stdout.write(`${prefix} ${line}\n`);
    });
  }
  child.on('exit', (code, signal) => {
    children.delete(name);
    process.stdout.write(`${prefix} exited (${signal ?? code})\n`);
    if (!stopping) stop(code === 0 ? 'SIGTERM' : 'SIGTERM', 1);
    if (children.size === 0) process.exit(process.exitCode ?? 0);
  });
  children.set(name, child);
}

function stop(signal, exitCode = 0) {
  if (stopping) return;
  stopping = true;
  process.exitCode = exitCode;
  for (const child of children.values()) child.kill(signal);
}

process.on('SIGINT', () => stop('SIGTERM'));
process.on('SIGTERM', () => stop('SIGTERM'));
