import { randomUUID } from 'node:crypto';
import { decodeMessage, DEFAULT_PROJECT, SUBJECTS } from '@evals/contracts';
import { wilson } from '@evals/stats';
import { CaseResultRepository, createDataSource, migrate, RunReadModelRepository, type StoredEvent } from '@evals/persistence';
import type { DataSource } from 'typeorm';
import { createTestSchema, type TestSchema } from '../../../test/support/isolation';
import { statementsSent } from '../../../test/support/statements';
import { testServers } from '../../../test/support/servers';
import { rebuildReadModel } from './rebuild-read-model';
import { RUNS_PROJECTION, RunProjector, type ApplyOptions } from './run.projector';
import { RunQueries, formatSseFrame } from '@evals/persistence';
import { asStored, result, RunScript, shuffled } from './run-events.testing';

describe('integration: read-model run projection (R2, R3, R4, R6)', () => {
  let schema: TestSchema;
  let ds: DataSource;
  const repo = new RunReadModelRepository();
  const projector = new RunProjector({ uuid: () => randomUUID() });

  const apply = (events: ReadonlyArray<object | null>, options?: ApplyOptions) => ds.transaction((m) => projector.apply(m, events, options));
  const resultRows = async (runId?: string) =>
    ds.query(`SELECT message_id, payload FROM outbox WHERE subject = $1 ${runId ? `AND payload->'data'->>'run_id' = $2` : ''} ORDER BY id`, runId ? [SUBJECTS.RESULT_RECORDED, runId] : [SUBJECTS.RESULT_RECORDED]);

  beforeAll(async () => {
    schema = await createTestSchema('readmodel');
    ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize: 6 });
    await ds.initialize();
    await migrate(ds);
  });

  afterAll(async () => {
    await ds?.destroy();
    await schema?.drop();
  });

  /** A complete run in the log: opened, two cases.scored batches, sealed, scored (c4 missing). */
  async function completedRun(runId: string, opened = {}): Promise<{ script: RunScript; events: StoredEvent[] }> {
    const s = new RunScript(runId, opened);
    const events = [
      await s.appendRun(ds, s.openedEvent()),
      await s.appendCases(ds, s.casesEvent([result('c1', 1), result('c2', 0.5)])),
      await s.appendCases(ds, s.casesEvent([result('c3', 0, false)])),
      await s.appendRun(ds, s.sealedEvent()),
      await s.appendRun(ds, s.scoredEvent(4, 2, 1.5, ['c4'])),
    ];
    return { script: s, events };
  }

  it('projects a hand-made sequence into the expected run document and EvalResult (R2, R3)', async () => {
    const { events } = await completedRun('run-basic');
    const outcome = await apply(events);
    expect(outcome.statuses).toEqual(['applied', 'applied', 'applied', 'applied', 'applied']);
    expect(outcome.resultsRecorded).toEqual(['run-basic']);
    expect(outcome.checkpoint).toBe(events[4].position);

    const doc = await repo.load(ds, 'run-basic');
    expect(doc).toEqual({
      run_id: 'run-basic',
      suite_key: 'support-triage',
      suite_version: 3,
      suite_content_hash: 'sha256:abc',
      pass_threshold: 0.6,
      regression_threshold: 0.1,
      subject_kind: 'agent',
      subject_id: 'support-bot',
      variant: null,
      baseline_run_id: null,
      source: 'ci',
      case_count: 4,
      scorer_versions: { exact: '1.0.0' },
      status: 'completed',
      scored: 4,
      passed: 2,
      score_sum: 1.5,
      missing_outputs: 1,
      opened_at: events[0].metadata.occurred_at,
      completed_at: events[4].metadata.occurred_at,
    });
    const ci = wilson(2, 4);
    expect(await repo.evalResult(ds, 'run-basic')).toEqual({
      suite: 'support-triage',
      suite_version: 3,
      subject_kind: 'agent',
      subject_id: 'support-bot',
      variant: null,
      run_id: 'run-basic',
      score: 0.375,
      passed: false, // 0.5 < pass_threshold 0.6
      occurred_at: events[4].metadata.occurred_at,
      metrics: {
        pass_rate: 0.5,
        passed: 2,
        n: 4,
        pass_rate_ci: { lower: ci.lower, upper: ci.upper, level: 0.95 },
        missing_outputs: 1,
        pass_threshold: 0.6,
        source: 'ci',
      },
    });
    expect(await repo.checkpoint(ds, RUNS_PROJECTION)).toBe(events[4].position);
  });

  it('writes exactly one evals.result.recorded outbox row, a valid v1 envelope, even when the events are applied twice (R4)', async () => {
    const { events } = await completedRun('run-twice');
    await apply(events.slice(0, 3));
    await apply(events.slice(2)); // overlapping redelivery
    const again = await apply(events);
    expect(again.statuses).toEqual(Array(5).fill('duplicate'));
    expect(again.outboxRows).toBe(0);

    const rows = await resultRows('run-twice');
    expect(rows).toHaveLength(1);
    const decoded = decodeMessage(SUBJECTS.RESULT_RECORDED, JSON.stringify(rows[0].payload));
    expect(decoded.ok).toBe(true);
    const scored = events[4];
    expect(rows[0].payload.metadata).toEqual({
      message_id: rows[0].message_id,
      correlation_id: scored.metadata.correlation_id,
      causation_id: scored.metadata.message_id,
      occurred_at: scored.metadata.occurred_at,
    });
    expect(rows[0].payload.data).toEqual(await repo.evalResult(ds, 'run-twice'));
    expect((await repo.load(ds, 'run-twice'))?.scored).toBe(4);
  });

  /** The statements a projection of `events` sends, recorded on its transaction; the projection commits. */
  async function statementsOf(events: ReadonlyArray<object | null>, onQuery?: (text: string) => Promise<void>): Promise<string[]> {
    const statements: string[] = [];
    await ds.transaction((m) =>
      projector.apply(
        new Proxy(m, {
          get: (target, key) =>
            key === 'query'
              ? async (text: string, parameters?: unknown[]) => {
                  statements.push(text.replace(/\s+/g, ' ').trim());
                  await onQuery?.(text);
                  return target.query(text, parameters);
                }
              : Reflect.get(target, key),
        }),
        events,
      ),
    );
    return statements;
  }

  it('issue 28: a micro-batch is written in the same statements however many events and runs it holds', async () => {
    const one = (await completedRun('run-stmt-1')).events;
    const five = (await Promise.all(['a', 'b', 'c', 'd', 'e'].map((k) => completedRun(`run-stmt-5${k}`)))).flatMap((r) => r.events);
    const forOne = await statementsOf(one);
    const forFive = await statementsOf(five);
    // Per event, the inbox claim was a statement of its own (25 here), and per run its document's read and
    // write and its cases caught up from the log; now each is one statement for the batch.
    expect(forFive).toEqual(forOne);
    expect(forFive.filter((q) => q.startsWith('INSERT INTO projection_inbox'))).toHaveLength(1);
    expect(forFive.filter((q) => q.startsWith('SELECT run_id, doc FROM runs'))).toHaveLength(1);
    for (const k of ['a', 'b', 'c', 'd', 'e']) expect((await repo.load(ds, `run-stmt-5${k}`))?.status).toBe('completed');
    expect(await resultRows('run-stmt-5c')).toHaveLength(1);
  });

  it('issue 28 (R2, R3): the regression decisions of a batch (run.compared) are one statement, however many runs it holds', async () => {
    const decided = async (prefix: string, count: number) => {
      const runs = await Promise.all(
        Array.from({ length: count }, async (_, i) => {
          const { script, events } = await completedRun(`${prefix}-${i}`);
          const findingId = i % 2 === 0 ? randomUUID() : null;
          const compared = await script.appendRun(
            ds,
            script.comparedEvent({ verdict: findingId ? 'regressed' : 'no_baseline', completeness: 'complete', baseline_run_id: null, chosen_by: null, comparison: null, finding_id: findingId }),
          );
          return { runId: script.runId, events, compared, findingId };
        }),
      );
      return runs;
    };
    const verdictRows = (prefix: string) =>
      ds.query(`SELECT run_id, verdict, finding_id, comparison, n, passed, score, position, project FROM read_run_verdicts WHERE run_id LIKE $1 ORDER BY run_id`, [`${prefix}-%`]);

    // As the pipeline delivers them: run.compared in a later batch than the run it decides.
    const [two, eight] = [await decided('run-cmp-2', 2), await decided('run-cmp-8', 8)];
    await apply([...two, ...eight].flatMap((r) => r.events));
    const forTwo = await statementsOf(two.map((r) => r.compared));
    const forEight = await statementsOf(eight.map((r) => r.compared));
    // One `INSERT INTO read_run_verdicts` per run before: 14 statements for eight runs, 8 for two; now 7 for either.
    expect(forEight).toEqual(forTwo);
    expect(forEight.filter((q) => q.startsWith('INSERT INTO read_run_verdicts'))).toHaveLength(1);
    const rows = await verdictRows('run-cmp-8');
    expect(rows).toEqual(
      eight.map((r) => ({
        run_id: r.runId,
        verdict: r.findingId ? 'regressed' : 'no_baseline',
        finding_id: r.findingId,
        comparison: null,
        n: 4,
        passed: 2,
        score: 0.375,
        position: String(r.compared.position),
        project: DEFAULT_PROJECT,
      })),
    );

    // Whole runs, compared in the same batch: as many statements for eight runs as for two.
    const [twoWhole, eightWhole] = [await decided('run-cmpw-2', 2), await decided('run-cmpw-8', 8)];
    const wholeTwo = await statementsOf(twoWhole.flatMap((r) => [...r.events, r.compared]));
    const wholeEight = await statementsOf(eightWhole.flatMap((r) => [...r.events, r.compared]));
    expect(wholeEight).toEqual(wholeTwo);
    expect((await verdictRows('run-cmpw-8')).map((r: { run_id: string }) => r.run_id)).toEqual(eightWhole.map((r) => r.runId));

    // A redelivered decision is a duplicate: the first one stands, nothing written again.
    const redelivered = await apply(eight.map((r) => r.compared));
    expect(redelivered.statuses).toEqual(Array(8).fill('duplicate'));
    expect(redelivered.verdictsRecorded).toEqual([]);
    expect(await verdictRows('run-cmp-8')).toEqual(rows);
  });

  it('issue 28: events relayed ahead of their run.opened or run.scored are caught up from the log in as many statements for 8 runs as for 2', async () => {
    const decided = (prefix: string, count: number) =>
      Promise.all(
        Array.from({ length: count }, async (_, i) => {
          const { script, events } = await completedRun(`${prefix}-${i}`);
          const compared = await script.appendRun(ds, script.comparedEvent({ verdict: 'no_baseline', completeness: 'complete', baseline_run_id: null, chosen_by: null, comparison: null, finding_id: null }));
          return { runId: script.runId, events, compared };
        }),
      );
    const cases = new CaseResultRepository();
    const caught = async (runs: Array<{ runId: string }>) => {
      for (const { runId } of runs) {
        expect(await repo.load(ds, runId)).toMatchObject({ status: 'completed', scored: 4, passed: 2 });
        expect((await cases.forRun(ds, runId)).map((c) => c.case_id)).toEqual(['c1', 'c2', 'c3']);
        expect(await resultRows(runId)).toHaveLength(1);
      }
    };

    // A worker's relay ahead of the ingestion's: cases2, the seal and run.scored before run.opened and cases1.
    const [aheadTwo, aheadEight] = [await decided('run-ahead-2', 2), await decided('run-ahead-8', 8)];
    const ahead = (runs: typeof aheadTwo) => runs.flatMap((r) => [r.events[2], r.events[3], r.events[4]]);
    const forTwo = await statementsOf(ahead(aheadTwo));
    const forEight = await statementsOf(ahead(aheadEight));
    // A read of the document and of the stream per run, and a claim per event read from the log, before: 41
    // statements for eight runs, 17 for two; now 10 for either (run.compared alone: 82 and 28, now 12).
    expect(forEight).toEqual(forTwo);
    expect(forEight.filter((q) => q.startsWith('INSERT INTO projection_inbox'))).toHaveLength(1);
    await caught(aheadEight);
    // Their own deliveries later find them applied.
    expect((await apply(aheadEight.flatMap((r) => [r.events[0], r.events[1]]))).statuses).toEqual(Array(16).fill('duplicate'));

    // The regression app's relay ahead of every other: run.compared alone, the whole run read from the log.
    const [lateTwo, lateEight] = [await decided('run-late-2', 2), await decided('run-late-8', 8)];
    const comparedTwo = await statementsOf(lateTwo.map((r) => r.compared));
    const comparedEight = await statementsOf(lateEight.map((r) => r.compared));
    expect(comparedEight).toEqual(comparedTwo);
    expect(comparedEight.filter((q) => q.startsWith('INSERT INTO projection_inbox'))).toHaveLength(1);
    await caught(lateEight);
    const verdicts = await ds.query(`SELECT run_id, verdict, n FROM read_run_verdicts WHERE run_id LIKE 'run-late-8-%' ORDER BY run_id`);
    expect(verdicts).toEqual(lateEight.map((r) => ({ run_id: r.runId, verdict: 'no_baseline', n: 4 })));
    expect((await apply(lateEight.flatMap((r) => r.events))).statuses).toEqual(Array(40).fill('duplicate'));
  });

  it('issue 28: runs whose cases were all applied before their run.scored are completed on one read of the log for the batch', async () => {
    const ids = ['a', 'b', 'c', 'd'].map((k) => `run-caught-${k}`);
    const runs = await Promise.all(ids.map((id) => completedRun(id)));
    // As the pipeline delivers them: every cases.scored in an earlier batch than its run's run.scored.
    await apply(runs.flatMap((r) => r.events.slice(0, -1)));
    const statements = await statementsOf(runs.map((r) => r.events.at(-1)!));
    expect(statements.filter((q) => q.includes("e.type = 'cases.scored'"))).toHaveLength(1);
    for (const id of ids) {
      expect((await repo.load(ds, id))?.status).toBe('completed');
      expect(await resultRows(id)).toHaveLength(1);
    }
  });

  it('issue 28: a batch whose claim another process made meanwhile rolls back whole (INBOX_CLAIM_RACE); its redelivery is a duplicate, one EvalResult', async () => {
    const { events } = await completedRun('run-race');
    let raced = false;
    const lost = await statementsOf(events, async (text) => {
      // Just before this batch writes its claims, another process applies the same events and commits.
      if (raced || !text.startsWith('INSERT INTO projection_inbox')) return;
      raced = true;
      expect((await apply(events)).statuses).toEqual(Array(5).fill('applied'));
    }).catch((e: unknown) => e);
    expect((lost as { code?: string }).code).toBe('INBOX_CLAIM_RACE');
    const redelivered = await apply(events);
    expect(redelivered.statuses).toEqual(Array(5).fill('duplicate'));
    expect(await resultRows('run-race')).toHaveLength(1);
    expect((await repo.load(ds, 'run-race'))?.scored).toBe(4);
  });

  it('applies cases.scored and run.scored that arrive before run.opened, reading run.opened from the log', async () => {
    const { events } = await completedRun('run-early');
    const [opened, cases1, cases2, sealed, scored] = events;
    // Worker relays were faster than the ingestion's: the run's own opening has not been delivered yet.
    const first = await apply([scored, cases2]);
    expect(first.statuses).toEqual(['applied', 'applied']);
    expect((await repo.load(ds, 'run-early'))?.status).toBe('completed');
    // run.scored caught up cases1 from the log (issue 27): its delivery now is a duplicate, its cases are there.
    expect((await new CaseResultRepository().forRun(ds, 'run-early')).map((c) => c.case_id)).toEqual(['c1', 'c2', 'c3']);
    const late = await apply([sealed, opened, cases1]);
    expect(late.statuses).toEqual(['applied', 'duplicate', 'duplicate']);
    const doc = await repo.load(ds, 'run-early');
    expect(doc).toMatchObject({ status: 'completed', scored: 4, passed: 2, score_sum: 1.5, missing_outputs: 1, opened_at: opened.metadata.occurred_at });
    expect(await resultRows('run-early')).toHaveLength(1);
  });

  it('defers an event whose run is opened nowhere yet, applies it once run.opened exists, and dead-letters it on the last delivery', async () => {
    // Events not in the log at all (the bus got ahead of anything the projection can read).
    const s = new RunScript('run-orphan');
    const opened = asStored(s.openedEvent(), 9_000_001, 'run-run-orphan');
    const cases = asStored(s.casesEvent([result('c1', 1)]), 9_000_002, 'run-run-orphan.cases.x');
    const deferred = await apply([cases]);
    expect(deferred.statuses).toEqual(['deferred']);
    expect(await repo.load(ds, 'run-orphan')).toBeNull();
    const [{ claimed }] = await ds.query(`SELECT count(*)::int AS claimed FROM projection_inbox WHERE message_id = $1`, [cases.metadata.message_id]);
    expect(claimed).toBe(0);

    expect((await apply([opened])).statuses).toEqual(['applied']);
    expect((await apply([cases])).statuses).toEqual(['applied']);
    expect(await repo.load(ds, 'run-orphan')).toMatchObject({ status: 'open', scored: 1, passed: 1 });

    const lost = new RunScript('run-never-opened');
    const stray = asStored(lost.sealedEvent(), 9_000_003, 'run-run-never-opened');
    const final = await apply([stray], { deliveries: [{ subject: 'evals.event.run.sealed', stream_seq: 77, final: true }] });
    expect(final.statuses).toEqual(['dead_lettered']);
    const [letter] = await ds.query(`SELECT subject, code, reason, stream_seq FROM dead_letters WHERE message_id = $1`, [stray.metadata.message_id]);
    expect(letter).toMatchObject({ subject: 'evals.event.run.sealed', code: 'RUN_NOT_OPENED', stream_seq: '77' });
  });

  it('dead-letters malformed events with INVALID_EVENT and a reason that quotes no value, and applies the rest of the batch', async () => {
    const s = new RunScript('run-mixed');
    const opened = await s.appendRun(ds, s.openedEvent());
    const secret = 'sk-live-SECRET-VALUE-1234';
    const badScore = { ...asStored(s.casesEvent([{ ...result('c1', 1), score: 7 as number, label: secret }]), 9_100_001, 'x'), data: { run_id: 'run-mixed', results: [{ case_id: secret, score: secret }] } };
    const badType = { ...asStored(s.sealedEvent(), 9_100_002, 'x'), type: secret };
    const badId = { ...asStored(s.sealedEvent(), 9_100_003, 'x'), metadata: { message_id: secret, occurred_at: secret } };
    const outcome = await apply([badScore, opened, null, badType, badId], {
      deliveries: [{ subject: 'evals.event.cases.scored' }, undefined, { subject: 'evals.event.run.sealed', stream_seq: 5 }, undefined, undefined],
    });
    expect(outcome.statuses).toEqual(['dead_lettered', 'applied', 'dead_lettered', 'dead_lettered', 'dead_lettered']);
    const letters = await ds.query(`SELECT subject, code, reason, message_id FROM dead_letters WHERE code = 'INVALID_EVENT' ORDER BY id`);
    expect(letters).toHaveLength(4);
    for (const l of letters) {
      expect(l.code).toBe('INVALID_EVENT');
      expect(JSON.stringify(l)).not.toContain('SECRET');
    }
    expect(letters.map((l: any) => l.reason)).toEqual([
      'data.results[].scorer: isString; data.results[].scorer_version: isString; data.results[].score: inUnitInterval; data.results[].passed: isBoolean; data.results[].label: isString',
      'event: isObject',
      'type: isRunEventType',
      'metadata.message_id: isUuid; metadata.occurred_at: isTimestamp',
    ]);
    expect(letters[0].message_id).toBe(badScore.metadata.message_id);
    expect(await repo.load(ds, 'run-mixed')).toMatchObject({ status: 'open' });
  });

  it('applies cases.scored v2 (counts) and v1 (results) alike, and dead-letters a v2 whose counts cannot be', async () => {
    const s = new RunScript('run-v2');
    await apply([await s.appendRun(ds, s.openedEvent())]);
    const v2 = await s.appendCases(ds, s.countsEvent(2, 1, 1.5));
    const v1 = await s.appendCases(ds, s.casesEvent([result('c3', 1)]));
    const impossible = await s.appendCases(ds, s.countsEvent(2, 3, 9));
    const outcome = await apply([v2, v1, impossible]);
    expect(outcome.statuses).toEqual(['applied', 'applied', 'dead_lettered']);
    expect(await repo.load(ds, 'run-v2')).toMatchObject({ status: 'open', scored: 3, passed: 2, score_sum: 2.5 });
    const [letter] = await ds.query(`SELECT reason FROM dead_letters WHERE message_id = $1`, [impossible.metadata.message_id]);
    expect(letter.reason).toBe('data.passed: isCountNotAboveN; data.score_sum: isSumOfUnitScores');
  });

  it('projects cases.scored v3 into read_case_results and counts it as v2; a backfill adds its cases, not its counts (issue 27)', async () => {
    const s = new RunScript('run-v3');
    await apply([await s.appendRun(ds, s.openedEvent())]);
    const v2 = await s.appendCases(ds, s.countsEvent(2, 1, 1.5));
    const v3 = await s.appendCases(ds, s.resultsEvent([result('c3', 1), result('c4', 0.25, false, 'mismatch')]));
    // The upgrade's backfill repeats the rows the v2 event counted (and one v3 had already): cases only.
    const backfill = await s.appendCases(ds, s.resultsEvent([result('c1', 1), result('c2', 0.5), result('c3', 1)], true));
    const outcome = await apply([v2, v3, backfill]);
    expect(outcome.statuses).toEqual(['applied', 'applied', 'applied']);
    expect(await repo.load(ds, 'run-v3')).toMatchObject({ status: 'open', scored: 4, passed: 2, score_sum: 2.75 });
    const cases = await new CaseResultRepository().forRun(ds, 'run-v3');
    expect(cases.map((c) => [c.case_id, c.score, c.passed, c.label])).toEqual([
      ['c1', 1, true, 'pass'],
      ['c2', 0.5, true, 'pass'],
      ['c3', 1, true, 'pass'],
      ['c4', 0.25, false, 'mismatch'],
    ]);
    expect(cases[2].scored_at).toBe(v3.metadata.occurred_at);
    // A redelivery is a duplicate and writes no row twice.
    expect((await apply([v3])).statuses).toEqual(['duplicate']);
    expect(await new CaseResultRepository().forRun(ds, 'run-v3')).toHaveLength(4);
  });

  it('issue 28: a batch of many cases is written to read_case_results by COPY; a case already there falls back to the statement, each case once', async () => {
    const s = new RunScript('run-copy');
    await apply([await s.appendRun(ds, s.openedEvent())]);
    const ids = Array.from({ length: 70 }, (_, i) => `c${String(i).padStart(3, '0')}`);
    const judged = { ...result('c000', 0.75), scorer: 'llm_judge', judge_model: 'judge-model-1', prompt_version: 'p2' };
    const first = await s.appendCases(ds, s.resultsEvent([judged, ...ids.slice(1).map((id, i) => result(id, i % 3 === 0 ? 0 : 1))]));
    const { result: outcome, sent } = await statementsSent(() => apply([first]));
    expect(outcome.statuses).toEqual(['applied']);
    expect(sent.filter((q) => q.startsWith('COPY read_case_results'))).toHaveLength(1);
    expect(sent.some((q) => q.startsWith('INSERT INTO read_case_results'))).toBe(false);
    const cases = new CaseResultRepository();
    const written = await cases.forRun(ds, 'run-copy');
    expect(written.map((c) => c.case_id)).toEqual(ids);
    expect(written[0]).toEqual({ case_id: 'c000', scorer: 'llm_judge', scorer_version: '1.0.0', score: 0.75, passed: true, label: 'pass', scored_at: first.metadata.occurred_at });
    expect(written[1]).toMatchObject({ case_id: 'c001', score: 0, passed: false, label: 'fail' });
    expect(await cases.judged(ds, 'run-copy')).toEqual([{ case_id: 'c000', passed: true, judge_model: 'judge-model-1', prompt_version: 'p2' }]);

    // A backfill repeating the cases (another score: the first stands) and adding two: the COPY meets a key
    // taken, writes nothing, and the statement writes the two new ones.
    const more = [...ids.map((id) => result(id, 0.5)), result('c070', 1), result('c071', 0, false)];
    const backfill = await s.appendCases(ds, s.resultsEvent(more, true));
    const again = await statementsSent(() => apply([backfill]));
    expect(again.result.statuses).toEqual(['applied']);
    expect(again.sent.filter((q) => q.startsWith('ROLLBACK TO SAVEPOINT copy_rows'))).toHaveLength(1);
    expect(again.sent.filter((q) => q.startsWith('INSERT INTO read_case_results'))).toHaveLength(1);
    const after = await cases.forRun(ds, 'run-copy');
    expect(after.slice(0, 70)).toEqual(written);
    expect(after.slice(70).map((c) => [c.case_id, c.score, c.passed])).toEqual([
      ['c070', 1, true],
      ['c071', 0, false],
    ]);
  });

  it('catches up, at run.scored, the cases of a batch still on its way: a completed run shows every case (the relays of two workers race)', async () => {
    const s = new RunScript('run-v3-late');
    const opened = await s.appendRun(ds, s.openedEvent());
    const early = await s.appendCases(ds, s.resultsEvent([result('c1', 1)]));
    const late = await s.appendCases(ds, s.resultsEvent([result('c2', 0, false)]));
    await s.appendRun(ds, s.sealedEvent());
    const scored = await s.appendRun(ds, s.scoredEvent(2, 1, 1));
    const outcome = await apply([opened, early, scored]);
    expect(outcome.resultsRecorded).toEqual(['run-v3-late']);
    expect(await repo.load(ds, 'run-v3-late')).toMatchObject({ status: 'completed', scored: 2, passed: 1 });
    expect((await new CaseResultRepository().forRun(ds, 'run-v3-late')).map((c) => [c.case_id, c.passed])).toEqual([
      ['c1', true],
      ['c2', false],
    ]);
    // Its own delivery later finds it applied.
    expect((await apply([late])).statuses).toEqual(['duplicate']);
    expect(await new CaseResultRepository().forRun(ds, 'run-v3-late')).toHaveLength(2);
  });

  describe('rebuild', () => {
    it('rebuilds runs and eval_results identical to the live projection, without announcing any EvalResult again', async () => {
      // A fresh schema: the rebuild replays the whole log, and only these runs must be in it.
      const own = await createTestSchema('rebuild');
      const ds2 = createDataSource({ url: testServers.postgres.url, schema: own.schema, poolSize: 4 });
      await ds2.initialize();
      try {
        await migrate(ds2);
        const log: StoredEvent[] = [];
        const scripts: RunScript[] = [];
        // Four runs, interleaved in the log as concurrent runs would be.
        const a = new RunScript('rb-a');
        const b = new RunScript('rb-b', { variant: 'prompt-v7', pass_threshold: 0.5, source: 'sandbox' });
        const c = new RunScript('rb-c', { case_count: 2 });
        const d = new RunScript('rb-d', { subject_id: 'other-bot', source: 'inline' });
        scripts.push(a, b, c, d);
        log.push(await a.appendRun(ds2, a.openedEvent()));
        log.push(await b.appendRun(ds2, b.openedEvent()));
        log.push(await a.appendCases(ds2, a.casesEvent([result('c1', 1), result('c2', 0.25, false)])));
        log.push(await c.appendRun(ds2, c.openedEvent()));
        log.push(await b.appendCases(ds2, b.casesEvent([result('c1', 1), result('c2', 1), result('c3', 0.5)])));
        log.push(await a.appendCases(ds2, a.casesEvent([result('c3', 0.75), result('c4', 1)])));
        log.push(await c.appendCases(ds2, c.casesEvent([result('c1', 0.5)])));
        log.push(await a.appendRun(ds2, a.sealedEvent()));
        log.push(await b.appendRun(ds2, b.sealedEvent()));
        log.push(await a.appendRun(ds2, a.scoredEvent(4, 3, 3)));
        log.push(await d.appendRun(ds2, d.openedEvent()));
        log.push(await b.appendCases(ds2, b.resultsEvent([result('c4', 0, false)])));
        log.push(await b.appendRun(ds2, b.scoredEvent(4, 3, 2.5)));
        log.push(await d.appendCases(ds2, d.resultsEvent([result('c1', 0, false), result('c2', 0, false)])));
        log.push(await d.appendRun(ds2, d.sealedEvent()));
        // The seal's missing_output rows, as v3 (apps/scoring-worker run-sealer.ts).
        log.push(await d.appendCases(ds2, d.resultsEvent([result('c3', 0, false, 'missing_output'), result('c4', 0, false, 'missing_output')])));
        log.push(await d.appendRun(ds2, d.scoredEvent(4, 0, 0, ['c3', 'c4'])));
        // c stays open: a rebuild must reproduce in-progress runs too.

        // Live: delivered in a scrambled order, in small batches, with redeliveries.
        const live = new RunProjector({ uuid: () => randomUUID() });
        const delivery = [...shuffled(log, 7), ...shuffled(log, 11).slice(0, 6)];
        for (let i = 0; i < delivery.length; i += 3) {
          const outcome = await ds2.transaction((m) => live.apply(m, delivery.slice(i, i + 3)));
          expect(outcome.deferred).toBe(0);
        }
        const snapshot = async () => ({
          runs: await ds2.query(`SELECT * FROM runs ORDER BY run_id`),
          results: await ds2.query(`SELECT * FROM eval_results ORDER BY run_id`),
          cases: await ds2.query(`SELECT * FROM read_case_results ORDER BY run_id, case_id`),
          inbox: (await ds2.query(`SELECT count(*)::int AS n FROM projection_inbox WHERE projection = 'runs'`))[0].n,
          checkpoint: await repo.checkpoint(ds2, RUNS_PROJECTION),
        });
        const before = await snapshot();
        expect(before.runs).toHaveLength(4);
        expect(before.results.map((r: any) => r.run_id)).toEqual(['rb-a', 'rb-b', 'rb-d']);
        // Every case of every run, from v1 and v3 alike, whatever order the events came in (issue 27).
        expect(before.cases.map((r: any) => `${r.run_id}/${r.case_id}/${r.label}`)).toEqual([
          'rb-a/c1/pass', 'rb-a/c2/fail', 'rb-a/c3/pass', 'rb-a/c4/pass',
          'rb-b/c1/pass', 'rb-b/c2/pass', 'rb-b/c3/pass', 'rb-b/c4/fail',
          'rb-c/c1/pass',
          'rb-d/c1/fail', 'rb-d/c2/fail', 'rb-d/c3/missing_output', 'rb-d/c4/missing_output',
        ]);
        expect(before.inbox).toBe(log.length);
        const announced = (await ds2.query(`SELECT count(*)::int AS n FROM outbox WHERE subject = $1`, [SUBJECTS.RESULT_RECORDED]))[0].n;
        expect(announced).toBe(3);

        const report = await rebuildReadModel(ds2, new RunProjector({ uuid: () => randomUUID() }), { pageSize: 4 });
        expect(report).toMatchObject({ events: log.length, applied: log.length, duplicates: 0, skipped: 0, orphans: 0, runs: 4, evalResults: 3, published: 0 });
        const after = await snapshot();
        expect(after).toEqual(before);
        const announcedAfter = (await ds2.query(`SELECT count(*)::int AS n FROM outbox WHERE subject = $1`, [SUBJECTS.RESULT_RECORDED]))[0].n;
        expect(announcedAfter).toBe(3);
      } finally {
        await ds2.destroy();
        await own.drop();
      }
    });

    it('announces, once, an EvalResult whose run.scored the live consumer had not applied yet', async () => {
      const own = await createTestSchema('rebuild2');
      const ds2 = createDataSource({ url: testServers.postgres.url, schema: own.schema, poolSize: 4 });
      await ds2.initialize();
      try {
        await migrate(ds2);
        const s = new RunScript('rb-late');
        const opened = await s.appendRun(ds2, s.openedEvent());
        const cases = await s.appendCases(ds2, s.casesEvent([result('c1', 1), result('c2', 1), result('c3', 1), result('c4', 0, false)]));
        const scored = await s.appendRun(ds2, s.scoredEvent(4, 3, 3));
        const live = new RunProjector({ uuid: () => randomUUID() });
        await ds2.transaction((m) => live.apply(m, [opened, cases])); // run.scored still on its way
        const report = await rebuildReadModel(ds2, new RunProjector({ uuid: () => randomUUID() }));
        expect(report.published).toBe(1);
        // The live consumer now receives run.scored: already applied by the rebuild, nothing announced twice.
        const outcome = await ds2.transaction((m) => live.apply(m, [scored]));
        expect(outcome.statuses).toEqual(['duplicate']);
        const [{ n }] = await ds2.query(`SELECT count(*)::int AS n FROM outbox WHERE subject = $1`, [SUBJECTS.RESULT_RECORDED]);
        expect(n).toBe(1);
      } finally {
        await ds2.destroy();
        await own.drop();
      }
    });
  });

  describe('SSE replay (R6)', () => {
    const counts = async () => {
      const tables = ['events', 'evidence', 'read_case_results', 'outbox', 'dead_letters', 'runs', 'eval_results', 'read_run_verdicts', 'projection_inbox', 'projection_checkpoints'];
      const out: Record<string, unknown> = {};
      for (const t of tables) out[t] = (await ds.query(`SELECT count(*)::int AS n, md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) AS h FROM ${t} x`))[0];
      return out;
    };

    /** More results of the run, as the worker (or its seal) writes them, projected. */
    async function withResults(s: RunScript, rows: Array<[string, number, boolean, string]>): Promise<void> {
      await apply([await s.appendCases(ds, s.resultsEvent(rows.map(([caseId, score, passed, label]) => result(caseId, score, passed, label))))]);
    }

    it('replays one case frame per projected case by case id, then the summary; twice identical, and writes nothing', async () => {
      const { script, events } = await completedRun('run-sse');
      await apply(events);
      // c1-c3 came in the run's v1 batches; c4 is the seal's missing_output row.
      await withResults(script, [['c4', 0, false, 'missing_output']]);
      const queries = new RunQueries(ds);
      const before = await counts();
      const first = await queries.replay(DEFAULT_PROJECT, 'run-sse');
      const second = await queries.replay(DEFAULT_PROJECT, 'run-sse');
      const after = await counts();
      expect(after).toEqual(before);
      expect(second).toEqual(first);
      expect(first!.map(formatSseFrame).join('')).toBe(second!.map(formatSseFrame).join(''));

      expect(first!.map((f) => f.event)).toEqual(['case', 'case', 'case', 'case', 'summary']);
      expect(first![0]).toEqual({ event: 'case', data: { case_id: 'c1', scorer: 'exact', scorer_version: '1.0.0', score: 1, passed: true, label: 'pass' } });
      expect(first![3]).toEqual({ event: 'case', data: { case_id: 'c4', scorer: 'exact', scorer_version: '1.0.0', score: 0, passed: false, label: 'missing_output' } });
      expect(first!.slice(0, 4).map((f) => (f.data as { case_id: string }).case_id)).toEqual(['c1', 'c2', 'c3', 'c4']);
      const ci = wilson(2, 4);
      expect(first![4]).toEqual({
        event: 'summary',
        data: {
          run_id: 'run-sse',
          status: 'completed',
          suite: 'support-triage',
          suite_version: 3,
          case_count: 4,
          missing_outputs: 1,
          frames: 4,
          n: 4,
          passed: 2,
          score: 0.375,
          pass_rate: 0.5,
          pass_rate_ci: { lower: ci.lower, upper: ci.upper, level: 0.95 },
          run_passed: false,
        },
      });
      expect(formatSseFrame(first![0])).toBe(
        'event: case\ndata: {"case_id":"c1","scorer":"exact","scorer_version":"1.0.0","score":1,"passed":true,"label":"pass"}\n\n',
      );
    });

    it('replays a run still in progress: the cases so far, then a summary with its status that counts them', async () => {
      const s = new RunScript('run-sse-open');
      await apply([await s.appendRun(ds, s.openedEvent())]);
      await withResults(s, [['c2', 1, true, 'match']]);
      const frames = await new RunQueries(ds).replay(DEFAULT_PROJECT, 'run-sse-open');
      expect(frames!.map((f) => f.event)).toEqual(['case', 'summary']);
      expect(frames![1].data).toMatchObject({ status: 'open', frames: 1, n: 1, passed: 1, pass_rate: 1, run_passed: null });
    });

    it('answers null (404) for an unknown or malformed run id, and the run view carries the summary and, on request, the cases', async () => {
      const queries = new RunQueries(ds);
      expect(await queries.replay(DEFAULT_PROJECT, 'no-such-run')).toBeNull();
      expect(await queries.replay(DEFAULT_PROJECT, '../etc')).toBeNull();
      expect(await queries.run(DEFAULT_PROJECT, 'no-such-run')).toBeNull();
      const view = await queries.run(DEFAULT_PROJECT, 'run-sse', { includeCases: true });
      expect(view!.run.summary).toMatchObject({ n: 4, passed: 2, pass_rate: 0.5, pass_rate_ci: { level: 0.95 } });
      expect(view!.eval_result?.run_id).toBe('run-sse');
      expect(view!.cases!.map((c) => c.case_id)).toEqual(['c1', 'c2', 'c3', 'c4']);
      expect(Object.keys(view!.cases![0]).sort()).toEqual(['case_id', 'label', 'passed', 'score', 'scored_at', 'scorer', 'scorer_version']);
      expect((await queries.run(DEFAULT_PROJECT, 'run-sse'))!.cases).toBeUndefined();
    });
  });
});
