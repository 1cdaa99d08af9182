import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import Redis from 'ioredis';
import { isListening, testServers } from '../support/servers';

/**
 * Stops and starts the machine's own PostgreSQL, Redis and NATS for the fault suite, and puts each back
 * exactly as it was found: the same command line (NATS: read from /proc; Redis and PostgreSQL: the commands
 * the machine starts them with, docs/reliability.md), the same configuration (Redis's checked key by key),
 * and Redis's keys (it keeps nothing on disk, so they are dumped before a stop and restored after). Only the
 * fault suite uses this, only as root on this machine's Debian layout, and never beside another test run
 * (`waitUntilAlone`).
 */

const sh = (command: string, args: string[], timeoutMs = 60_000) => execFileSync(command, args, { encoding: 'utf8', timeout: timeoutMs, stdio: ['ignore', 'pipe', 'pipe'] });

async function waitFor(what: string, probe: () => Promise<boolean> | boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`${what}: not reached in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Other test runs (jest) on this machine that use the servers: every one but unit-only runs (pure, no
 * server), this process and its ancestors.
 */
export function otherTestRuns(): string[] {
  if (process.env.FAULTS_IGNORE_OTHERS === '1') return [];
  const mine = new Set<number>();
  for (let pid = process.pid; pid > 1; ) {
    mine.add(pid);
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  }
  let listing = '';
  try {
    listing = sh('pgrep', ['-af', 'jest']);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
  return listing
    .split('\n')
    .filter(Boolean)
    .filter((line) => !mine.has(Number(line.split(' ')[0])) && !/pgrep/.test(line) && !/test\/faults/.test(line) && !/selectProjects[ =]unit\b/.test(line));
}

/**
 * Waits until no other test run uses the servers (stopping them under it would fail it), checking every
 * 5 s for at most `timeoutMs`; then refuses to go on, naming them.
 */
export async function waitUntilAlone(timeoutMs = 10 * 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const others = otherTestRuns();
    if (others.length === 0) return;
    if (Date.now() > deadline) {
      throw new Error(`the fault suite stops the machine's servers, and other test runs are using them:\n${others.join('\n')}\nRun it when they are done.`);
    }
    await new Promise((r) => setTimeout(r, 5_000));
  }
}

export interface MachineService {
  readonly name: 'NATS' | 'PostgreSQL' | 'Redis';
  readonly port: number;
  /** Records what is running now, so `restore` can put exactly that back. */
  capture(): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Starts it if it is down, and checks it is as `capture` found it. Returns what differs (none: empty). */
  restore(): Promise<string[]>;
}

function pidOf(exe: string): number | undefined {
  try {
    return Number(sh('pgrep', ['-xo', exe]).trim());
  } catch {
    return undefined;
  }
}

export function natsService(): MachineService {
  let argv: string[] | undefined;
  const port = testServers.nats.port;
  const service: MachineService = {
    name: 'NATS',
    port,
    async capture() {
      const pid = pidOf('nats-server');
      if (!pid) throw new Error('nats-server is not running');
      argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    },
    async stop() {
      const pid = pidOf('nats-server');
      if (!pid) return;
      process.kill(pid, 'SIGTERM');
      await waitFor('nats-server stopped', () => !fs.existsSync(`/proc/${pid}`), 20_000);
    },
    async start() {
      if (!argv) throw new Error('NATS: capture() first');
      sh('start-stop-daemon', ['--start', '--oknodo', '--background', '--exec', argv[0], '--', ...argv.slice(1)]);
      await waitFor('NATS listening', () => isListening(port), 30_000);
    },
    async restore() {
      if (!(await isListening(port))) await service.start();
      const pid = pidOf('nats-server');
      const now = pid ? fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean) : [];
      return JSON.stringify(now) === JSON.stringify(argv) ? [] : [`NATS runs as ${now.join(' ')}, was ${argv?.join(' ')}`];
    },
  };
  return service;
}

