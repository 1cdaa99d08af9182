import { randomUUID } from 'node:crypto';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { Pool } from 'pg';
import { MAX_BATCH_OUTPUTS, SUBJECTS } from '@evals/contracts';
import { EvalsPublisher, type PublishPort } from '@evals/publisher';
import { eventually } from '../support/app-processes';

/**
 * The streamed runs and the invariants of the fault suite (faults.fault-spec.ts, cluster.fault-spec.ts,
 * partition.fault-spec.ts): a suite of `cases` exact-scored cases, a third failing; runs of run.requested,
 * the outputs, run.sealed. A run's outputs go one of two ways (`OutputMode`):
 *
 * - `batch` (issue 28): through `@evals/publisher`, as a sandbox team publishes - `evals.outputs.submitted`
 *   messages of up to 1 000 outputs, 8 in flight (its defaults), the seal after every batch is stored. The
 *   publisher does not retry (a publish that fails fails the run's stream), so its port here retries each
 *   message with the SAME Nats-Msg-Id until the stream stores it: a batch retried while NATS restarts is
 *   stored once (JetStream's de-duplication, 2 min window).
 * - `single`: one `evals.output.submitted` per output, 500 in flight, each retried the same way.
 *
 * `published` counts outputs STORED either way (a batch's outputs once its publish is acknowledged), so the
 * triggers (half, a quarter published) fire mid-run, with batches in flight and being consumed.
 */
export const STEP_TIMEOUT = 600_000;

export function faultSuite(key: string, cases: number) {
  return {
    key,
    default_scorer: { type: 'exact' },
    pass_threshold: 0.5,
    regression_threshold: 0.1,
    cases: Array.from({ length: cases }, (_, i) => ({ id: `c${i}`, input: `q${i}`, expected: `a${i}` })),
  };
}
const outputFor = (i: number) => (i % 3 === 0 ? `wrong${i}` : `a${i}`);

export interface Baseline {
  runId: string;
  ms: number;
  result: any;
}

export type StreamedRuns = ReturnType<typeof streamedRuns>;

/** How a run's outputs are published: `evals.outputs.submitted` batches through `@evals/publisher`, or one `evals.output.submitted` each. */
export type OutputMode = 'batch' | 'single';

/** A run's batches: stored so far, published and not yet stored. */
interface BatchProgress {
  stored: number;
  inFlight: number;
}

