import { EvidenceRepository, type EvidenceRow } from './evidence.repository';
import { pgliteDataSource, postgresDataSource, migratedDataSource, type TestDataSource } from './test-data-sources.testing';
import { pgCode } from './sql';

/*
 * The evidence insert (R3, exactly-once evidence): a batch in a transaction by COPY behind a savepoint, and
 * by one statement (rows as one json parameter) when a case is already there or outside a transaction
 * (issue 15). On the PostgreSQL server and on PGlite, the embedded default, both ways: every value
 * round-trips, a redelivered batch writes nothing and returns nothing, a case repeated inside a batch is
 * written once, a label is clamped to its column by characters, a NaN score is refused.
 * PGlite needs --experimental-vm-modules (npm run test:int).
 */

const row = (runId: string, i: number, over: Partial<EvidenceRow> = {}): EvidenceRow => ({
  run_id: runId,
  case_id: `c${i}`,
  scorer: 'exact',
  scorer_version: '1.0.0',
  score: i % 4 === 3 ? 0 : i % 4 === 2 ? 0.25 : 1,
  passed: i % 4 < 2,
  label: i % 4 === 3 ? 'mismatch' : 'match',
  detail_hash: i % 5 === 0 ? null : i.toString(16).padStart(64, '0'),
  output_chars: i % 5 === 0 ? null : 100 + i,
  scored_at: '2026-12-01T10:00:00.123Z',
  ...over,
});

/** What one write sent: the statements (COPY's savepoint, or the json statement) and the rows it returned. */
interface Written {
  readonly rows: EvidenceRow[];
  readonly statements: string[];
}

