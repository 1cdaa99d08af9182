import { randomUUID } from 'node:crypto';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { Pool } from 'pg';
import { eventually } from '../support/app-processes';

/**
 * The streamed runs and the invariants of the fault suite, for the cases that run on a NATS of their own
 * (cluster.fault-spec.ts, partition.fault-spec.ts); the same as faults.fault-spec.ts does inline: a suite of
 * `cases` exact-scored cases, a third failing; runs of run.requested, every output.submitted (500 in flight,
 * each publish retried with its own Nats-Msg-Id until stored, so stored once), run.sealed.
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

export function streamedRuns(options: { js: JetStreamClient; db: Pool; subjectPrefix: string; suiteKey: string; cases: number }) {
  const { js, db, cases } = options;
  const subject = (s: string) => `${options.subjectPrefix}.${s}`;
  /** Outputs published so far, per run. */
  const published = new Map<string, number>();
  /** Publishes that had to be retried (the server did not answer in time): where the fault was felt. */
  let retries = 0;

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
  async function publish(type: string, data: unknown): Promise<void> {
    const id = randomUUID();
    const payload = JSON.stringify({ schema: `${type}.v1`, type, version: 1, data, metadata: { message_id: id, occurred_at: new Date().toISOString() } });
    const deadline = Date.now() + 180_000;
    for (;;) {
      try {
        await js.publish(subject(type), payload, { msgID: id, timeout: 10_000 });
        return;
      } catch (error) {
        retries++;
        if (Date.now() > deadline) throw error;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }
  async function streamRun(runId: string): Promise<void> {
    published.set(runId, 0);
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
  const publishedShare = (runId: string, share: number) =>
    eventually(async () => ((published.get(runId) ?? 0) >= cases * share ? true : undefined), 300_000, `${share * 100}% of ${runId} published`);
  const progress = async (runId: string) => `${published.get(runId)}/${cases} published, ${await evidenceCount(runId)} scored`;

  /** Every invariant of a disturbed run against the undisturbed one (R1, R3, R4, X4); returns them as the report says them. */
  async function checkInvariants(runId: string, result: any, baseline: Baseline): Promise<string> {
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
    return `evidence ${cases}/${cases}, aggregate = undisturbed, ${same} cases alike, announced ${announced}, run.scored 1, result outbox 1, dead letters 0`;
  }

  return { published, publish, streamRun, resultOf, evidenceCount, publishedShare, progress, checkInvariants, count, query, retries: () => retries };
}
