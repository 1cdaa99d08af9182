import { randomUUID } from 'node:crypto';
import { caseOutcomeOf, encodeCaseOutcomes, RUN_EVENTS, runStreamId, type CaseEvidence } from '@evals/domain';
import type { DataSource } from 'typeorm';
import { CaseOutcomeLog } from './case-outcome-log';
import { CaseResultRepository } from './case-results.repository';
import { EventStore } from './event-store';
import { EVIDENCE_COLUMNS, insertEvidence } from './evidence.repository';
import { JudgeEvidenceRepository, type JudgedEvidenceRow } from './judge-evidence.repository';
import { migrate } from './data-source';
import { migratedDataSource, pgliteDataSource, postgresDataSource, type TestDataSource } from './test-data-sources.testing';

/*
 * Issue 27, the upgrade to cases.scored v3 (CaseOutcomes1796500000000): a database of the previous release -
 * runs whose results are only in `evidence`, announced by v2 (counts) or v1 (results) events - migrates in
 * place with no row lost: the read model's read_case_results holds every evidence row, the regression app's
 * fold of the log finds every case, and no run's counts change. And the log fold itself: the results the
 * worker wrote, each case once, in the partial index's order.
 */

const AT = '2026-11-29T08:00:00.000Z';
const meta = () => {
  const id = randomUUID();
  return { message_id: id, correlation_id: id, causation_id: id, occurred_at: AT };
};

const row = (runId: string, i: number, over: Partial<JudgedEvidenceRow> = {}): CaseEvidence => ({
  run_id: runId,
  case_id: `c${String(i).padStart(3, '0')}`,
  scorer: 'exact',
  scorer_version: '1.0.0',
  score: i % 3 === 0 ? 0 : i % 5 === 0 ? 0.4 : 1,
  passed: i % 3 !== 0 && i % 5 !== 0,
  label: i % 3 === 0 ? 'mismatch' : 'match',
  detail_hash: `hmac:${i}`,
  output_chars: 10 + i,
  scored_at: '2026-11-29T07:59:59.123Z',
  ...over,
});

/** CaseOutcomes1796500000000 and every migration after it, in order. */
const LATER = ['CaseOutcomes1796500000000', 'Projects1796600000000'];

