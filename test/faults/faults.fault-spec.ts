import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { eventually, type AppName } from '../support/app-processes';
import { uniqueSuffix } from '../support/isolation';
import { testServers } from '../support/servers';
import { FaultApps } from './fault-apps';
import { natsService, otherTestRuns, waitUntilAlone, postgresService, redisService, type MachineService } from './machine-services';
import { STEP_TIMEOUT, type OutputMode } from './streamed-runs';

/**
 * `npm run test:faults` (issue 18 part 1; docs/reliability.md "Faults"): the four apps on the real servers,
 * and during runs of 20 000 cases streamed over NATS, one fault each - SIGKILL of every app, the read model
 * killed again right as `run.scored` appears, NATS restarted, PostgreSQL restarted, Redis stopped and started.
 * After each, the invariants (R1, R3, R4, X4): evidence rows exactly N; the aggregate and every case's
 * evidence identical to the undisturbed run's; each case announced once, the run scored once, its EvalResult
 * recorded and put in the outbox once; no dead letter at all; and at the end, on NATS, as many
 * `evals.result.recorded` messages as EvalResults. The reference streams single `evals.output.submitted`
 * messages; every SIGKILL and the NATS restart stream `evals.outputs.submitted` batches through
 * `@evals/publisher` (issue 28: the fault strikes with batches in flight and being consumed); the PostgreSQL
 * and Redis cases keep the single-output path under faults. It stops the machine's servers, so it is not part of
 * `npm test`, refuses to run beside another test run, and puts every server back as it found it.
 */
const CASES = Number(process.env.FAULTS_CASES ?? 20_000);
/**
 * Batched, a run publishes its 20 batches in about a second, before NATS's stop has landed (the first run
 * with batches found 20 000/20 000 published and scored once NATS was down): the NATS case paces its batches
 * (300 ms after each), so the server goes away with batches unpublished, in flight and being consumed.
 */
const NATS_BATCH_PACE_MS = 300;
/** A fault's test: waiting (5 min at most) for other test runs to end, then the run. */
const TEST_TIMEOUT = 5 * 60_000 + STEP_TIMEOUT;

interface Row {
  fault: string;
  /** How its outputs were streamed. */
  mode: OutputMode | '';
  runMs: number;
  /** How much longer than the undisturbed run. */
  delayMs: number;
  /** From the fault's injection to the component being back (started, listening). */
  downMs: number;
  /** From the component being back to the run's EvalResult. */
  toResultMs: number;
  /** Where the run was when the fault hit: outputs published, evidence rows. */
  at: string;
  invariants: string;
}