export function streamedRuns(options: {
  js: JetStreamClient;
  db: Pool;
  subjectPrefix: string;
  suiteKey: string;
  cases: number;
  /** How long one publish is retried (the server away) before the run fails; 180 s unless told. */
  publishDeadlineMs?: number;
}) {
  const { js, db, cases } = options;
  const publishDeadlineMs = options.publishDeadlineMs ?? 180_000;
  const subject = (s: string) => `${options.subjectPrefix}.${s}`;
  /** Outputs published (stored by the stream) so far, per run. */
  const published = new Map<string, number>();
  /** Batches of a run streamed in `batch` mode. */
  const batches = new Map<string, BatchProgress>();
  /** How each run was streamed, for the report. */
  const modes = new Map<string, OutputMode>();
  /** Publishes that had to be retried (the server did not answer in time): where the fault was felt. */
  let retries = 0;
  let runsStarted = 0;
  /** The undisturbed run every disturbed one is checked against. */
  let baseline: Baseline | undefined;

  /** One query; null while PostgreSQL is away (the fault), so a poll goes on instead of failing. */
  async function query<T = any>(sql: string, params: unknown[] = []): Promise<T[] | null> {
    try {
      return (await db.query(sql, params)).rows as T[];
    } catch {
      return null;
    }
  }
  async function count(sql: string, params: unknown[] = []): Promise<number> {
    const rows = await query(sql, params);
    if (rows === null) throw new Error(`query failed: ${sql}`);
    return Number(rows[0].n);
  }
  /**
   * Publishes `payload` with message id `id` until the server stores it: a retry carries the same id, so it
   * is stored once (de-duplication). Returns whether JetStream had it already (a retry that had reached it).
   */
  async function publishUntilStored(fullSubject: string, payload: string, id: string): Promise<{ duplicate: boolean }> {
    const deadline = Date.now() + publishDeadlineMs;
    for (;;) {
      try {
        const ack = await js.publish(fullSubject, payload, { msgID: id, timeout: 10_000 });
        return { duplicate: ack.duplicate };
      } catch (error) {
        retries++;
        if (Date.now() > deadline) throw error;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }
  /** Publishes one hand-built envelope until stored. */
  async function publish(type: string, data: unknown): Promise<void> {
    const id = randomUUID();
    const payload = JSON.stringify({ schema: `${type}.v1`, type, version: 1, data, metadata: { message_id: id, occurred_at: new Date().toISOString() } });
    await publishUntilStored(subject(type), payload, id);
  }
  /**
   * `@evals/publisher`'s port on the test's connection: every message retried with its id until stored, and
   * each batch counted - in flight from its first attempt, its outputs `published` once it is stored.
   */
  const retryingPort: PublishPort = {
    async publish(type, payload, messageId) {
      if (type !== SUBJECTS.OUTPUTS_SUBMITTED) return publishUntilStored(subject(type), payload, messageId);
      const { run_id: runId, outputs } = (JSON.parse(payload) as { data: { run_id: string; outputs: unknown[] } }).data;
      const progress = batches.get(runId)!;
      progress.inFlight++;
      try {
        const ack = await publishUntilStored(subject(type), payload, messageId);
        progress.stored++;
        published.set(runId, (published.get(runId) ?? 0) + outputs.length);
        return ack;
      } finally {
        progress.inFlight--;
      }
    },
  };
  const publisher = new EvalsPublisher(retryingPort, { sessionId: randomUUID() });

  /**
   * `paceMs` (batch mode): the sandbox waits that long after handing each full batch's outputs over, as an
   * agent producing its outputs over time; a server's stop, which takes a moment to land, then still finds
   * batches unpublished and in flight.
   */
  async function streamRun(runId: string, mode: OutputMode = 'single', paceMs = 0): Promise<void> {
    runsStarted++;
    published.set(runId, 0);
    modes.set(runId, mode);
    if (mode === 'batch') {
      batches.set(runId, { stored: 0, inFlight: 0 });
      const run = await publisher.open({ run_id: runId, suite_key: options.suiteKey, subject_kind: 'agent', subject_id: 'fault-test', source: 'sandbox' });
      for (let i = 0; i < cases; i++) {
        if (paceMs > 0 && i > 0 && i % MAX_BATCH_OUTPUTS === 0) await new Promise((r) => setTimeout(r, paceMs));
        await run.output(`c${i}`, outputFor(i));
      }
      const summary = await run.seal();
      // Every output in a batch, every batch stored once: what the stream holds is checked by the invariants.
      expect({ outputs: summary.outputs, batches: summary.batches }).toEqual({ outputs: cases, batches: batches.get(runId)!.stored });
      return;
    }
    await publish('evals.run.requested', { run_id: runId, suite_key: options.suiteKey, subject_kind: 'agent', subject_id: 'fault-test', source: 'sandbox' });
    for (let start = 0; start < cases; start += 500) {
      const chunk = Array.from({ length: Math.min(500, cases - start) }, (_, k) => start + k);
      await Promise.all(chunk.map((i) => publish('evals.output.submitted', { run_id: runId, case_id: `c${i}`, output: outputFor(i) })));
      published.set(runId, start + chunk.length);
    }
    await publish('evals.run.sealed', { run_id: runId });
  }
  const resultOf = (runId: string) =>
    eventually(async () => (await query('SELECT result FROM eval_results WHERE run_id = $1', [runId]))?.[0]?.result, STEP_TIMEOUT, `EvalResult of ${runId}`);
  const evidenceCount = async (runId: string) => Number((await query('SELECT count(*) AS n FROM evidence WHERE run_id = $1', [runId]))?.[0]?.n ?? -1);
  /** Resolves once `share` of the run's outputs are published: ingestion, the worker and the read model all busy with it. */
  const publishedShare = (runId: string, share: number, timeoutMs = 300_000) =>
    eventually(async () => ((published.get(runId) ?? 0) >= cases * share ? true : undefined), timeoutMs, `${share * 100}% of ${runId} published`);
  /** Where a run is: outputs stored, for a batched run its batches stored and in flight, evidence rows. */
  const progress = async (runId: string) => {
    const b = batches.get(runId);
    const inBatches = b ? ` (${b.stored} batches stored, ${b.inFlight} in flight)` : '';
    return `${published.get(runId)}/${cases} published${inBatches}, ${await evidenceCount(runId)} scored`;
  };

  /**
   * The reference: a run streamed with nothing disturbed. It becomes the baseline before it is checked, so
   * the disturbed runs are still compared with it when its own check fails.
   */
  async function undisturbedRun(runId: string, mode: OutputMode = 'single'): Promise<Baseline> {
    const t0 = Date.now();
    await streamRun(runId, mode);
    const result = await resultOf(runId);
    baseline = { runId, ms: Date.now() - t0, result };
    expect(result.metrics).toMatchObject({ n: cases, missing_outputs: 0, passed: cases - Math.ceil(cases / 3) });
    expect(await count('SELECT count(*) AS n FROM evidence WHERE run_id = $1', [runId])).toBe(cases);
    return baseline;
  }

  /** Every invariant of a disturbed run against the undisturbed one (R1, R3, R4, X4); returns them as the report says them. */
  async function checkInvariants(runId: string, result: any): Promise<string> {
    if (!baseline) throw new Error(`no undisturbed run to compare ${runId} with`);
    expect(await count('SELECT count(*) AS n FROM evidence WHERE run_id = $1', [runId])).toBe(cases);
    expect(result.metrics).toEqual(baseline.result.metrics);
    expect(result.score).toBe(baseline.result.score);
    expect(result.passed).toBe(baseline.result.passed);
    const same = await count(
      `SELECT count(*) AS n FROM evidence x JOIN evidence y ON y.case_id = x.case_id AND y.run_id = $2
        WHERE x.run_id = $1 AND x.passed = y.passed AND x.score = y.score AND x.scorer = y.scorer`,
      [runId, baseline.runId],
    );
    expect(same).toBe(cases);
    const announced = await count(`SELECT coalesce(sum((data->>'n')::int), 0) AS n FROM events WHERE type = 'cases.scored' AND data->>'run_id' = $1`, [runId]);
    const scored = await count(`SELECT count(*) AS n FROM events WHERE stream_id = $1 AND type = 'run.scored'`, [`run-${runId}`]);
    const outbox = await count(`SELECT count(*) AS n FROM outbox WHERE subject LIKE '%result.recorded' AND payload->'data'->>'run_id' = $1`, [runId]);
    expect({ announced, scored, outbox }).toEqual({ announced: cases, scored: 1, outbox: 1 });
    const letters = await query<{ code: string; n: string }>('SELECT code, count(*) AS n FROM dead_letters GROUP BY code');
    expect(letters).toEqual([]);
    const how = modes.get(runId) === 'batch' ? `${batches.get(runId)!.stored} batches` : 'single outputs';
    return `${how}: evidence ${cases}/${cases}, aggregate = undisturbed, ${same} cases alike, announced ${announced}, run.scored 1, result outbox 1, dead letters 0`;
  }

  /**
   * Starts streaming a run that a fault will hit (its publishes failing meanwhile are retried, the stream's
   * own failure surfaces in `finish`); `finish` waits for the stream and the EvalResult, then checks every
   * invariant against the undisturbed run. Batches unless told (`mode`), paced by `paceMs` (streamRun).
   */
  function startDisturbedRun(runId: string, mode: OutputMode = 'batch', paceMs = 0) {
    const t0 = Date.now();
    const streaming = streamRun(runId, mode, paceMs);
    streaming.catch(() => undefined);
    return {
      t0,
      async finish(): Promise<{ doneAt: number; invariants: string; baseline: Baseline }> {
        await streaming;
        const result = await resultOf(runId);
        const doneAt = Date.now();
        const invariants = await checkInvariants(runId, result);
        return { doneAt, invariants, baseline: baseline! };
      },
    };
  }

  /**
   * At the end of a fault case: `expected` EvalResults, as many result outbox rows, every outbox row relayed,
   * and each EvalResult once on the case's EVALS_OUTBOUND.
   */
  async function checkAllResults(jsm: JetStreamManager, streamPrefix: string, expected: number): Promise<{ results: number; outbox: number; onNats: number }> {
    const results = await count('SELECT count(*) AS n FROM eval_results');
    expect(results).toBe(expected);
    const outbox = await count(`SELECT count(*) AS n FROM outbox WHERE subject LIKE '%result.recorded'`);
    expect(outbox).toBe(results);
    await eventually(async () => ((await count(`SELECT count(*) AS n FROM outbox WHERE published_at IS NULL`)) === 0 ? true : undefined), 120_000, 'outbox relayed');
    const info = await jsm.streams.info(`${streamPrefix}EVALS_OUTBOUND`, { subjects_filter: '>' });
    const onNats = info.state.subjects?.[subject('evals.result.recorded')] ?? 0;
    expect(onNats).toBe(results);
    return { results, outbox, onNats };
  }

  return {
    published,
    publish,
    streamRun,
    resultOf,
    evidenceCount,
    publishedShare,
    progress,
    undisturbedRun,
    checkInvariants,
    startDisturbedRun,
    checkAllResults,
    count,
    query,
    modeOf: (runId: string) => modes.get(runId),
    retries: () => retries,
    runsStarted: () => runsStarted,
    baseline: () => baseline,
  };
}