function evidenceInsertContract(label: string, open: () => Promise<TestDataSource>): void {
  describe.each(['the data source', 'a transaction'] as const)(`integration: the evidence insert (${label}), through %s`, (through) => {
    const db = migratedDataSource(open);
    const repo = new EvidenceRepository();
    // Run ids of their own per `through`, so that neither block's rows could answer for the other's.
    const run = (name: string) => `${name}-${through === 'a transaction' ? 'tx' : 'ds'}`;

    /** Inserts the batch as the scoring worker does (in its transaction) or on the data source, recording the statements. */
    async function write(rows: readonly EvidenceRow[]): Promise<Written> {
      const statements: string[] = [];
      const recorded = <T extends object>(sql: T): T =>
        new Proxy(sql, {
          get: (target, key) =>
            key === 'query'
              ? (text: string, parameters?: unknown[]) => {
                  statements.push(text.replace(/\s+/g, ' ').trim());
                  return (target as unknown as { query(t: string, p?: unknown[]): Promise<unknown> }).query(text, parameters);
                }
              : Reflect.get(target, key),
        });
      const written = through === 'a transaction' ? await db().transaction((tx) => repo.insertBatch(recorded(tx), rows)) : await repo.insertBatch(recorded(db()), rows);
      return { rows: written, statements };
    }
    const byCopy = (w: Written) => w.statements.includes('RELEASE SAVEPOINT copy_rows') && !w.statements.some((s) => s.includes('json_to_recordset'));
    const byStatement = (w: Written) => w.statements.some((s) => s.includes('json_to_recordset'));

    it('writes every value as given and returns the rows it wrote; the same batch again writes and returns nothing', async () => {
      const rows = Array.from({ length: 700 }, (_, i) => row(run('run-a'), i));
      // Text that needs escaping in any serialisation: quotes, backslashes, tab, newline, non-ASCII, braces, commas.
      rows[1] = row(run('run-a'), 1, { label: 'a "quoted" \\ label\twith\nbreaks, {braces} é ✓' });
      // An empty string is not NULL; scores that only an exact decimal form keeps.
      rows[2] = row(run('run-a'), 2, { label: '', detail_hash: '', score: 0.1 + 0.2 });
      rows[3] = row(run('run-a'), 3, { score: 1e-7, label: 'NULL' });
      const first = await write(rows);
      // In a transaction a batch this size goes by COPY; on the data source (no transaction), by the statement.
      expect(through === 'a transaction' ? byCopy(first) : byStatement(first)).toBe(true);
      expect(first.rows).toHaveLength(700);
      expect(first.rows[1]).toBe(rows[1]);
      const stored = await repo.forRun(db(), run('run-a'));
      const byCase = new Map(stored.map((r) => [r.case_id, r]));
      for (const r of rows) expect(byCase.get(r.case_id)).toEqual(r);
      const again = await write(rows);
      expect(again.rows).toEqual([]);
      expect(byStatement(again)).toBe(true);
      const aggregate = await repo.aggregate(db(), run('run-a'));
      expect({ n: aggregate.n, passed: aggregate.passed }).toEqual({ n: 700, passed: rows.filter((r) => r.passed).length });
      expect(aggregate.score_sum).toBeCloseTo(rows.reduce((s, r) => s + r.score, 0), 9);
    });

    it('writes only the new cases of a batch that overlaps stored evidence, and returns exactly those', async () => {
      await write([row(run('run-b'), 0), row(run('run-b'), 1)]);
      const batch = [row(run('run-b'), 1), ...Array.from({ length: 99 }, (_, i) => row(run('run-b'), i + 2)), row(run('run-c'), 1)];
      const written = await write(batch);
      expect(written.rows).toEqual(batch.slice(1));
      expect((await repo.forRun(db(), run('run-b'))).map((r) => r.case_id).sort()).toEqual(Array.from({ length: 101 }, (_, i) => `c${i}`).sort());
    });

    it('keeps the first of two rows for one case in one batch (ON CONFLICT DO NOTHING)', async () => {
      const batch = Array.from({ length: 100 }, (_, i) => row(run('run-d'), i, { label: 'first' }));
      const written = await write([...batch, row(run('run-d'), 7, { label: 'second' })]);
      expect(written.rows).toEqual(batch);
      expect((await repo.forRun(db(), run('run-d'))).filter((r) => r.case_id === 'c7').map((r) => r.label)).toEqual(['first']);
    });

    it('clamps a label to its varchar(120) column by characters, as the explicit cast of the statement does', async () => {
      const labels = ['x'.repeat(130), 'é'.repeat(125), '😀'.repeat(121)];
      const rows = Array.from({ length: 100 }, (_, i) => row(run('run-e'), i, { label: labels[i % 3] }));
      await write(rows);
      const stored = new Map((await repo.forRun(db(), run('run-e'))).map((r) => [r.case_id, r.label]));
      expect([stored.get('c0'), stored.get('c1'), stored.get('c2')]).toEqual(['x'.repeat(120), 'é'.repeat(120), '😀'.repeat(120)]);
    });

    it('refuses a row whose score is not a number (NOT NULL), and writes nothing of its batch', async () => {
      const rows = Array.from({ length: 100 }, (_, i) => row(run('run-f'), i, i === 50 ? { score: Number.NaN } : {}));
      const refused = await write(rows).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(pgCode(refused)).toBe('23502');
      expect(await repo.forRun(db(), run('run-f'))).toEqual([]);
    });

    it('issue 28: the case ids and aggregate of many runs, read in one query, agree with each run asked alone', async () => {
      const runs = [run('agg-a'), run('agg-b'), run('agg-c')];
      // agg-c: scores whose float sum is not a round decimal, compared exactly (toEqual) with the run asked alone.
      const thirds = [0.1, 0.2, 0.3, 1 / 3, 0.7].map((score, i) => row(runs[2], i + 20, { score, passed: score >= 0.3 }));
      await write([...Array.from({ length: 7 }, (_, i) => row(runs[0], i)), ...Array.from({ length: 3 }, (_, i) => row(runs[1], i + 10)), ...thirds]);
      const summaries = await repo.summaries(db(), [...runs, run('agg-none')]);
      for (const id of runs) {
        const { case_ids, ...aggregate } = summaries.get(id)!;
        expect(aggregate).toEqual(await repo.aggregate(db(), id));
        expect(case_ids).toEqual(await repo.caseIds(db(), id));
      }
      // Rows 0-6: passed when i % 4 < 2 (0, 1, 4, 5); scores 1, 1, 0.25, 0, 1, 1, 0.25.
      expect(summaries.get(runs[0])).toMatchObject({ n: 7, passed: 4, score_sum: 4.5 });
      expect([...summaries.get(runs[1])!.case_ids].sort()).toEqual(['c10', 'c11', 'c12']);
      expect(summaries.get(runs[2])).toMatchObject({ n: 5, passed: 3 });
      expect(summaries.get(run('agg-none'))).toEqual({ case_ids: new Set(), n: 0, passed: 0, score_sum: 0 });
    });
  });
}

evidenceInsertContract('PostgreSQL server', () => postgresDataSource('evins'));

evidenceInsertContract('PGlite, the embedded default', () => pgliteDataSource());
