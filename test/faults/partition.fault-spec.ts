import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { eventually, stopProcess } from '../support/app-processes';
import { uniqueSuffix } from '../support/isolation';
import { isListening } from '../support/servers';
import { FaultApps } from './fault-apps';
import { freePorts, natsNode, type NatsNode } from './own-nats';
import { STEP_TIMEOUT } from './streamed-runs';

/**
 * `npm run test:faults`, the network partition (issue 18 part 1; docs/reliability.md "Faults"): a network
 * namespace made by the test, joined to the host by a veth pair with addresses of a private /30 (loopback
 * and that pair only: nothing leaves the machine), and a nats-server of the test's own. Three apps reach it
 * on 127.0.0.1; the scoring worker reaches it only through the namespace:
 *
 *   worker --> 10.x.y.2:R (a TCP forwarder inside the namespace) --veth--> 10.x.y.1:Q (a forwarder in this
 *   process) --> 127.0.0.1:P (nats-server)
 *
 * Mid-run (its outputs in `evals.outputs.submitted` batches through `@evals/publisher`; the reference run
 * streams single outputs) the namespace's end of the veth is set down for 10 s and up again: the worker is cut from NATS (packets
 * dropped, no reset, as in a real partition) while PostgreSQL and the other apps are not. Same invariants as
 * the other faults. Needs root and iproute2; where network namespaces are not permitted the case is skipped
 * with the command and the error that failed. Cleans up the namespace (which takes the veth pair with it),
 * the forwarders, the server and its store.
 */
const CASES = Number(process.env.FAULTS_CASES ?? 20_000);
const PARTITION_MS = 10_000;
const suffix = uniqueSuffix();
const ns = `evals-flt-${suffix.slice(0, 8)}`;
const vethHost = `vf${suffix.slice(0, 6)}h`;
const vethNs = `vf${suffix.slice(0, 6)}n`;
const octet = 16 + (parseInt(suffix.slice(0, 4), 16) % 200);
const hostAddr = `10.213.${octet}.1`;
const nsAddr = `10.213.${octet}.2`;

/** Why namespaces cannot be used here (the command and its error), or null: probed once, synchronously. */
function namespacesUnavailable(): string | null {
  const probe = `evals-probe-${suffix.slice(0, 6)}`;
  for (const args of [['netns', 'add', probe], ['netns', 'del', probe]]) {
    const r = spawnSync('ip', args, { encoding: 'utf8' });
    if (r.error || r.status !== 0) return `\`ip ${args.join(' ')}\` failed: ${r.error?.message ?? r.stderr.trim()}`;
  }
  return null;
}
const unavailable = namespacesUnavailable();
if (unavailable) process.stderr.write(`partition fault SKIPPED: network namespaces are not permitted here: ${unavailable}\n`);
const describeIfNamespaces = unavailable ? describe.skip : describe;

const ip = (...args: string[]) => execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** A TCP forwarder to `target` on `host:port`, in this process. */
function forwarder(host: string, port: number, targetHost: string, targetPort: number): Promise<net.Server> {
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, targetHost);
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  return new Promise((resolve, reject) => server.once('error', reject).listen(port, host, () => resolve(server)));
}