function upgradeContract(label: string, open: () => Promise<TestDataSource>): void {
  describe(`integration: the upgrade to cases.scored v3 keeps every result (${label})`, () => {
    const db = migratedDataSource(open);
    const store = new EventStore();

    async function undoToPrevious(ds: DataSource): Promise<void> {
      const last = async () => ((await ds.query(`SELECT name FROM schema_migrations ORDER BY id DESC LIMIT 1`)) as Array<{ name: string }>)[0].name;
      // This migration and the ones after it (Projects1796600000000, whose down() drops its columns again).
      while (LATER.includes(await last())) await ds.undoLastMigration();
    }

    it('writes read_case_results and backfill events from the evidence of runs scored before v3, counts untouched, twice the same', async () => {
      const ds = db();
      await undoToPrevious(ds);
      expect(await ds.query(`SELECT to_regclass('read_case_results') AS t`)).toEqual([{ t: null }]);
      // A run of the previous release (v2 counts; evidence with judged rows and a missing output), and an older one (v1 results).
      const v2Rows = [...Array.from({ length: 120 }, (_, i) => row('old-v2', i)), row('old-v2', 120, { label: 'missing_output', score: 0, passed: false, detail_hash: null, output_chars: null })];
      const judged: JudgedEvidenceRow[] = [1, 2].map((i) => ({
        ...row('old-v2', 200 + i, { scorer: 'llm_judge', label: 'judge_pass', score: 0.9 }),
        judge: { judge_model: 'gpt-4o-2024-08-06', prompt_version: 'judge-v1', judge_cost_usd: 0.001, judge_input_tokens: 10, judge_output_tokens: 2, judge_cached: null },
      }));
      await ds.transaction(async (tx) => {
        await insertEvidence(tx, v2Rows, EVIDENCE_COLUMNS);
        await new JudgeEvidenceRepository().insertBatch(tx, judged);
        const all = [...v2Rows, ...judged];
        await store.append(tx, `${runStreamId('old-v2')}.cases.x`, 0, [
          { type: RUN_EVENTS.casesScored, version: 2, data: { run_id: 'old-v2', n: all.length, passed: all.filter((r) => r.passed).length, score_sum: all.reduce((s, r) => s + r.score, 0) }, metadata: meta() },
        ]);
        const v1Rows = [row('old-v1', 1), row('old-v1', 3)];
        await insertEvidence(tx, v1Rows, EVIDENCE_COLUMNS);
        await store.append(tx, `${runStreamId('old-v1')}.cases.y`, 0, [
          { type: RUN_EVENTS.casesScored, version: 1, data: { run_id: 'old-v1', results: v1Rows.map(({ run_id: _r, detail_hash: _h, output_chars: _o, scored_at: _s, ...r }) => r) }, metadata: meta() },
        ]);
      });
      const evidenceOf = async (runId: string) =>
        (
          await ds.query(
            `SELECT case_id, scorer, scorer_version, score, passed, label, judge_model, prompt_version,
                    to_char(scored_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS scored_at
             FROM evidence WHERE run_id = $1 ORDER BY case_id`,
            [runId],
          )
        ).map((r: { score: unknown }) => ({ ...r, score: Number(r.score) }));
      const countsBefore = await ds.query(`SELECT type, version, data FROM events ORDER BY position`);

      expect(await migrate(ds)).toEqual(LATER);

      for (const runId of ['old-v2', 'old-v1']) {
        const evidence = await evidenceOf(runId);
        // The read model's table: every row, as the API shows it (no hash, no length).
        expect(await new CaseResultRepository().forRun(ds, runId)).toEqual(evidence.map(({ judge_model: _j, prompt_version: _p, ...r }: Record<string, unknown>) => r));
        // The regression app's fold of the log: every case once, judge pins included.
        const { outcomes, invalid } = await new CaseOutcomeLog().forRun(ds, runId);
        expect(invalid).toBe(0);
        // (A v1 event carried no time per case: its results come first, at the event's time.)
        const untimed = (list: Array<Record<string, unknown>>) => list.map((o) => ({ ...o, scored_at: runId === 'old-v1' ? null : o.scored_at }));
        expect(untimed([...outcomes].sort((a, b) => (a.case_id < b.case_id ? -1 : 1)))).toEqual(untimed(evidence));
      }
      // The events of before are there unchanged; the backfill's are v3, marked, on one stream per run.
      const after = await ds.query(`SELECT type, version, data, stream_id FROM events ORDER BY position`);
      expect(after.slice(0, countsBefore.length).map(({ stream_id: _s, ...e }: Record<string, unknown>) => e)).toEqual(countsBefore);
      const added = after.slice(countsBefore.length);
      expect(added.map((e: { stream_id: string }) => e.stream_id)).toEqual(['run-old-v1.cases.backfill', 'run-old-v2.cases.backfill']);
      expect(added.every((e: { version: number; data: { backfill?: boolean } }) => e.version === 3 && e.data.backfill === true)).toBe(true);
      // No outbox row: no live consumer needs them.
      expect((await ds.query(`SELECT count(*)::int AS n FROM outbox WHERE payload->>'stream_id' LIKE '%.backfill'`))[0].n).toBe(0);

      // Again (down, up): the same rows, no second backfill.
      await undoToPrevious(ds);
      await migrate(ds);
      expect((await ds.query(`SELECT count(*)::int AS n FROM events`))[0].n).toBe(after.length);
      expect(await new CaseResultRepository().forRun(ds, 'old-v2')).toHaveLength(v2Rows.length + judged.length);
    }, 120_000);

    it('folds a run from its v3 events, each case once, the first result first (a redelivered batch wrote nothing)', async () => {
      const ds = db();
      const rows = Array.from({ length: 40 }, (_, i) => row('live', i));
      const events = encodeCaseOutcomes('live', rows.map(caseOutcomeOf), { maxCases: 16 });
      await store.append(ds, `${runStreamId('live')}.cases.a`, 0, events.map((data) => ({ type: RUN_EVENTS.casesScored, version: 3, data, metadata: meta() })));
      // A later backfill-like repeat of a case with another label must not win over the first.
      const [repeat] = encodeCaseOutcomes('live', [caseOutcomeOf(row('live', 0, { label: 'other' }))], { backfill: true });
      await store.append(ds, `${runStreamId('live')}.cases.b`, 0, [{ type: RUN_EVENTS.casesScored, version: 3, data: repeat, metadata: meta() }]);
      // Another run's events are not this run's.
      await store.append(ds, `${runStreamId('other')}.cases.a`, 0, encodeCaseOutcomes('other', [caseOutcomeOf(row('other', 1))]).map((data) => ({ type: RUN_EVENTS.casesScored, version: 3, data, metadata: meta() })));
      const { outcomes } = await new CaseOutcomeLog().forRun(ds, 'live');
      expect(outcomes).toEqual(rows.map(caseOutcomeOf));
    });
  });
}

upgradeContract('PostgreSQL server', () => postgresDataSource('caseup'));

upgradeContract('PGlite, the embedded default', () => pgliteDataSource());