export function postgresService(): MachineService {
  const port = testServers.postgres.port;
  const version = () => fs.readdirSync('/etc/postgresql').sort((a, b) => Number(a) - Number(b)).at(-1)!;
  let clusters = '';
  const lsclusters = () => sh('pg_lsclusters', ['--no-header']).trim();
  const service: MachineService = {
    name: 'PostgreSQL',
    port,
    async capture() {
      clusters = lsclusters();
      if (!/online/.test(clusters)) throw new Error(`PostgreSQL is not online: ${clusters}`);
    },
    async stop() {
      // fast: open sessions are ended, as a crash or a failover ends them.
      sh('pg_ctlcluster', ['--skip-systemctl-redirect', version(), 'main', 'stop', '-m', 'fast']);
    },
    async start() {
      sh('pg_ctlcluster', ['--skip-systemctl-redirect', version(), 'main', 'start']);
      await waitFor('PostgreSQL listening', () => isListening(port), 60_000);
    },
    async restore() {
      if (!(await isListening(port))) await service.start();
      const now = lsclusters().replace(/\s+/g, ' ');
      return now === clusters.replace(/\s+/g, ' ') ? [] : [`PostgreSQL clusters are ${now}, were ${clusters}`];
    },
  };
  return service;
}

/** The settings compared before and after: what the machine's start command sets. */
const REDIS_SETTINGS = ['bind', 'port', 'save', 'appendonly', 'dir', 'logfile', 'daemonize', 'maxmemory', 'maxmemory-policy'];

export function redisService(): MachineService {
  const port = testServers.redis.port;
  let config: Record<string, string> = {};
  let keys: Array<{ key: Buffer; ttl: number; value: Buffer }> = [];
  const client = () => new Redis(testServers.redis.url, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
  const readConfig = async (redis: Redis) => {
    const out: Record<string, string> = {};
    for (const name of REDIS_SETTINGS) {
      const pair = (await redis.config('GET', name)) as string[];
      out[name] = pair[1] ?? '';
    }
    return out;
  };
  const service: MachineService = {
    name: 'Redis',
    port,
    async capture() {
      const redis = client();
      await redis.connect();
      try {
        config = await readConfig(redis);
      } finally {
        redis.disconnect();
      }
    },
    async stop() {
      const redis = client();
      await redis.connect();
      try {
        // It keeps nothing on disk (--save ""): the keys are taken along here, and put back by start().
        keys = [];
        let cursor = '0';
        do {
          const [next, batch] = await redis.scanBuffer(cursor, 'COUNT', 1000);
          cursor = String(next);
          for (const key of batch) {
            const value = await redis.dumpBuffer(key);
            if (value) keys.push({ key, ttl: Math.max(0, await redis.pttl(key)), value });
          }
        } while (cursor !== '0');
        await redis.call('SHUTDOWN', 'NOSAVE').catch(() => undefined); // the connection drops as it answers
      } finally {
        redis.disconnect();
      }
      await waitFor('Redis stopped', async () => !(await isListening(port)), 20_000);
    },
    async start() {
      fs.mkdirSync('/var/lib/redis', { recursive: true });
      fs.mkdirSync('/var/log/redis', { recursive: true });
      sh('redis-server', ['--daemonize', 'yes', '--bind', '127.0.0.1', '-::1', '--port', String(port), '--save', '', '--appendonly', 'no', '--dir', '/var/lib/redis', '--logfile', '/var/log/redis/ci.log']);
      await waitFor('Redis listening', () => isListening(port), 30_000);
      const redis = client();
      await redis.connect();
      try {
        for (const { key, ttl, value } of keys) await redis.restore(key, ttl, value, 'REPLACE');
      } finally {
        redis.disconnect();
      }
    },
    async restore() {
      if (!(await isListening(port))) await service.start();
      const redis = client();
      await redis.connect();
      try {
        const now = await readConfig(redis);
        return REDIS_SETTINGS.filter((name) => now[name] !== config[name]).map((name) => `Redis ${name} is ${now[name]}, was ${config[name]}`);
      } finally {
        redis.disconnect();
      }
    },
  };
  return service;
}
