import { randomUUID } from 'node:crypto';
import { DEFAULT_PROJECT } from '@evals/contracts';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { JetStreamBus } from '@evals/bus';
import { RUN_EVENTS, runStreamId, type RunOpenedV1 } from '@evals/domain';
import { createDataSource, EventStore, migrate, OutboxRelay, RegressionRepository, type EvidenceRow } from '@evals/persistence';
import type { DataSource } from 'typeorm';
import { createTestSchema, testBusNames, type TestSchema } from '../../../test/support/isolation';
import { startNats, stopNats, testServers } from '../../../test/support/servers';
import { appendCaseResults } from './case-results.testing';
import { RegressionService } from './regression.service';

const opened = (run_id: string, over: Partial<RunOpenedV1> = {}): RunOpenedV1 => ({
  run_id,
  suite_key: 'support',
  suite_version: 1,
  suite_content_hash: 'h',
  pass_threshold: 0.5,
  regression_threshold: 0.1,
  subject_kind: 'agent',
  subject_id: 'bot',
  variant: null,
  baseline_run_id: null,
  source: 'ci',
  case_count: 10,
  scorer_versions: { exact: '1.0.0' },
  ...over,
});

const meta = (at: string) => {
  const id = randomUUID();
  return { message_id: id, correlation_id: id, causation_id: id, occurred_at: at };
};