describeIfNamespaces('faults: a network partition between the scoring worker and NATS (issue 18)', () => {
  const stack = new FaultApps({ label: 'flp', suffix, suiteKey: 'faults-partition', cases: CASES });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-faults-partition-'));
  let nats: NatsNode;
  let hostForwarder: net.Server | undefined;
  let nsForwarder: ChildProcess | undefined;
  let nsPort = 0;
  const report: string[] = [];

  beforeAll(async () => {
    const ports = await freePorts(3);
    nats = natsNode({ dir, name: 'partition', port: ports });
    await nats.start();
    ip('netns', 'add', ns);
    ip('link', 'add', vethHost, 'type', 'veth', 'peer', 'name', vethNs);
    ip('link', 'set', vethNs, 'netns', ns);
    ip('addr', 'add', `${hostAddr}/30`, 'dev', vethHost);
    ip('link', 'set', vethHost, 'up');
    ip('netns', 'exec', ns, 'ip', 'addr', 'add', `${nsAddr}/30`, 'dev', vethNs);
    ip('netns', 'exec', ns, 'ip', 'link', 'set', vethNs, 'up');
    ip('netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up');
    hostForwarder = await forwarder(hostAddr, ports + 1, '127.0.0.1', nats.port);
    nsPort = ports + 2;
    // The namespace's forwarder: this same code, run by node inside the namespace.
    const script = `const net=require('node:net');net.createServer(c=>{const u=net.connect(${ports + 1},'${hostAddr}');c.pipe(u).pipe(c);c.on('error',()=>u.destroy());u.on('error',()=>c.destroy());}).listen(${nsPort},'${nsAddr}');`;
    nsForwarder = spawn('ip', ['netns', 'exec', ns, process.execPath, '-e', script], { stdio: 'ignore' });
    await eventually(async () => ((await isListening(nsPort, nsAddr)) ? true : undefined), 20_000, 'the namespace forwarder');

    await stack.start(nats.url, [
      { apps: ['ingestion', 'read-model', 'regression'], env: { NATS_URL: nats.url } },
      { apps: ['scoring-worker'], env: { NATS_URL: `nats://${nsAddr}:${nsPort}` } },
    ]);
  }, 240_000);

  afterAll(async () => {
    await stack.stop();
    if (nsForwarder) await stopProcess(nsForwarder, 'SIGTERM');
    await new Promise((r) => (hostForwarder ? hostForwarder.close(() => r(undefined)) : r(undefined)));
    // Deleting the namespace deletes the veth end inside it, and with it the pair.
    for (const args of [['netns', 'del', ns], ['link', 'del', vethHost]]) spawnSync('ip', args);
    await nats?.stop('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
    const left = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout;
    process.stdout.write(`\nPartition fault: ${CASES} cases a run\n${report.join('\n')}\n(namespace ${ns} ${left.includes(ns) ? 'STILL PRESENT' : 'removed'})\n`);
  }, 120_000);

  /** The worker's TCP connections, by remote address: to prove its only way to NATS is the namespace. */
  function workerPeers(): string[] {
    const pid = stack.groups[1].apps.get('scoring-worker')!.child.pid!;
    const out = execFileSync('ss', ['-Htnp'], { encoding: 'utf8' });
    return out
      .split('\n')
      .filter((l) => l.includes(`pid=${pid},`))
      .map((l) => l.trim().split(/\s+/)[4]);
  }

  it('the worker reaches NATS only through the namespace', () => {
    const peers = workerPeers();
    expect(peers).toContain(`${nsAddr}:${nsPort}`);
    expect(peers).not.toContain(`127.0.0.1:${nats.port}`);
  });

  it('an undisturbed run, the reference', async () => {
    const baseline = await stack.runs.undisturbedRun(`undisturbed-${suffix}`);
    report.push(`undisturbed run: ${(baseline.ms / 1000).toFixed(1)} s`);
  }, STEP_TIMEOUT);

  it('the worker cut from NATS for 10 s mid-run (the veth down), then the link back', async () => {
    const { runs } = stack;
    const runId = `partitioned-${suffix}`;
    const run = runs.startDisturbedRun(runId);
    await runs.publishedShare(runId, 0.25);
    const at = await runs.progress(runId);
    const downAt = Date.now();
    // The namespace's end goes down: the host's end keeps its route (flagged linkdown), so what the worker
    // sends is dropped on the veth, never routed anywhere else (a host end set down would lose its route,
    // and the default route would take the packets off the machine).
    ip('netns', 'exec', ns, 'ip', 'link', 'set', vethNs, 'down');
    const route = ip('route', 'get', nsAddr);
    let duringStart = -1;
    let duringEnd = -1;
    let reachable = true;
    try {
      await new Promise((r) => setTimeout(r, 2_000));
      duringStart = await runs.evidenceCount(runId);
      // The partition is real: the worker's way to NATS does not answer a connection now.
      reachable = await isListening(nsPort, nsAddr, 1_500);
      await new Promise((r) => setTimeout(r, Math.max(0, downAt + PARTITION_MS - Date.now())));
      duringEnd = await runs.evidenceCount(runId);
    } finally {
      ip('netns', 'exec', ns, 'ip', 'link', 'set', vethNs, 'up');
    }
    const upAt = Date.now();
    expect(route).toContain(`dev ${vethHost}`);
    expect(reachable).toBe(false);
    // And it is over: the same way answers again.
    expect(await eventually(async () => ((await isListening(nsPort, nsAddr)) ? true : undefined), 20_000, 'the namespace forwarder again')).toBe(true);
    const resumed = await eventually(async () => ((await runs.evidenceCount(runId)) > duringEnd ? Date.now() : undefined), STEP_TIMEOUT, 'evidence after the partition');
    const { doneAt, invariants, baseline } = await run.finish();
    expect(workerPeers()).not.toContain(`127.0.0.1:${nats.port}`);
    const t0 = run.t0;
    const s = (ms: number) => (ms / 1000).toFixed(1);
    report.push(
      `cut at ${at}; link down ${s(upAt - downAt)} s; evidence of the run 2 s into it ${duringStart}, at its end ${duringEnd} (what the worker had fetched before the cut)`,
      `first new evidence ${s(resumed - upAt)} s after the link was up; run ${s(doneAt - t0)} s (undisturbed ${s(baseline.ms)} s, +${s(doneAt - t0 - baseline.ms)} s); back to EvalResult ${s(doneAt - upAt)} s`,
      `invariants: ${invariants}`,
    );
  }, STEP_TIMEOUT + 120_000);

  it('at the end: every EvalResult once on EVALS_OUTBOUND, outbox relayed', async () => {
    const { results, outbox, onNats } = await stack.checkAllResults(2);
    report.push(`(all runs) ${results} EvalResults = ${outbox} outbox rows = ${onNats} messages on EVALS_OUTBOUND`);
  }, 180_000);
});
