import { randomUUID } from 'node:crypto';
import { DEFAULT_PROJECT } from '@evals/contracts';
import { baselineEligibility, buildScorecard, type RunComparedV1, type RunVerdict } from '@evals/domain';
import { createDataSource, migrate, RegressionRepository, RunFoldQueries, RunQueries, RunReadModelRepository, type StoredEvent } from '@evals/persistence';
import type { DataSource } from 'typeorm';
import { createTestSchema, type TestSchema } from '../../../test/support/isolation';
import { testServers } from '../../../test/support/servers';
import { rebuildReadModel } from './rebuild-read-model';
import { asStored, result, RunScript, shuffled } from './run-events.testing';
import { RUNS_PROJECTION, RunProjector, type ApplyOptions } from './run.projector';
import { ScorecardsController } from './scorecards.controller';

/**
 * The read model's own projection of the regression decisions (`run.compared` -> read_run_verdicts), which
 * the run views (`regression`) and the scorecards read instead of the regression app's `run_verdicts`
 * (docs/read-model.md). Real PostgreSQL, one schema per test.
 */
describe('integration: read-model verdicts from run.compared (G1-G5, SC1, R7)', () => {
  const projector = new RunProjector({ uuid: () => randomUUID() });
  const repo = new RunReadModelRepository();

  async function withSchema(label: string, work: (ds: DataSource) => Promise<void>): Promise<void> {
    const own: TestSchema = await createTestSchema(label);
    const ds = createDataSource({ url: testServers.postgres.url, schema: own.schema, poolSize: 4 });
    await ds.initialize();
    try {
      await migrate(ds);
      await work(ds);
    } finally {
      await ds.destroy();
      await own.drop();
    }
  }

  const applyIn = (ds: DataSource, events: ReadonlyArray<object | null>, options?: ApplyOptions) => ds.transaction((m) => projector.apply(m, events, options));

  /** What the controller answers, JSON and CSV, with a stand-in for the Express response. */
  async function scorecards(ds: DataSource, query: { suite_key?: string; subject_id?: string; window?: string } = {}) {
    const controller = new ScorecardsController(new RunQueries(ds));
    const headers: Record<string, string> = {};
    const res = { setHeader: (k: string, v: string) => void (headers[k] = v) } as never;
    const json = await controller.list(DEFAULT_PROJECT, res, query.suite_key, undefined, query.subject_id, query.window, 'json');
    const csv = await controller.list(DEFAULT_PROJECT, res, query.suite_key, undefined, query.subject_id, query.window, 'csv');
    return { json: JSON.parse(JSON.stringify(json)), csv: csv as string, contentType: headers['content-type'] };
  }

  const comparison = (verdict: RunVerdict, baseline: string, run: [number, number], base: [number, number]) => ({
    verdict,
    run_id: 'filled-below',
    baseline_run_id: baseline,
    score_drop: (base[0] - run[0]) / run[1],
    pass_rate_diff: { diff: (run[0] - base[0]) / run[1], lower: -0.9, upper: verdict === 'regressed' ? -0.05 : 0.4, level: 0.95, method: 'newcombe-10' },
    run: { passed: run[0], n: run[1] },
    baseline: { passed: base[0], n: base[1] },
    chosen_by: 'automatic',
    baseline_eligible: true,
    compared_cases: { run: { n: run[1], of: 4 }, baseline: { n: base[1], of: 4 }, left_out: { unscored_in_run: 4 - run[1], unscored_in_baseline: 0, scored_in_one_run_only: 0 }, paired: { a: 1, b: 1, c: 0, d: 2 } },
    changes: { suite_version: null, scorers: [], judge: null },
  });

  /**
   * Two subjects of one suite, runs one after the other, appended to the log the way the apps do:
   * bot-a: a1 no_baseline, a2 no_regression, a3 incomplete (a missing output), a4 regressed (with a finding);
   * bot-b: b1 no_baseline, b2 expired (sealed by expiry), b3 still open, b4 scored but not compared yet.
   */
  async function history(ds: DataSource) {
    const log: StoredEvent[] = [];
    const decisions = new Map<string, RunComparedV1>();
    const findingId = randomUUID();
    const run = async (
      id: string,
      subject: string,
      start: number,
      counts: { n: number; passed: number; sum: number; missing?: string[] } | null,
      options: { expired?: boolean; decision?: Omit<RunComparedV1, 'run_id'>; sealed?: boolean } = {},
    ) => {
      const s = new RunScript(id, { subject_id: subject }, start);
      log.push(await s.appendRun(ds, s.openedEvent()));
      log.push(await s.appendCases(ds, s.casesEvent([result('c1', 1), result('c2', 0, false)])));
      if (options.sealed === false) return;
      log.push(await s.appendRun(ds, s.sealedEvent(options.expired ? 'expired' : undefined)));
      if (counts === null) return;
      log.push(await s.appendCases(ds, s.countsEvent(2, 1, 1)));
      log.push(await s.appendRun(ds, s.scoredEvent(counts.n, counts.passed, counts.sum, counts.missing ?? [], options.expired === true)));
      if (options.decision) {
        log.push(await s.appendRun(ds, s.comparedEvent(options.decision)));
        decisions.set(id, { run_id: id, ...options.decision });
      }
    };
    const fill = (c: ReturnType<typeof comparison>, runId: string) => ({ ...c, run_id: runId });
    await run('a1', 'bot-a', 0, { n: 4, passed: 4, sum: 4 }, { decision: { verdict: 'no_baseline', completeness: 'complete', baseline_run_id: null, chosen_by: null, comparison: null, finding_id: null } });
    await run('b1', 'bot-b', 5, { n: 4, passed: 2, sum: 2.5 }, { decision: { verdict: 'no_baseline', completeness: 'complete', baseline_run_id: null, chosen_by: null, comparison: null, finding_id: null } });
    await run('a2', 'bot-a', 10, { n: 4, passed: 3, sum: 3.25 }, {
      decision: { verdict: 'no_regression', completeness: 'complete', baseline_run_id: 'a1', chosen_by: 'automatic', comparison: fill(comparison('no_regression', 'a1', [3, 4], [4, 4]), 'a2'), finding_id: null },
    });
    await run('b2', 'bot-b', 15, { n: 4, passed: 1, sum: 1, missing: ['c3', 'c4'] }, {
      expired: true,
      decision: { verdict: 'no_regression', completeness: 'expired', baseline_run_id: 'b1', chosen_by: 'automatic', comparison: fill(comparison('no_regression', 'b1', [1, 2], [1, 2]), 'b2'), finding_id: null },
    });
    await run('a3', 'bot-a', 20, { n: 4, passed: 2, sum: 2, missing: ['c4'] }, {
      decision: { verdict: 'inconclusive_noise', completeness: 'incomplete', baseline_run_id: 'a2', chosen_by: 'automatic', comparison: fill(comparison('inconclusive_noise', 'a2', [2, 3], [3, 3]), 'a3'), finding_id: null },
    });
    await run('b3', 'bot-b', 25, null, { sealed: false });
    await run('a4', 'bot-a', 30, { n: 4, passed: 1, sum: 1.5 }, {
      decision: { verdict: 'regressed', completeness: 'complete', baseline_run_id: 'a2', chosen_by: 'automatic', comparison: fill(comparison('regressed', 'a2', [1, 4], [3, 4]), 'a4'), finding_id: findingId },
    });
    await run('b4', 'bot-b', 35, { n: 4, passed: 4, sum: 4 });
    return { log, decisions, findingId, runIds: ['a1', 'a2', 'a3', 'a4', 'b1', 'b2', 'b3', 'b4'] };
  }

  async function snapshot(ds: DataSource, runIds: string[]) {
    const queries = new RunQueries(ds);
    const views: Record<string, unknown> = {};
    for (const id of runIds) views[id] = JSON.parse(JSON.stringify(await queries.run(DEFAULT_PROJECT, id)));
    return {
      views,
      scorecards: await scorecards(ds),
      bySubject: await scorecards(ds, { suite_key: 'support-triage', subject_id: 'bot-a', window: '3' }),
      verdictRows: await ds.query(`SELECT * FROM read_run_verdicts ORDER BY run_id`),
      runs: await ds.query(`SELECT * FROM runs ORDER BY run_id`),
      results: await ds.query(`SELECT * FROM eval_results ORDER BY run_id`),
      checkpoint: await repo.checkpoint(ds, RUNS_PROJECTION),
    };
  }

  it('projects run.compared live (shuffled, small batches, redeliveries), and a rebuild gives the same run views and scorecards exactly', async () => {
    await withSchema('verdicts', async (ds) => {
      const { log, decisions, findingId, runIds } = await history(ds);

      // Live: scrambled delivery, so run.compared often comes before its run.opened or run.scored.
      const delivery = [...shuffled(log, 3), ...shuffled(log, 5).slice(0, 9)];
      const firstAt = (id: string, type: string) => delivery.findIndex((e) => e.type === type && (e.data as { run_id: string }).run_id === id);
      const overtaken = [...decisions.keys()].filter((id) => firstAt(id, 'run.compared') < firstAt(id, 'run.scored'));
      expect(overtaken.length).toBeGreaterThanOrEqual(2);
      for (let i = 0; i < delivery.length; i += 3) {
        const outcome = await applyIn(ds, delivery.slice(i, i + 3));
        expect(outcome.deferred).toBe(0);
        expect(outcome.deadLettered).toBe(0);
      }
      const live = await snapshot(ds, runIds);
      expect(live.verdictRows.map((r: { run_id: string }) => r.run_id)).toEqual(['a1', 'a2', 'a3', 'a4', 'b1', 'b2']);

      // The views: the exact RegressionView shape, eligibility from the run model's rule (G4).
      const view = (id: string) => live.views[id] as any;
      expect(view('a1').regression).toEqual({ verdict: 'no_baseline', baseline_run_id: null, chosen_by: null, comparison: null, completeness: 'complete', baseline_eligible: true });
      expect(view('a2').regression).toEqual({
        verdict: 'no_regression',
        baseline_run_id: 'a1',
        chosen_by: 'automatic',
        comparison: decisions.get('a2')!.comparison,
        completeness: 'complete',
        baseline_eligible: true,
      });
      expect(view('a3').regression).toMatchObject({ verdict: 'inconclusive_noise', completeness: 'incomplete', baseline_eligible: false, baseline_ineligible_reason: 'incomplete' });
      expect(view('a4').regression).toEqual({
        verdict: 'regressed',
        baseline_run_id: 'a2',
        chosen_by: 'automatic',
        comparison: decisions.get('a4')!.comparison,
        completeness: 'complete',
        baseline_eligible: false,
        baseline_ineligible_reason: 'regressed',
      });
      expect(view('b2').regression).toMatchObject({ completeness: 'expired', baseline_eligible: false, baseline_ineligible_reason: 'expired' });
      expect(view('b3').run.status).toBe('open');
      expect(view('b3').regression).toBeNull();
      expect(view('b4').run.status).toBe('completed');
      expect(view('b4').regression).toBeNull(); // scored, not compared (yet)
      expect(live.verdictRows.find((r: { run_id: string }) => r.run_id === 'a4').finding_id).toBe(findingId);

      // The scorecards: one per subject, incomplete and expired runs shown but not pooled.
      expect(live.scorecards.contentType).toBe('text/csv; charset=utf-8');
      const cards = live.scorecards.json.scorecards;
      expect(cards.map((c: any) => [c.subject_id, c.runs, c.runs_incomplete, c.latest_run_id, c.latest_verdict, c.latest_completeness])).toEqual([
        ['bot-a', 4, 1, 'a4', 'regressed', 'complete'],
        ['bot-b', 2, 1, 'b2', 'no_regression', 'expired'],
      ]);
      expect(cards[0].overall_pass_rate).toMatchObject({ passed: 8, n: 12 });
      expect(cards[0].mean_score).toBeCloseTo((1 + 0.8125 + 0.375) / 3, 12);
      expect(live.bySubject.json.scorecards).toHaveLength(1);
      expect(live.bySubject.json.scorecards[0].trend).toMatchObject({ window: 3, runs: 3, first_run_id: 'a1', last_run_id: 'a4' });
      expect(live.scorecards.csv.split('\r\n')[0]).toMatch(/^suite_key,subject_kind,subject_id,/);

      // Rebuild: the whole log from position 0 into emptied tables, through the same projector. What the
      // read model holds is thrown away first (a row altered, one lost): the log alone rebuilds it.
      await ds.query(`UPDATE read_run_verdicts SET verdict = 'no_baseline', comparison = NULL WHERE run_id = 'a4'`);
      await ds.query(`DELETE FROM read_run_verdicts WHERE run_id = 'b1'`);
      expect((await snapshot(ds, runIds)).scorecards).not.toEqual(live.scorecards);
      const report = await rebuildReadModel(ds, new RunProjector({ uuid: () => randomUUID() }), { pageSize: 5 });
      expect(report).toMatchObject({ events: log.length, applied: log.length, duplicates: 0, skipped: 0, orphans: 0, runs: 8, evalResults: 7, verdicts: 6, published: 0 });
      const rebuilt = await snapshot(ds, runIds);
      expect(JSON.stringify(rebuilt.views)).toBe(JSON.stringify(live.views));
      expect(JSON.stringify(rebuilt.scorecards)).toBe(JSON.stringify(live.scorecards));
      expect(JSON.stringify(rebuilt.bySubject)).toBe(JSON.stringify(live.bySubject));
      expect(rebuilt).toEqual(live);
    });
  });

  it('answers exactly what the regression app\'s run_verdicts answered: the same RegressionView and the same scorecards', async () => {
    await withSchema('verdicts_same', async (ds) => {
      const { log, decisions, runIds } = await history(ds);
      await applyIn(ds, log);
      // The rows the regression app writes beside each run.compared (apps/regression, RegressionService).
      const regression = new RegressionRepository();
      const queries = new RunQueries(ds);
      for (const [id, d] of decisions) {
        const doc = (await repo.load(ds, id))!;
        await regression.record(ds, {
          project: DEFAULT_PROJECT,
          run_id: id,
          suite_key: doc.suite_key,
          suite_version: doc.suite_version,
          subject_kind: doc.subject_kind,
          subject_id: doc.subject_id,
          variant: doc.variant,
          completed_at: doc.completed_at!,
          n: doc.scored,
          passed: doc.passed,
          score: doc.scored === 0 ? 0 : doc.score_sum / doc.scored,
          pass_threshold: doc.pass_threshold,
          scorer_versions: doc.scorer_versions,
          verdict: d.verdict,
          completeness: d.completeness!,
          baseline_run_id: d.baseline_run_id ?? null,
          baseline_choice: d.chosen_by ?? null,
          comparison: d.comparison ?? null,
        });
      }
      for (const id of runIds) {
        const old = await regression.find(ds, DEFAULT_PROJECT, id);
        const oldView = old && {
          verdict: old.verdict,
          baseline_run_id: old.baseline_run_id,
          chosen_by: old.baseline_choice,
          comparison: old.comparison,
          completeness: old.completeness,
          ...(() => {
            const e = baselineEligibility({ completeness: old.completeness, verdict: old.verdict });
            return e.eligible ? { baseline_eligible: true } : { baseline_eligible: false, baseline_ineligible_reason: e.reason };
          })(),
        };
        expect(JSON.stringify((await queries.run(DEFAULT_PROJECT, id))!.regression)).toBe(JSON.stringify(oldView));
      }
      const oldCards = [];
      for (const s of await regression.subjects(ds, DEFAULT_PROJECT, {})) {
        oldCards.push(buildScorecard(await regression.history(ds, DEFAULT_PROJECT, s.suite_key, s.subject_kind, s.subject_id, 10_000), 10));
      }
      expect(JSON.stringify((await scorecards(ds)).json)).toBe(JSON.stringify({ scorecards: oldCards }));
    });
  });

  it('the ingestion folds exactly the view the read model serves from the same log (issue 27: RunFoldQueries)', async () => {
    await withSchema('verdicts_fold', async (ds) => {
      const { log, runIds } = await history(ds);
      // Delivered scrambled, as live: the projection reads ahead from the log; the fold reads the stream in order.
      for (let i = 0; i < log.length; i += 4) await applyIn(ds, shuffled(log, 7).slice(i, i + 4));
      await applyIn(ds, log);
      const read = new RunQueries(ds);
      const folds = new RunFoldQueries(ds);
      for (const id of runIds) {
        const served = JSON.parse(JSON.stringify(await read.run(DEFAULT_PROJECT, id, { includeCases: true })));
        const folded = JSON.parse(JSON.stringify(await folds.view(id, { includeCases: true })));
        if (served.run.status !== 'completed') {
          // A run still being scored: its live counts come from the cases.scored streams the fold does not read;
          // the ingestion answers only completed runs (RunWaiter), whose counts run.scored replaced.
          expect({ ...folded.run, scored: served.run.scored, passed: served.run.passed, score_sum: served.run.score_sum, summary: served.run.summary }).toEqual(served.run);
          continue;
        }
        expect(folded).toEqual(served);
      }
      // Settled folds are kept: a second view reads only the evidence.
      expect(await folds.view('a4')).toEqual(await read.run(DEFAULT_PROJECT, 'a4'));
    });
  });

  it('reads run.scored from the log for a run.compared that overtook it; defers, then dead-letters, one whose run has no run.scored anywhere', async () => {
    await withSchema('verdicts_order', async (ds) => {
      const s = new RunScript('early');
      const opened = await s.appendRun(ds, s.openedEvent());
      const sealed = await s.appendRun(ds, s.sealedEvent());
      const scored = await s.appendRun(ds, s.scoredEvent(4, 4, 4));
      const compared = await s.appendRun(ds, s.comparedEvent({ verdict: 'no_baseline', completeness: 'complete', baseline_run_id: null, chosen_by: null, comparison: null, finding_id: null }));
      expect((await applyIn(ds, [opened])).statuses).toEqual(['applied']);
      // run.scored's batch failed and waits for redelivery; run.compared arrives meanwhile.
      const first = await applyIn(ds, [compared]);
      expect(first.statuses).toEqual(['applied']);
      expect(first.verdictsRecorded).toEqual(['early']);
      expect(first.resultsRecorded).toEqual(['early']);
      expect(first.checkpoint).toBe(compared.position);
      expect((await applyIn(ds, [sealed, scored, compared])).statuses).toEqual(['duplicate', 'duplicate', 'duplicate']);
      const row = await repo.loadVerdict(ds, 'early');
      expect(row).toMatchObject({ run_id: 'early', n: 4, passed: 4, score: 1, verdict: 'no_baseline', completed_at: scored.metadata.occurred_at });

      // Before run.opened too: both read from the log, in order.
      const t = new RunScript('earlier');
      const tOpened = await t.appendRun(ds, t.openedEvent());
      await t.appendRun(ds, t.sealedEvent());
      const tScored = await t.appendRun(ds, t.scoredEvent(2, 1, 1));
      const tCompared = await t.appendRun(ds, t.comparedEvent({ verdict: 'no_baseline', completeness: 'complete' }));
      expect((await applyIn(ds, [tCompared])).statuses).toEqual(['applied']);
      expect((await applyIn(ds, [tScored, tOpened])).statuses).toEqual(['duplicate', 'duplicate']);
      expect(await repo.loadVerdict(ds, 'earlier')).toMatchObject({ n: 2, passed: 1, score: 0.5, completeness: 'complete', comparison: null });

      // Not in the log at all: deferred (not claimed), applied once its run is scored, RUN_NOT_SCORED at the end.
      const u = new RunScript('unscored');
      await applyIn(ds, [await u.appendRun(ds, u.openedEvent())]);
      const stray = asStored(u.comparedEvent({ verdict: 'no_baseline', completeness: 'complete' }), 9_000_001, 'run-unscored', 9);
      expect((await applyIn(ds, [stray])).statuses).toEqual(['deferred']);
      expect(await repo.loadVerdict(ds, 'unscored')).toBeNull();
      const [{ claimed }] = await ds.query(`SELECT count(*)::int AS claimed FROM projection_inbox WHERE message_id = $1`, [stray.metadata.message_id]);
      expect(claimed).toBe(0);
      const final = await applyIn(ds, [stray], { deliveries: [{ subject: 'evals.event.run.compared', stream_seq: 12, final: true }] });
      expect(final.statuses).toEqual(['dead_lettered']);
      const [letter] = await ds.query(`SELECT subject, code, reason, stream_seq FROM dead_letters WHERE message_id = $1`, [stray.metadata.message_id]);
      expect(letter).toEqual({ subject: 'evals.event.run.compared', code: 'RUN_NOT_SCORED', reason: 'run.compared: no run.scored for data.run_id in the event log', stream_seq: '12' });

      const v = new RunScript('unscored-2');
      await applyIn(ds, [await v.appendRun(ds, v.openedEvent())]);
      const later = asStored(v.comparedEvent({ verdict: 'no_regression', completeness: 'complete' }), 9_000_003, 'run-unscored-2', 9);
      expect((await applyIn(ds, [later])).statuses).toEqual(['deferred']);
      await applyIn(ds, [await v.appendRun(ds, v.sealedEvent()), await v.appendRun(ds, v.scoredEvent(4, 3, 3))]);
      expect((await applyIn(ds, [later])).statuses).toEqual(['applied']);
      expect(await repo.loadVerdict(ds, 'unscored-2')).toMatchObject({ verdict: 'no_regression', n: 4, passed: 3 });
    });
  });

  it('a redelivered run.compared changes nothing; an unknown verdict is dead-lettered with a reason that names the field only', async () => {
    await withSchema('verdicts_edge', async (ds) => {
      const s = new RunScript('edge');
      const events = [await s.appendRun(ds, s.openedEvent()), await s.appendRun(ds, s.sealedEvent()), await s.appendRun(ds, s.scoredEvent(4, 2, 2))];
      const compared = await s.appendRun(ds, s.comparedEvent({ verdict: 'no_baseline', completeness: 'complete' }));
      await applyIn(ds, [...events, compared]);
      const before = await ds.query(`SELECT * FROM read_run_verdicts`);
      const again = await applyIn(ds, [compared, { ...compared }]);
      expect(again.statuses).toEqual(['duplicate', 'duplicate']);
      expect(again.verdictsRecorded).toEqual([]);
      // A re-published copy with another message id (never written by the apps): the first decision stands.
      const copy = { ...compared, metadata: { ...compared.metadata, message_id: randomUUID() }, data: { ...(compared.data as object), verdict: 'regressed' } };
      const other = await applyIn(ds, [copy]);
      expect(other.statuses).toEqual(['applied']);
      expect(other.verdictsRecorded).toEqual([]);
      expect(await ds.query(`SELECT * FROM read_run_verdicts`)).toEqual(before);

      const secret = 'sk-live-SECRET-VALUE-1234';
      const bad = { ...asStored(s.comparedEvent({ verdict: secret as RunVerdict }), 9_000_010, 'run-edge', 9) };
      const outcome = await applyIn(ds, [bad], { deliveries: [{ subject: 'evals.event.run.compared', stream_seq: 3 }] });
      expect(outcome.statuses).toEqual(['dead_lettered']);
      const [letter] = await ds.query(`SELECT code, reason FROM dead_letters WHERE message_id = $1`, [bad.metadata.message_id]);
      expect(letter).toEqual({ code: 'INVALID_EVENT', reason: 'data.verdict: isRunVerdict' });
      expect(JSON.stringify(await ds.query(`SELECT * FROM dead_letters`))).not.toContain('SECRET');
      expect(await ds.query(`SELECT * FROM read_run_verdicts`)).toEqual(before);
    });
  });
});