describe('integration: regression decisions and findings (G1-G6)', () => {
  let schema: TestSchema;
  let ds: DataSource;
  const events = new EventStore();
  const repo = new RegressionRepository();
  const service = new RegressionService({ uuid: () => randomUUID() });

  beforeAll(async () => {
    schema = await createTestSchema('regression');
    ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize: 4 });
    await ds.initialize();
    await migrate(ds);
  }, 60_000);

  afterAll(async () => {
    await ds?.destroy();
    await schema?.drop();
  });

  /**
   * A run as the pipeline leaves it: its stream (opened, sealed, scored) and n case results, the first
   * `passed` cases passed; `unscored` more cases with no output (R1), left out of every comparison (G7).
   */
  async function completeRun(run: RunOpenedV1, passed: number, n: number, at: string, unscored = 0) {
    const scored = { run_id: run.run_id, n: n + unscored, passed, score_sum: passed, missing_count: unscored, missing_case_ids: [] };
    await events.append(ds, runStreamId(run.run_id), 0, [
      { type: RUN_EVENTS.opened, version: 1, data: run, metadata: meta(at) },
      { type: RUN_EVENTS.sealed, version: 1, data: { run_id: run.run_id }, metadata: meta(at) },
      { type: RUN_EVENTS.scored, version: 1, data: scored, metadata: meta(at) },
    ]);
    const rows: EvidenceRow[] = Array.from({ length: n + unscored }, (_, i) => ({
      run_id: run.run_id,
      case_id: `c${i}`,
      scorer: 'exact',
      scorer_version: '1.0.0',
      score: i < passed ? 1 : 0,
      passed: i < passed,
      label: i >= n ? 'missing_output' : i < passed ? 'match' : 'mismatch',
      detail_hash: null,
      output_chars: null,
      scored_at: at,
    }));
    await appendCaseResults(ds, run.run_id, rows, at);
    return ds.transaction((m) => service.decide(m, { data: scored, metadata: meta(at) }));
  }

  it('skips an inconclusive_noise run as the automatic baseline (G2, G4) and writes no finding for it', async () => {
    await completeRun(opened('a-good', { subject_id: 'noisy' }), 9, 10, '2026-11-30T01:00:00.000Z');
    const noisy = await completeRun(opened('a-noisy', { subject_id: 'noisy' }), 7, 10, '2026-11-30T02:00:00.000Z');
    expect(noisy).toMatchObject({ kind: 'recorded', finding: false, row: { verdict: 'inconclusive_noise', baseline_run_id: 'a-good', baseline_choice: 'automatic' } });
    const next = await completeRun(opened('a-next', { subject_id: 'noisy' }), 9, 10, '2026-11-30T03:00:00.000Z');
    expect(next).toMatchObject({ kind: 'recorded', row: { baseline_run_id: 'a-good', verdict: 'no_regression' } });
    expect(await repo.findingFor(ds, DEFAULT_PROJECT, 'a-noisy')).toBeNull();
  });

  it('a redelivered run.scored decides nothing twice', async () => {
    const again = await ds.transaction((m) => service.decide(m, { data: { run_id: 'a-next', n: 10, passed: 0, score_sum: 0, missing_case_ids: [] }, metadata: meta('2026-11-30T04:00:00.000Z') }));
    expect(again).toEqual({ kind: 'duplicate' });
    expect((await repo.find(ds, DEFAULT_PROJECT, 'a-next'))!.passed).toBe(9);
  });

  it('a regressed run is not the next automatic baseline (G4: the ratchet)', async () => {
    await completeRun(opened('r-good', { subject_id: 'ratchet' }), 10, 10, '2026-11-30T01:00:00.000Z');
    const bad = await completeRun(opened('r-bad', { subject_id: 'ratchet' }), 1, 10, '2026-11-30T02:00:00.000Z');
    expect(bad).toMatchObject({ kind: 'recorded', finding: true, row: { verdict: 'regressed', baseline_run_id: 'r-good' } });
    // As bad as the regressed run: compared with the last good run it is a regression again, not "no change".
    const next = await completeRun(opened('r-next', { subject_id: 'ratchet' }), 1, 10, '2026-11-30T03:00:00.000Z');
    expect(next).toMatchObject({ kind: 'recorded', finding: true, row: { verdict: 'regressed', baseline_run_id: 'r-good' } });
  });

  it('compares only the cases scored in both runs, reports what it left out, and an incomplete run is no baseline (G7, R7)', async () => {
    await completeRun(opened('p-base', { subject_id: 'partial' }), 10, 11, '2026-11-30T01:00:00.000Z');
    // 3 of 11 cases have no output: scored 0 they would read as a drop from 10/11 to 8/11 (a regression
    // past the 0.1 threshold); on the 8 cases both runs scored, nothing dropped.
    const partial = await completeRun(opened('p-part', { subject_id: 'partial' }), 8, 8, '2026-11-30T02:00:00.000Z', 3);
    expect(partial).toMatchObject({ kind: 'recorded', finding: false, row: { verdict: 'no_regression', completeness: 'incomplete', baseline_run_id: 'p-base' } });
    const c = (partial as { row: { comparison: any } }).row.comparison;
    expect(c.compared_cases).toEqual({
      run: { n: 8, of: 11 },
      baseline: { n: 8, of: 11 },
      left_out: { unscored_in_run: 3, unscored_in_baseline: 0, scored_in_one_run_only: 3 },
      paired: { a: 8, b: 0, c: 0, d: 0 },
    });
    expect(c.run).toMatchObject({ passed: 8, n: 8 });
    expect(c.baseline).toMatchObject({ passed: 8, n: 8 });
    expect(await repo.findingFor(ds, DEFAULT_PROJECT, 'p-part')).toBeNull();
    // The next run is compared with the last complete run, not with the partial one.
    const next = await completeRun(opened('p-next', { subject_id: 'partial' }), 1, 11, '2026-11-30T03:00:00.000Z');
    expect(next).toMatchObject({ kind: 'recorded', finding: true, row: { verdict: 'regressed', baseline_run_id: 'p-base' } });
  });

  it('a gate whose judge was skipped raises no finding, is incomplete, and the next run compares with the last eligible one (GT2, R7)', async () => {
    const judged = (runId: string, judgePassed: number, skipped: boolean, at: string) => {
      // 6 deterministic cases that all pass, 4 llm_judge cases: graded, or skipped for want of a credential.
      const judge = { cases: 4, calls: skipped ? 0 : 4, errors: 0, credential_missing: skipped ? 4 : 0, not_configured: 0, skipped: 0, cache_hits: 0, cache_misses: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0, model: skipped ? null : 'm', prompt_version: skipped ? null : 'p' };
      const scored = { run_id: runId, n: 10, passed: 6 + judgePassed, score_sum: 6 + judgePassed, missing_count: 0, missing_case_ids: [], judge };
      return { scored, run: opened(runId, { subject_id: 'judged', scorer_versions: { exact: '1.0.0', llm_judge: '1.0.0' } }), at, judgePassed, skipped };
    };
    const record = async (r: ReturnType<typeof judged>) => {
      await events.append(ds, runStreamId(r.run.run_id), 0, [
        { type: RUN_EVENTS.opened, version: 1, data: r.run, metadata: meta(r.at) },
        { type: RUN_EVENTS.sealed, version: 1, data: { run_id: r.run.run_id }, metadata: meta(r.at) },
        { type: RUN_EVENTS.scored, version: 1, data: r.scored, metadata: meta(r.at) },
      ]);
      const rows = Array.from({ length: 10 }, (_, i) => {
        const isJudge = i >= 6;
        const passed = !isJudge || (!r.skipped && i - 6 < r.judgePassed);
        const label = !isJudge ? 'match' : r.skipped ? 'judge_credential_missing' : passed ? 'judge_pass' : 'judge_fail';
        return {
          run_id: r.run.run_id, case_id: `c${i}`, scorer: isJudge ? 'llm_judge' : 'exact', scorer_version: '1.0.0', score: passed ? 1 : 0, passed, label,
          detail_hash: null, output_chars: null, scored_at: r.at,
          ...(isJudge && !r.skipped ? { judge: { judge_model: 'm', prompt_version: 'p', judge_cost_usd: 0, judge_input_tokens: 0, judge_output_tokens: 0, judge_cached: null } } : {}),
        };
      });
      await appendCaseResults(ds, r.run.run_id, rows, r.at);
      return ds.transaction((m) => service.decide(m, { data: r.scored, metadata: meta(r.at) }));
    };
    await record(judged('g-base', 4, false, '2026-11-30T01:00:00.000Z'));
    // Scored as failures, the 4 skipped judge cases would be a drop from 10/10 to 6/10: a false finding.
    const skipped = await record(judged('g-skip', 0, true, '2026-11-30T02:00:00.000Z'));
    expect(skipped).toMatchObject({ kind: 'recorded', finding: false, row: { verdict: 'no_regression', completeness: 'incomplete', baseline_run_id: 'g-base' } });
    expect((skipped as any).row.comparison.compared_cases).toMatchObject({ run: { n: 6, of: 10 }, left_out: { unscored_in_run: 4 } });
    expect(await repo.findingFor(ds, DEFAULT_PROJECT, 'g-skip')).toBeNull();
    const next = await record(judged('g-next', 4, false, '2026-11-30T03:00:00.000Z'));
    expect(next).toMatchObject({ kind: 'recorded', row: { verdict: 'no_regression', completeness: 'complete', baseline_run_id: 'g-base' } });
  });

  it('records the verdict on the run\'s stream as run.compared, once (R7)', async () => {
    const stream = await events.readStream(ds, runStreamId('p-next'));
    expect(stream.map((e) => e.type)).toEqual(['run.opened', 'run.sealed', 'run.scored', 'run.compared']);
    const finding = await repo.findingFor(ds, DEFAULT_PROJECT, 'p-next');
    expect(stream[3].data).toMatchObject({ run_id: 'p-next', verdict: 'regressed', completeness: 'complete', baseline_run_id: 'p-base', chosen_by: 'automatic', finding_id: finding!.finding_id });
    expect((stream[3].data as any).comparison).toEqual((await repo.find(ds, DEFAULT_PROJECT, 'p-next'))!.comparison);
  });

  describe('with the bus down (G6)', () => {
    let nc: NatsConnection;
    const names = testBusNames('finding');
    const stream = names.stream('OUT');

    beforeAll(async () => {
      nc = await connect({ servers: testServers.nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 200 });
      const jsm = await jetstreamManager(nc);
      // The relay publishes every outbox row (run events too), so the stream takes every subject of the test.
      await jsm.streams.add({ name: stream, subjects: [names.subject('>')] });
    });

    afterAll(async () => {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.delete(stream).catch(() => undefined);
      await nc.close();
    });

    it('stores the decision and the finding while NATS is stopped, and publishes finding.reported once it is back', async () => {
      // Newcombe (1998) example (a), the candidate falling from 56/70 to 48/80.
      await completeRun(opened('b-base', { subject_id: 'down', case_count: 70 }), 56, 70, '2026-11-30T05:00:00.000Z');
      const relay = new OutboxRelay(ds, await JetStreamBus.connect(nc, { streamPrefix: '', subjectPrefix: '' }, { publishTimeoutMs: 1_000 }), { wireSubject: (s) => names.subject(s) });
      while ((await relay.tick().catch(() => 0)) > 0);

      stopNats();
      try {
        // Another suite version (80 cases against 70): independent samples, as in Newcombe's example.
      const outcome = await completeRun(opened('b-cand', { subject_id: 'down', case_count: 80, suite_version: 2 }), 48, 80, '2026-11-30T06:00:00.000Z');
        expect(outcome).toMatchObject({ kind: 'recorded', finding: true, row: { verdict: 'regressed' } });
        expect(await repo.findingFor(ds, DEFAULT_PROJECT, 'b-cand')).not.toBeNull();
        await expect(relay.tick()).rejects.toBeDefined();
        const pending = await ds.query(`SELECT subject FROM outbox WHERE published_at IS NULL`);
        expect(pending.map((r: { subject: string }) => r.subject)).toEqual([
          'evals.event.run.opened',
          'evals.event.run.sealed',
          'evals.event.run.scored',
          // The run's results, as the worker announces them (cases.scored v3, issue 27).
          'evals.event.cases.scored',
          'evals.event.run.compared',
          'finding.reported',
        ]);
      } finally {
        await startNats();
      }

      let relayed = 0;
      const deadline = Date.now() + 20_000;
      while (relayed === 0 && Date.now() < deadline) relayed = await relay.tick().catch(() => 0);
      expect(relayed).toBe(6);

      const jsm = await jetstreamManager(nc);
      await jsm.consumers.add(stream, { durable_name: 'subscriber', ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All, filter_subject: names.subject('finding.reported') });
      const consumer = await jetstream(nc).consumers.get(stream, 'subscriber');
      // Earlier tests' findings were relayed too: take this run's.
      let message: any = null;
      while (message === null) {
        const m = await consumer.next({ expires: 5_000 });
        expect(m).not.toBeNull();
        m!.ack();
        if (m!.json<any>().data.run_id === 'b-cand') message = m!.json<any>();
      }
      expect(message.schema).toBe('finding.reported.v1');
      // Every field of spec section 10.
      expect(Object.keys(message.data).sort()).toEqual(
        // ...plus the G7 fields added to v1: two samples of different sizes, so no paired_diff.
        ['baseline', 'baseline_run_id', 'decided_by', 'finding_id', 'independent_diff', 'kind', 'occurred_at', 'pass_rate_diff', 'run', 'run_id', 'score_drop', 'subject_id', 'subject_kind', 'suite', 'suite_version', 'variant'].sort(),
      );
      expect(message.data).toMatchObject({ decided_by: 'independent', independent_diff: message.data.pass_rate_diff });
      expect(message.data).toMatchObject({ kind: 'eval_regression', run_id: 'b-cand', baseline_run_id: 'b-base', run: { passed: 48, n: 80 }, baseline: { passed: 56, n: 70 } });
      // The published interval is Newcombe's for run - baseline: the negation of example (a)'s [0.0524, 0.3339].
      expect(message.data.pass_rate_diff.lower).toBeCloseTo(-0.3339, 4);
      expect(message.data.pass_rate_diff.upper).toBeCloseTo(-0.0524, 4);
      expect(message.data.score_drop).toBeCloseTo(0.2, 12);
    }, 60_000);
  });
});