describe('faults: the four apps on the real servers under SIGKILL and server restarts (issue 18)', () => {
  const suffix = uniqueSuffix();
  const stack = new FaultApps({ label: 'flt', suffix, suiteKey: 'faults', cases: CASES, publishDeadlineMs: 120_000 });
  const services: MachineService[] = [natsService(), postgresService(), redisService()];
  const rows: Row[] = [];
  const started = Date.now();

  beforeAll(async () => {
    for (const s of services) await s.capture();
    await stack.start(testServers.nats.url, [{ apps: ['ingestion', 'scoring-worker', 'read-model', 'regression'] }]);
  }, 180_000);

  afterAll(async () => {
    // Every server back as it was, whatever failed above.
    const differences: string[] = [];
    for (const s of services) differences.push(...(await s.restore().catch((e: unknown) => [`${s.name}: ${String(e)}`])));
    await stack.stop();
    const report = formatReport(rows, stack.runs?.baseline()?.ms, Date.now() - started);
    const file = path.join(os.tmpdir(), `evals-faults-${suffix}.md`);
    fs.writeFileSync(file, report);
    process.stdout.write(`\n${report}\n(written to ${file})\n`);
    if (differences.length > 0) throw new Error(`servers not restored as found:\n${differences.join('\n')}`);
  }, 180_000);

  const halfPublished = (runId: string) => stack.runs.publishedShare(runId, 0.5, 180_000);
  /** For a server's stop, which takes a few seconds to land: early enough to hit the run's middle. */
  const quarterPublished = (runId: string) => stack.runs.publishedShare(runId, 0.25, 180_000);
  const firstEvidence = (runId: string) => eventually(async () => ((await stack.runs.evidenceCount(runId)) > 0 ? true : undefined), 180_000, `first evidence of ${runId}`);
  const runScored = (runId: string) =>
    eventually(
      async () => (Number((await stack.runs.query(`SELECT count(*) AS n FROM events WHERE stream_id = $1 AND type = 'run.scored'`, [`run-${runId}`]))?.[0]?.n ?? 0) > 0 ? true : undefined),
      STEP_TIMEOUT,
      `run.scored of ${runId}`,
    );

  /**
   * One disturbed run: streams it, waits for `trigger` (the first evidence: mid-run), injects the fault -
   * `inject` returns once the component is back - and checks the invariants once the EvalResult is there.
   */
  async function disturbedRun(
    fault: string,
    inject: (markDown: () => Promise<void>) => Promise<void>,
    trigger: (runId: string) => Promise<unknown>,
    stopsServer = false,
    mode: OutputMode = 'batch',
    paceMs = 0,
  ): Promise<void> {
    // Only a server's restart could fail somebody else's tests: those wait for the machine to be quiet.
    if (stopsServer) await waitUntilAlone(5 * 60_000);
    const runId = `${fault.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}-${suffix}`;
    const { runs } = stack;
    const run = runs.startDisturbedRun(runId, mode, paceMs);
    await trigger(runId);
    if (stopsServer && otherTestRuns().length > 0) throw new Error(`another test run started: not injecting ${fault} under it`);
    let at = await runs.progress(runId);
    const injectedAt = Date.now();
    // A server's stop takes a moment to land (pg_ctlcluster is a script): where the run was once it is down.
    await inject(async () => {
      at = `${await runs.progress(runId)} once down`;
    });
    const backAt = Date.now();
    const { doneAt, invariants, baseline } = await run.finish();
    const t0 = run.t0;
    rows.push({ fault, mode, runMs: doneAt - t0, delayMs: doneAt - t0 - baseline.ms, downMs: backAt - injectedAt, toResultMs: doneAt - backAt, at, invariants });
  }

  const killApp = (app: AppName) => async () => {
    await stack.groups[0].stop(app, 'SIGKILL');
    // Restarted at once, as a supervisor (systemd, Kubernetes) would.
    await stack.groups[0].start(app);
  };
  const restartServer = (service: MachineService, downMs: number) => async (markDown: () => Promise<void>) => {
    await service.stop();
    // The test's own pool is down with it: the evidence count reads -1 then.
    await markDown();
    try {
      await new Promise((r) => setTimeout(r, downMs));
    } finally {
      await service.start();
    }
  };
  const service = (name: MachineService['name']) => services.find((s) => s.name === name)!;

  it('an undisturbed run, the reference', async () => {
    await stack.runs.undisturbedRun(`undisturbed-${suffix}`);
  }, STEP_TIMEOUT);

  it('SIGKILL of ingestion mid-run', () => disturbedRun('SIGKILL ingestion', killApp('ingestion'), halfPublished), TEST_TIMEOUT);
  it('SIGKILL of the scoring worker mid-run', () => disturbedRun('SIGKILL scoring-worker', killApp('scoring-worker'), firstEvidence), TEST_TIMEOUT);
  it('SIGKILL of the read model mid-run', () => disturbedRun('SIGKILL read-model', killApp('read-model'), halfPublished), TEST_TIMEOUT);
  it('SIGKILL of the read model right as run.scored appears', () => disturbedRun('SIGKILL read-model at run.scored', killApp('read-model'), runScored), TEST_TIMEOUT);
  it('SIGKILL of regression mid-run', () => disturbedRun('SIGKILL regression', killApp('regression'), halfPublished), TEST_TIMEOUT);
  it('NATS restarted mid-run (down 5 s)', () => disturbedRun('NATS restarted', restartServer(service('NATS'), 5_000), quarterPublished, true, 'batch', NATS_BATCH_PACE_MS), TEST_TIMEOUT);
  it('PostgreSQL restarted mid-run (down 5 s)', () => disturbedRun('PostgreSQL restarted', restartServer(service('PostgreSQL'), 5_000), quarterPublished, true, 'single'), TEST_TIMEOUT);
  it('Redis stopped for 10 s and started mid-run', () => disturbedRun('Redis stopped 10 s', restartServer(service('Redis'), 10_000), quarterPublished, true, 'single'), TEST_TIMEOUT);

  it('at the end: as many evals.result.recorded messages on NATS as EvalResults and outbox rows, every row relayed', async () => {
    // Every run started completes, a fault's whose injection was skipped too.
    const { results, outbox, onNats } = await stack.checkAllResults(stack.runs.runsStarted());
    rows.push({ fault: '(all runs)', mode: '', runMs: 0, delayMs: 0, downMs: 0, toResultMs: 0, at: '', invariants: `${results} runs = ${results} EvalResults = ${outbox} outbox rows = ${onNats} messages on NATS` });
  }, 180_000);
});

function formatReport(rows: Row[], baselineMs: number | undefined, totalMs: number): string {
  const s = (ms: number) => (ms / 1000).toFixed(1);
  const lines = [
    `Fault suite: ${CASES} cases a run; undisturbed run (single outputs) ${baselineMs === undefined ? '?' : s(baselineMs)} s; whole suite ${s(totalMs)} s`,
    '',
    '| fault | outputs | hit when | run (s) | longer than undisturbed (s) | down (s) | back to EvalResult (s) | invariants held |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map((r) =>
      r.runMs === 0
        ? `| ${r.fault} | | | | | | | ${r.invariants} |`
        : `| ${r.fault} | ${r.mode} | ${r.at} | ${s(r.runMs)} | ${s(r.delayMs)} | ${s(r.downMs)} | ${s(r.toResultMs)} | ${r.invariants} |`,
    ),
  ];
  return lines.join('\n');
}
