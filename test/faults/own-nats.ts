import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isListening } from '../support/servers';

/**
 * nats-server processes of the fault suite's own (the three-node cluster, the partition's server), never
 * the machine's: their own ports (below the ephemeral range, away from 4222/6222/8222) and store dirs, and
 * their own process name. They run through a symlink named `evals-flt-nats`, so the machine-level helpers
 * that find or stop "the" NATS by name (`pkill -x nats-server`, `pgrep -xo nats-server`: test/support/servers.ts,
 * machine-services.ts) neither kill these nor mistake one of them for the machine's server.
 */
export const NATS_SERVER = process.env.FAULTS_NATS_SERVER ?? '/usr/sbin/nats-server';

export interface NatsNode {
  readonly name: string;
  readonly port: number;
  readonly url: string;
  readonly storeDir: string;
  readonly logFile: string;
  child?: ChildProcess;
  start(): Promise<void>;
  /** SIGKILL (a crash) or SIGTERM; resolves once the process is gone. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** A free port of a run of `count` consecutive ones, from 14000-19999. */
export async function freePorts(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 14000 + Math.floor(Math.random() * 5900);
    let free = true;
    for (let k = 0; k < count && free; k++) free = !(await isListening(base + k));
    if (free) return base;
  }
  throw new Error('no free port run found');
}

export function natsNode(options: {
  dir: string;
  name: string;
  port: number;
  host?: string;
  cluster?: { name: string; port: number; routes: number[] };
}): NatsNode {
  const storeDir = path.join(options.dir, options.name);
  const logFile = path.join(options.dir, `${options.name}.log`);
  const exe = path.join(options.dir, 'evals-flt-nats');
  const host = options.host ?? '127.0.0.1';
  const args = ['-a', host, '-p', String(options.port), '--server_name', options.name, '-js', '-sd', storeDir];
  if (options.cluster) {
    args.push('--cluster_name', options.cluster.name, '--cluster', `nats://127.0.0.1:${options.cluster.port}`);
    args.push('--routes', options.cluster.routes.map((p) => `nats://127.0.0.1:${p}`).join(','));
  }
  const node: NatsNode = {
    name: options.name,
    port: options.port,
    url: `nats://${host}:${options.port}`,
    storeDir,
    logFile,
    async start() {
      if (!fs.existsSync(exe)) fs.symlinkSync(NATS_SERVER, exe);
      fs.mkdirSync(storeDir, { recursive: true });
      const out = fs.openSync(logFile, 'a');
      const child = spawn(exe, args, { stdio: ['ignore', out, out] });
      fs.closeSync(out);
      node.child = child;
      const deadline = Date.now() + 30_000;
      while (!(await isListening(options.port, host))) {
        if (child.exitCode !== null) throw new Error(`${options.name} exited with ${child.exitCode}:\n${fs.readFileSync(logFile, 'utf8').slice(-2000)}`);
        if (Date.now() > deadline) throw new Error(`${options.name} not listening on ${options.port} in 30 s`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop(signal = 'SIGTERM') {
      const child = node.child;
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await gone;
      clearTimeout(timer);
    },
  };
  return node;
}
