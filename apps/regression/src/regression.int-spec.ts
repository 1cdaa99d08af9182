import { randomUUID } from 'node:crypto';
import { decodeMessage, DEFAULT_PROJECT, messageProject, SUBJECTS } from '@evals/contracts';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { JetStreamBus, streamOf, subjectOf, type BusNames } from '@evals/bus';
import { RUN_EVENTS, runStreamId, type RunOpenedV1 } from '@evals/domain';
import { createDataSource, EventStore, migrate, OutboxRelay, RegressionRepository, type EvidenceRow, type RunVerdictRow } from '@evals/persistence';
import type { DataSource } from 'typeorm';
import { createTestSchema, testBusNames, type TestSchema } from '../../../test/support/isolation';
import { startNats, stopNats, testServers } from '../../../test/support/servers';
import { statementsSent } from '../../../test/support/statements';
import { appendCaseResults } from './case-results.testing';
import { RegressionService } from './regression.service';
import { RunScoredConsumer } from './run-scored.consumer';

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

  it('G4: the last eligible run is the baseline however deep in the history it is (the first page of 20 read first, issue 28)', async () => {
    await completeRun(opened('deep-good', { subject_id: 'deep' }), 10, 10, '2026-11-30T01:00:00.000Z');
    // 25 regressed runs after it, none eligible: the good run is beyond the first page of the history.
    for (let i = 0; i < 25; i++) {
      const at = new Date(Date.parse('2026-11-30T02:00:00.000Z') + i * 60_000).toISOString();
      expect(await completeRun(opened(`deep-bad-${i}`, { subject_id: 'deep' }), 1, 10, at)).toMatchObject({ row: { verdict: 'regressed', baseline_run_id: 'deep-good' } });
    }
    const next = await completeRun(opened('deep-next', { subject_id: 'deep' }), 10, 10, '2026-11-30T03:00:00.000Z');
    expect(next).toMatchObject({ kind: 'recorded', row: { baseline_run_id: 'deep-good', baseline_choice: 'automatic', verdict: 'no_regression' } });
    // And a newer eligible run is found in the first page.
    const after = await completeRun(opened('deep-after', { subject_id: 'deep' }), 10, 10, '2026-11-30T04:00:00.000Z');
    expect(after).toMatchObject({ row: { baseline_run_id: 'deep-next' } });
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

  describe('the run.scored consumer (issue 28: one transaction a micro-batch)', () => {
    /** A delivery of `run.scored` as the bus hands it over, recording how it was settled. */
    function delivery(seq: number, scored: object, at: string) {
      const settled: string[] = [];
      const body = { type: RUN_EVENTS.scored, version: 1, data: scored, metadata: meta(at) };
      const msg = {
        subject: 'evals.event.run.scored',
        data: new TextEncoder().encode(JSON.stringify(body)),
        seq,
        deliveryCount: 1,
        messageId: null,
        ack: () => void settled.push('ack'),
        ackConfirmed: async () => void settled.push('ack'),
        nak: () => void settled.push('nak'),
        working: () => undefined,
      };
      return { msg, settled };
    }
    async function streamOf(run: RunOpenedV1, scored: object, at: string) {
      await events.append(ds, runStreamId(run.run_id), 0, [
        { type: RUN_EVENTS.opened, version: 1, data: run, metadata: meta(at) },
        { type: RUN_EVENTS.sealed, version: 1, data: { run_id: run.run_id }, metadata: meta(at) },
        { type: RUN_EVENTS.scored, version: 1, data: scored, metadata: meta(at) },
      ]);
      const rows: EvidenceRow[] = Array.from({ length: 10 }, (_, i) => ({
        run_id: run.run_id, case_id: `c${i}`, scorer: 'exact', scorer_version: '1.0.0', score: i < (scored as { passed: number }).passed ? 1 : 0,
        passed: i < (scored as { passed: number }).passed, label: 'match', detail_hash: null, output_chars: null, scored_at: at,
      }));
      await appendCaseResults(ds, run.run_id, rows, at);
    }
    const scoredOf = (run_id: string, passed: number) => ({ run_id, n: 10, passed, score_sum: passed, missing_count: 0, missing_case_ids: [] });
    const consumerWith = (regression: RegressionService) => new RunScoredConsumer(regression, ds, {} as never, { event: () => undefined } as never);

    it('decides a batch in stream order in one transaction: the second run is compared with the first, decided in the same batch', async () => {
      const first = scoredOf('b-first', 10);
      const second = scoredOf('b-second', 1);
      await streamOf(opened('b-first', { subject_id: 'batched' }), first, '2026-11-30T01:00:00.000Z');
      await streamOf(opened('b-second', { subject_id: 'batched' }), second, '2026-11-30T02:00:00.000Z');
      const batch = [delivery(1, first, '2026-11-30T01:00:00.000Z'), delivery(2, second, '2026-11-30T02:00:00.000Z')];
      const commits = await countCommits(() => consumerWith(service).handle(batch.map((d) => d.msg)));
      expect(commits).toBe(1);
      expect((await repo.find(ds, DEFAULT_PROJECT, 'b-second'))).toMatchObject({ verdict: 'regressed', baseline_run_id: 'b-first' });
      expect(batch.map((d) => d.settled)).toEqual([['ack'], ['ack']]);
    });

    it('reads the streams and the cases of a batch\'s runs in one query each, before its first decision', async () => {
      const ids = ['b-chain-1', 'b-chain-2', 'b-chain-3', 'b-chain-4'];
      const scored = ids.map((id, i) => scoredOf(id, 10 - i));
      const at = (i: number) => `2026-11-30T0${i + 1}:00:00.000Z`;
      for (const [i, id] of ids.entries()) await streamOf(opened(id, { subject_id: 'chained' }), scored[i], at(i));
      const batch = scored.map((x, i) => delivery(i + 1, x, at(i)));
      // A service of its own: nothing of these runs is in its cache of folded runs.
      const { sent } = await statementsSent(() => consumerWith(new RegressionService({ uuid: () => randomUUID() })).handle(batch.map((d) => d.msg)));
      const reads = sent.filter((q) => /^\s*SELECT/.test(q) && /FROM events/.test(q));
      expect(reads.filter((q) => /type = 'cases.scored'/.test(q))).toHaveLength(1);
      expect(reads.filter((q) => /stream_id/.test(q))).toHaveLength(1);
      // Each compared with the one before it, decided earlier in the same batch.
      for (const [i, id] of ids.entries()) expect(await repo.find(ds, DEFAULT_PROJECT, id)).toMatchObject({ baseline_run_id: i === 0 ? null : ids[i - 1] });
      expect(batch.map((d) => d.settled)).toEqual(ids.map(() => ['ack']));
    });

    it('issue 28: a batch of 9 runs sends no more statements than a batch of 2, and decides each as one event a batch does (G1, G4, R7)', async () => {
      const at = (i: number) => new Date(Date.parse('2026-11-30T10:00:00.000Z') + i * 60_000).toISOString();
      // Good, good, regressed, ..., so a later run's baseline skips one decided earlier in the batch (G4's ratchet).
      const passes = [10, 10, 1, 9, 10, 7, 1, 10];
      // A set of runs on subjects of its own: `set` twins the same results at the same times.
      const runsOf = (set: string, main: readonly number[], other: boolean) => {
        const runs = main.map((passed, i) => ({ id: `${set}-m${i}`, subject: `${set}-main`, passed, at: at(i + 1) }));
        // Another subject's run in the middle of the stream.
        if (other) runs.splice(4, 0, { id: `${set}-o0`, subject: `${set}-other`, passed: 3, at: at(5) });
        return runs;
      };
      type Run = ReturnType<typeof runsOf>[number];
      const subjectsOf = (runs: readonly Run[]) => [...new Set(runs.map((r) => r.subject))];
      async function prepare(runs: readonly Run[]) {
        // Each subject has a run decided before the batch: the first baseline is one the table holds.
        for (const subject of subjectsOf(runs)) {
          await streamOf(opened(`${subject}-prior`, { subject_id: subject }), scoredOf(`${subject}-prior`, 10), at(0));
          await consumerWith(service).handle([delivery(1, scoredOf(`${subject}-prior`, 10), at(0)).msg]);
        }
        for (const r of runs) await streamOf(opened(r.id, { subject_id: r.subject }), scoredOf(r.id, r.passed), r.at);
        return runs.map((r, i) => delivery(i + 1, scoredOf(r.id, r.passed), r.at));
      }
      // A service of its own each time: nothing of these runs or their baselines is in its cache of folded runs.
      const fresh = () => consumerWith(new RegressionService({ uuid: () => randomUUID() }));

      const alone = await prepare(runsOf('bs', passes, true));
      for (const d of alone) await fresh().handle([d.msg]);
      const batched = await prepare(runsOf('bb', passes, true));
      const nine = await statementsSent(() => fresh().handle(batched.map((d) => d.msg)));
      const pair = await prepare(runsOf('b2', [10, 1], false));
      const two = await statementsSent(() => fresh().handle(pair.map((d) => d.msg)));

      expect(batched.map((d) => d.settled)).toEqual(batched.map(() => ['ack']));
      // Both batches record a regression, so both write findings: the same statements, whatever the batch's size.
      expect(nine.sent.length).toBeLessThanOrEqual(two.sent.length);
      expect(nine.sent.length).toBeLessThanOrEqual(11);
      // Every verdict, baseline and comparison what the run decided alone got, and each recorded on its stream (R7).
      const decided = async (set: string) => {
        const out: string[] = [];
        for (const r of runsOf(set, passes, true)) {
          const row = await repo.find(ds, DEFAULT_PROJECT, r.id);
          const stream = await events.readStream(ds, runStreamId(r.id));
          const finding = await repo.findingFor(ds, DEFAULT_PROJECT, r.id);
          out.push(JSON.stringify({ row, compared: stream.map((e) => e.type), finding: finding !== null }).replaceAll(`${set}-`, 'set-'));
        }
        return out;
      };
      const verdicts = await decided('bb');
      expect(verdicts).toEqual(await decided('bs'));
      expect(verdicts.map((v) => JSON.parse(v).row.verdict)).toEqual(['no_regression', 'no_regression', 'regressed', 'no_regression', 'regressed', 'no_regression', 'inconclusive_noise', 'regressed', 'no_regression']);
      expect(verdicts.every((v) => JSON.parse(v).compared.at(-1) === 'run.compared')).toBe(true);
    });

    it('G4 in one batch: runs past the first page of 20 still find the last eligible run (the whole history with the batch\'s own verdicts, issue 28)', async () => {
      const at = (i: number) => new Date(Date.parse('2026-11-30T12:00:00.000Z') + i * 60_000).toISOString();
      await streamOf(opened('bd-good', { subject_id: 'batch-deep' }), scoredOf('bd-good', 10), at(0));
      await consumerWith(service).handle([delivery(1, scoredOf('bd-good', 10), at(0)).msg]);
      // 3 regressed runs in the table, then a batch of 22 more and a good run: from the 18th on, the first
      // page (table and batch together) is all regressed runs, so the good run is found in the whole history.
      const ids = Array.from({ length: 25 }, (_, i) => `bd-bad-${String(i).padStart(2, '0')}`);
      for (const [i, id] of ids.entries()) await streamOf(opened(id, { subject_id: 'batch-deep' }), scoredOf(id, 1), at(i + 1));
      for (const [i, id] of ids.slice(0, 3).entries()) await consumerWith(service).handle([delivery(i + 1, scoredOf(id, 1), at(i + 1)).msg]);
      await streamOf(opened('bd-next', { subject_id: 'batch-deep' }), scoredOf('bd-next', 10), at(30));
      await streamOf(opened('bd-after', { subject_id: 'batch-deep' }), scoredOf('bd-after', 10), at(31));
      const batch = [...ids.slice(3).map((id, i) => delivery(i + 1, scoredOf(id, 1), at(i + 4))), delivery(23, scoredOf('bd-next', 10), at(30)), delivery(24, scoredOf('bd-after', 10), at(31))];
      await consumerWith(new RegressionService({ uuid: () => randomUUID() })).handle(batch.map((d) => d.msg));
      expect(batch.map((d) => d.settled)).toEqual(batch.map(() => ['ack']));
      for (const id of ids) expect(await repo.find(ds, DEFAULT_PROJECT, id)).toMatchObject({ verdict: 'regressed', baseline_run_id: 'bd-good' });
      expect(await repo.find(ds, DEFAULT_PROJECT, 'bd-next')).toMatchObject({ verdict: 'no_regression', baseline_run_id: 'bd-good', baseline_choice: 'automatic' });
      // And the good run decided in the batch is the next one's baseline, at the top of its first page.
      expect(await repo.find(ds, DEFAULT_PROJECT, 'bd-after')).toMatchObject({ verdict: 'no_regression', baseline_run_id: 'bd-next' });
    });

    it('issue 28: a verdict another process recorded after the batch read the table rolls the batch back; decided again one event a transaction, that run is a duplicate', async () => {
      const first = scoredOf('br-first', 10);
      const raced = scoredOf('br-raced', 10);
      await streamOf(opened('br-first', { subject_id: 'raced' }), first, '2026-11-30T01:00:00.000Z');
      await streamOf(opened('br-raced', { subject_id: 'raced-2' }), raced, '2026-11-30T01:00:00.000Z');
      const racing = new RegressionService({ uuid: () => randomUUID() });
      const readAhead = racing.readAhead.bind(racing);
      // The other process's row, committed between this batch's read and its write (here: in its transaction, so each attempt sees it).
      racing.readAhead = async (sql, scored) => {
        const read = await readAhead(sql, scored);
        if (scored.some((s) => s.run_id === 'br-raced')) {
          const row = { ...(await repo.find(ds, DEFAULT_PROJECT, 'b-first'))!, run_id: 'br-raced', subject_id: 'raced-2', baseline_run_id: null, verdict: 'no_baseline', comparison: { by: 'another process' } };
          await repo.record(sql, row);
        }
        return read;
      };
      const batch = [delivery(1, first, '2026-11-30T01:00:00.000Z'), delivery(2, raced, '2026-11-30T01:00:00.000Z')];
      const commits = await countCommits(() => consumerWith(racing).handle(batch.map((d) => d.msg)));
      // The batch rolled back (VerdictRecordedMeanwhile), then one transaction each.
      expect(commits).toBe(2);
      expect(batch.map((d) => d.settled)).toEqual([['ack'], ['ack']]);
      expect(await repo.find(ds, DEFAULT_PROJECT, 'br-first')).toMatchObject({ verdict: 'no_baseline' });
      expect(await repo.find(ds, DEFAULT_PROJECT, 'br-raced')).toMatchObject({ comparison: { by: 'another process' } });
      // Nothing of this process's decision of it: no run.compared.
      expect((await events.readStream(ds, runStreamId('br-raced'))).map((e) => e.type)).toEqual(['run.opened', 'run.sealed', 'run.scored']);
    });

    it('an event that cannot be decided fails alone: the batch is decided again one event a transaction, the others recorded and acknowledged', async () => {
      const good = scoredOf('b-good', 10);
      const poison = scoredOf('b-poison', 10);
      await streamOf(opened('b-good', { subject_id: 'poisoned' }), good, '2026-11-30T01:00:00.000Z');
      await streamOf(opened('b-poison', { subject_id: 'poisoned-2' }), poison, '2026-11-30T01:00:00.000Z');
      const failing = new RegressionService({ uuid: () => randomUUID() });
      const decide = failing.decide.bind(failing);
      failing.decide = async (sql, e) => {
        if (e.data.run_id === 'b-poison') throw new Error('cannot decide');
        return decide(sql, e);
      };
      const batch = [delivery(1, poison, '2026-11-30T01:00:00.000Z'), delivery(2, good, '2026-11-30T01:00:00.000Z')];
      await consumerWith(failing).handle(batch.map((d) => d.msg));
      expect(batch.map((d) => d.settled)).toEqual([['nak'], ['ack']]);
      expect(await repo.find(ds, DEFAULT_PROJECT, 'b-good')).toMatchObject({ verdict: 'no_baseline' });
      expect(await repo.find(ds, DEFAULT_PROJECT, 'b-poison')).toBeNull();
    });

    /** Transactions committed on this schema's data source while `work` runs. */
    async function countCommits(work: () => Promise<void>): Promise<number> {
      let commits = 0;
      const transaction = ds.transaction.bind(ds);
      (ds as { transaction: unknown }).transaction = async (...args: unknown[]) => {
        const result = await (transaction as (...a: unknown[]) => Promise<unknown>)(...args);
        commits++;
        return result;
      };
      try {
        await work();
      } finally {
        (ds as { transaction: unknown }).transaction = transaction;
      }
      return commits;
    }
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
        // In the order they were written (a relay tick that failed leaves its claimed rows elsewhere in the heap).
        const pending = await ds.query(`SELECT subject FROM outbox WHERE published_at IS NULL ORDER BY id`);
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
  /**
   * Issue 30 (ADR 0009): two projects on the same suite key and subject. Each run's baseline, pin and finding
   * is of its own project - the same suite key in another project is another suite - and its finding.reported
   * goes out on its project's subject (`finding.reported.team-a`) with metadata.project, while `default` keeps
   * the bare subject and an envelope without the field.
   */
  describe('two projects on one suite key and subject (issue 30)', () => {
    const A = 'team-a';
    const D = DEFAULT_PROJECT;
    const run = (id: string, project: string, over: Partial<RunOpenedV1> = {}) => opened(id, { subject_id: 'shared', ...(project === D ? {} : { project }), ...over });
    const verdictOf = (outcome: Awaited<ReturnType<typeof completeRun>>) => (outcome as { row: RunVerdictRow }).row;

    it("the automatic baseline is chosen among the run's own project only", async () => {
      await completeRun(run('d-1', D), 9, 10, '2026-12-01T01:00:00.000Z');
      // The newest run of this suite and subject is d-1, of default: team-a's first run has no baseline.
      const a1 = verdictOf(await completeRun(run('a-1', A), 10, 10, '2026-12-01T02:00:00.000Z'));
      expect(a1).toMatchObject({ project: A, verdict: 'no_baseline', baseline_run_id: null });
      // Compared with a-1 (10/10, newer) it would drop; compared with its own project's d-1 it does not.
      const d2 = verdictOf(await completeRun(run('d-2', D), 9, 10, '2026-12-01T03:00:00.000Z'));
      expect(d2).toMatchObject({ project: D, baseline_run_id: 'd-1', baseline_choice: 'automatic', verdict: 'no_regression' });
      // d-2 is newer and eligible, but of default: team-a's regression is against a-1.
      const a2 = await completeRun(run('a-2', A), 1, 10, '2026-12-01T04:00:00.000Z');
      expect(a2).toMatchObject({ kind: 'recorded', finding: true, row: { project: A, verdict: 'regressed', baseline_run_id: 'a-1' } });
      expect((await repo.history(ds, A, 'support', 'agent', 'shared')).map((r) => r.run_id)).toEqual(['a-2', 'a-1']);
      expect((await repo.history(ds, D, 'support', 'agent', 'shared')).map((r) => r.run_id)).toEqual(['d-2', 'd-1']);
    });

    it('verdict rows carry the project and are found only from it', async () => {
      expect(await repo.find(ds, A, 'a-2')).toMatchObject({ project: A, verdict: 'regressed' });
      expect(await repo.find(ds, D, 'a-2')).toBeNull();
      expect(await repo.find(ds, A, 'd-2')).toBeNull();
      expect(await ds.query(`SELECT run_id, project FROM run_verdicts WHERE run_id IN ('a-1', 'd-1') ORDER BY run_id`)).toEqual([
        { run_id: 'a-1', project: A },
        { run_id: 'd-1', project: D },
      ]);
      expect(await repo.subjects(ds, A, { subject_id: 'shared' })).toEqual([{ suite_key: 'support', subject_kind: 'agent', subject_id: 'shared' }]);
      expect(await repo.subjects(ds, 'team-none', {})).toEqual([]);
    });

    it("pins are per project: the same suite, subject and variant pinned in both, each decision uses its own project's pin", async () => {
      await repo.pin(ds, D, { suite_key: 'support', subject_kind: 'agent', subject_id: 'shared', variant: null, run_id: 'd-1' });
      expect(await repo.pinFor(ds, A, 'support', 'agent', 'shared', null)).toBeNull();
      expect(await repo.pins(ds, A, { subject_id: 'shared' })).toEqual([]);
      await repo.pin(ds, A, { suite_key: 'support', subject_kind: 'agent', subject_id: 'shared', variant: null, run_id: 'a-1' });
      expect((await repo.pins(ds, D, { subject_id: 'shared' })).map((p) => p.run_id)).toEqual(['d-1']);
      expect((await repo.pins(ds, A, { subject_id: 'shared' })).map((p) => p.run_id)).toEqual(['a-1']);
      // Re-pinning in one project moves nothing of the other's.
      await repo.pin(ds, D, { suite_key: 'support', subject_kind: 'agent', subject_id: 'shared', variant: null, run_id: 'd-2' });
      expect(await repo.pinFor(ds, A, 'support', 'agent', 'shared', null)).toMatchObject({ run_id: 'a-1' });
      await repo.pin(ds, D, { suite_key: 'support', subject_kind: 'agent', subject_id: 'shared', variant: null, run_id: 'd-1' });

      const a3 = verdictOf(await completeRun(run('a-3', A), 10, 10, '2026-12-01T05:00:00.000Z'));
      expect(a3).toMatchObject({ baseline_run_id: 'a-1', baseline_choice: 'pinned' });
      // A default regression, against default's pin: its finding stays on the bare subject (below).
      const d3 = await completeRun(run('d-3', D), 1, 10, '2026-12-01T06:00:00.000Z');
      expect(d3).toMatchObject({ finding: true, row: { baseline_run_id: 'd-1', baseline_choice: 'pinned', verdict: 'regressed' } });
    });

    it("another project's run as an explicit baseline is refused as a run never completed, naming only the id sent", async () => {
      const a4 = verdictOf(await completeRun(run('a-4', A, { baseline_run_id: 'd-2' }), 10, 10, '2026-12-01T07:00:00.000Z'));
      const missing = verdictOf(await completeRun(run('a-5', A, { baseline_run_id: 'nowhere' }), 10, 10, '2026-12-01T07:30:00.000Z'));
      expect(missing).toMatchObject({ verdict: 'no_baseline', comparison: { error: { code: 'BASELINE_NOT_FOUND', message: 'baseline nowhere is not a completed run' } } });
      expect(a4).toMatchObject({ verdict: 'no_baseline', comparison: { error: { code: 'BASELINE_NOT_FOUND', message: 'baseline d-2 is not a completed run' } } });
      expect(Object.keys(a4.comparison as object)).toEqual(Object.keys(missing.comparison as object));
    });

    it('findings are listed and found only in their own project', async () => {
      const ids = async (project: string) => ((await repo.findings(ds, project, { subject_id: 'shared', limit: 50 })) as Array<{ run_id: string }>).map((f) => f.run_id);
      expect(await ids(A)).toEqual(['a-2']);
      expect(await ids(D)).toEqual(['d-3']);
      expect(await repo.findingFor(ds, A, 'a-2')).not.toBeNull();
      expect(await repo.findingFor(ds, D, 'a-2')).toBeNull();
      expect(await repo.findingFor(ds, A, 'd-3')).toBeNull();
      expect(await ds.query(`SELECT run_id, project FROM findings WHERE run_id IN ('a-2', 'd-3') ORDER BY run_id`)).toEqual([
        { run_id: 'a-2', project: A },
        { run_id: 'd-3', project: D },
      ]);
    });

    it("finding.reported: a project's on finding.reported.<project> with metadata.project; default's on the bare subject, without it", async () => {
      const rows: Array<{ run_id: string; subject: string; metadata: Record<string, unknown> }> = await ds.query(
        `SELECT payload->'data'->>'run_id' AS run_id, subject, payload->'metadata' AS metadata FROM outbox
         WHERE payload->>'type' = 'finding.reported' AND payload->'data'->>'run_id' IN ('a-2', 'd-3') ORDER BY run_id`,
      );
      expect(rows.map((r) => [r.run_id, r.subject, r.metadata.project])).toEqual([
        ['a-2', 'finding.reported.team-a', A],
        ['d-3', 'finding.reported', undefined],
      ]);
      expect('project' in rows[1].metadata).toBe(false);
    });

    describe('relayed to JetStream with the service topology (EVALS_OUTBOUND)', () => {
      let nc: NatsConnection;
      let names: BusNames;

      beforeAll(async () => {
        nc = await connect({ servers: testServers.nats.url });
        const t = testBusNames('rgp');
        names = { streamPrefix: `RGP_${t.suffix}_`, subjectPrefix: `rgp_${t.suffix}` };
        const bus = await JetStreamBus.connect(nc, names, { storage: 'memory', publishTimeoutMs: 5_000 });
        await bus.ensureTopology();
        const relay = new OutboxRelay(ds, bus, { wireSubject: (s) => subjectOf(names, s) });
        // Everything pending: this block's rows (the earlier blocks' were relayed by the bus-down test).
        while ((await relay.tick()) > 0);
      });

      afterAll(async () => {
        const jsm = await jetstreamManager(nc);
        for (const s of ['EVALS_INBOUND', 'EVALS_WORK', 'EVALS_EVENTS', 'EVALS_OUTBOUND'] as const) await jsm.streams.delete(streamOf(names, s)).catch(() => undefined);
        await nc.close();
      });

      /** The messages a consumer filtering `filter` (a contract subject) reads from EVALS_OUTBOUND. */
      async function read(filter: string, durable: string): Promise<Array<{ subject: string; body: string }>> {
        const jsm = await jetstreamManager(nc);
        const stream = streamOf(names, 'EVALS_OUTBOUND');
        await jsm.consumers.add(stream, { durable_name: durable, ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All, filter_subject: subjectOf(names, filter) });
        const consumer = await jetstream(nc).consumers.get(stream, durable);
        const out: Array<{ subject: string; body: string }> = [];
        const pending = (await consumer.info()).num_pending;
        for (let i = 0; i < pending; i++) {
          const m = await consumer.next({ expires: 5_000 });
          if (!m) break;
          m.ack();
          out.push({ subject: m.subject, body: m.string() });
        }
        return out;
      }

      it("a consumer of team-a's subject gets team-a's finding only, with metadata.project; a consumer of the bare subject only default's", async () => {
        const teamA = await read('finding.reported.team-a', 'team-a');
        expect(teamA.map((m) => m.subject)).toEqual([subjectOf(names, 'finding.reported.team-a')]);
        // The payload's type stays the contract subject; the project travels in the envelope, and the message
        // decodes on its own project's token only.
        const decoded = decodeMessage('finding.reported.team-a', teamA[0].body);
        expect(decodeMessage(SUBJECTS.FINDING_REPORTED, teamA[0].body).ok).toBe(false);
        expect(decoded.ok).toBe(true);
        if (!decoded.ok) return;
        expect(decoded.message.data).toMatchObject({ run_id: 'a-2', baseline_run_id: 'a-1' });
        expect(messageProject(decoded.message.metadata)).toBe(A);

        const bare = await read('finding.reported', 'bare');
        const runIds = bare.map((m) => JSON.parse(m.body).data.run_id);
        expect(runIds).toContain('d-3');
        expect(runIds).not.toContain('a-2');
        const d3 = bare.find((m) => JSON.parse(m.body).data.run_id === 'd-3')!;
        expect(JSON.parse(d3.body).metadata).not.toHaveProperty('project');

        // A consumer of every project filters finding.> (ADR 0009): both findings, each with its own envelope.
        const all = await read('finding.>', 'all-projects');
        const projects = new Map(all.map((m) => [JSON.parse(m.body).data.run_id, messageProject(JSON.parse(m.body).metadata)]));
        expect([projects.get('a-2'), projects.get('d-3')]).toEqual([A, D]);
      });
    });
  });
});
