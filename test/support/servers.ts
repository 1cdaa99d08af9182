import { execFileSync } from 'node:child_process';
import { Socket } from 'node:net';
import * as path from 'node:path';

/** The real servers the integration and end-to-end tests run against (standard local ports). */
export const testServers = {
  postgres: { name: 'PostgreSQL', port: 5432, url: process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
  redis: { name: 'Redis', port: 6379, url: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379' },
  nats: { name: 'NATS JetStream', port: 4222, url: process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222' },
} as const;

export function isListening(port: number, host = '127.0.0.1', timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.connect(port, host, () => done(true));
  });
}

export async function missingServers(): Promise<string[]> {
  const missing: string[] = [];
  for (const server of Object.values(testServers)) {
    if (!(await isListening(server.port))) missing.push(`${server.name} (127.0.0.1:${server.port})`);
  }
  return missing;
}

/**
 * Finds the three servers, starts the ones that are installed but down (scripts/ensure-services.sh), and
 * otherwise fails once with a message that says what to install.
 */
export async function ensureTestServers(): Promise<void> {
  if ((await missingServers()).length === 0) return;
  const script = path.resolve(__dirname, '../../scripts/ensure-services.sh');
  try {
    execFileSync('bash', [script], { stdio: 'inherit', timeout: 180_000 });
  } catch {
    // The check below gives the one clear message.
  }
  const stillMissing = await missingServers();
  if (stillMissing.length > 0) {
    throw new Error(
      `Integration tests need real servers, and these are not reachable: ${stillMissing.join(', ')}. ` +
        'Install them (Debian: apt-get install postgresql redis-server nats-server) and run ' +
        'scripts/ensure-services.sh, or point TEST_DATABASE_URL / TEST_REDIS_URL / TEST_NATS_URL at running ones.',
    );
  }
}

/**
 * Stops and restarts the local NATS server, for tests of behaviour while the bus is down (G6). Only for
 * the machine's own server (root, Debian package layout); the tests that use it run in band.
 */
export function stopNats(): void {
  execFileSync('bash', ['-c', 'pkill -TERM -x nats-server; for i in $(seq 1 100); do pgrep -x nats-server >/dev/null || exit 0; sleep 0.1; done; exit 1']);
}

export async function startNats(): Promise<void> {
  execFileSync('start-stop-daemon', ['--start', '--oknodo', '--background', '--exec', '/usr/sbin/nats-server', '--', '-a', '127.0.0.1', '-p', '4222', '-js', '-sd', '/var/lib/nats-server', '-l', '/var/log/nats-server.log']);
  const deadline = Date.now() + 15_000;
  while (!(await isListening(4222))) {
    if (Date.now() > deadline) throw new Error('NATS did not come back on 127.0.0.1:4222');
    await new Promise((r) => setTimeout(r, 100));
  }
}
