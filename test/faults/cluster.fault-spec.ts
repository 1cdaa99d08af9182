import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { StreamInfo } from '@nats-io/jetstream';
import { eventually } from '../support/app-processes';
import { uniqueSuffix } from '../support/isolation';
import { FaultApps, STREAMS } from './fault-apps';
import { freePorts, natsNode, type NatsNode } from './own-nats';
import { STEP_TIMEOUT } from './streamed-runs';

/**
 * `npm run test:faults`, the JetStream cluster case (issue 18 part 1; docs/reliability.md "Faults"): a real
 * three-node cluster started by the test (three nats-server processes of its own, routes on loopback ports,
 * JetStream on each, a store dir each), the four apps on it with EVALS_STREAM_REPLICAS=3 as deploy/ declares
 * the streams (deploy/k8s/base/jetstream/streams.yaml, configmap.yaml), and during a run of 20 000 cases
 * streamed in `evals.outputs.submitted` batches (`@evals/publisher`; the reference run: single outputs) the
 * node that leads EVALS_INBOUND (the stream every output is published to) is SIGKILLed and, 5 s
 * later, started again on its own store. The invariants are the other faults': evidence rows exactly N, the
 * aggregate and every case equal to the undisturbed run on the same cluster, each case announced once, one
 * run.scored and one result outbox row, no dead letter; then every EvalResult on EVALS_OUTBOUND once, and the
 * restarted node current again in every stream's replica set. Touches none of the machine's servers.
 */
const CASES = Number(process.env.FAULTS_CASES ?? 20_000);
/** How long the killed node stays down. */
const DOWN_MS = 5_000;

describe('faults: a three-node JetStream cluster, the stream leader killed mid-run (issue 18)', () => {
  const suffix = uniqueSuffix();
  const stack = new FaultApps({ label: 'flc', suffix, suiteKey: 'faults-cluster', cases: CASES });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-faults-cluster-'));
  let nodes: NatsNode[] = [];
  const report: string[] = [];
  const started = Date.now();

  beforeAll(async () => {
    const base = await freePorts(3);
    const routeBase = await freePorts(3);
    const clusterPorts = [routeBase, routeBase + 1, routeBase + 2];
    nodes = [0, 1, 2].map((k) =>
      natsNode({ dir, name: `n${k + 1}`, port: base + k, cluster: { name: `flc_${suffix}`, port: clusterPorts[k], routes: clusterPorts.filter((_, j) => j !== k) } }),
    );
    await Promise.all(nodes.map((n) => n.start()));
    // The test's connection knows the three nodes. The apps are given one seed server (NATS_URL is one URL)
    // and learn the others from it, as in deploy/k8s/base/configmap.yaml; the seed is the first node, which
    // may be the one killed.
    await stack.start(
      nodes.map((n) => n.url),
      [{ apps: ['ingestion', 'scoring-worker', 'read-model', 'regression'], env: { NATS_URL: nodes[0].url, EVALS_STREAM_REPLICAS: '3' } }],
    );
  }, 240_000);

  afterAll(async () => {
    await stack.stop();
    await Promise.all(nodes.map((n) => n.stop('SIGTERM').catch(() => undefined)));
    const text = [`Cluster fault: ${CASES} cases a run; whole case ${((Date.now() - started) / 1000).toFixed(1)} s`, ...report].join('\n');
    process.stdout.write(`\n${text}\n(node logs were in ${dir}, now removed)\n`);
    fs.rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  const info = (stream: string) => stack.jsm.streams.info(`${stack.streamPrefix}${stream}`) as Promise<StreamInfo>;

  it('the streams are at 3 replicas, one on each node', async () => {
    for (const s of STREAMS) {
      const i = await info(s);
      expect(i.config.num_replicas).toBe(3);
      expect([i.cluster?.leader, ...(i.cluster?.replicas ?? []).map((r) => r.name)].sort()).toEqual(['n1', 'n2', 'n3']);
    }
  });

  it('an undisturbed run on the cluster, the reference', async () => {
    const baseline = await stack.runs.undisturbedRun(`undisturbed-${suffix}`);
    report.push(`undisturbed run: ${(baseline.ms / 1000).toFixed(1)} s`);
  }, STEP_TIMEOUT);

  it('SIGKILL of the node leading EVALS_INBOUND mid-run, started again 5 s later', async () => {
    const { runs } = stack;
    const runId = `leader-killed-${suffix}`;
    const run = runs.startDisturbedRun(runId);
    await runs.publishedShare(runId, 0.25);
    const leaders = Object.fromEntries(await Promise.all(STREAMS.map(async (s) => [s, (await info(s)).cluster?.leader] as const)));
    const victimName = leaders.EVALS_INBOUND;
    const victim = nodes.find((n) => n.name === victimName);
    expect(victim).toBeDefined();
    const at = await runs.progress(runId);
    const retriesBefore = runs.retries();
    const killedAt = Date.now();
    await victim!.stop('SIGKILL');
    // A new leader of the stream among the two left.
    const newLeader = await eventually(
      async () => {
        const l = await info('EVALS_INBOUND').then((i) => i.cluster?.leader, () => undefined);
        return l && l !== victimName ? l : undefined;
      },
      60_000,
      'a new EVALS_INBOUND leader',
    );
    const electedMs = Date.now() - killedAt;
    await new Promise((r) => setTimeout(r, Math.max(0, DOWN_MS - electedMs)));
    await victim!.start();
    const backAt = Date.now();
    const { doneAt, invariants, baseline } = await run.finish();
    // The restarted node caught up: current in the replica set of every stream again.
    await eventually(
      async () => {
        for (const s of STREAMS) {
          const i = await info(s).catch(() => null);
          const mine = i?.cluster?.leader === victimName ? { current: true } : i?.cluster?.replicas?.find((r) => r.name === victimName);
          if (!mine?.current) return undefined;
        }
        return true;
      },
      120_000,
      `${victimName} current in every stream again`,
    );
    const caughtUpMs = Date.now() - backAt;
    const t0 = run.t0;
    const s = (ms: number) => (ms / 1000).toFixed(1);
    report.push(
      `leaders at the kill: ${STREAMS.map((x) => `${x} ${leaders[x]}`).join(', ')}; killed ${victimName} at ${at}`,
      `new EVALS_INBOUND leader ${newLeader} after ${s(electedMs)} s; ${victimName} down ${s(backAt - killedAt)} s, current in every stream ${s(caughtUpMs)} s after its start`,
      `run ${s(doneAt - t0)} s (undisturbed ${s(baseline.ms)} s, +${s(doneAt - t0 - baseline.ms)} s); back to EvalResult ${s(doneAt - backAt)} s; publishes retried ${runs.retries() - retriesBefore}`,
      `invariants: ${invariants}`,
    );
  }, STEP_TIMEOUT + 300_000);

  it('at the end: every EvalResult once on EVALS_OUTBOUND, outbox relayed', async () => {
    const { results, outbox, onNats } = await stack.checkAllResults(2);
    report.push(`(all runs) ${results} EvalResults = ${outbox} outbox rows = ${onNats} messages on the cluster's EVALS_OUTBOUND`);
  }, 180_000);
});
