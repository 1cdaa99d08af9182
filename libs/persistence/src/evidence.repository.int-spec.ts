import type { DataSource } from 'typeorm';
import { createTestSchema } from '../../../test/support/isolation';
import { testServers } from '../../../test/support/servers';
import { createDataSource, migrate } from './data-source';
import { EvidenceRepository, type EvidenceRow } from './evidence.repository';
import { pgliteDataSource } from './pglite-data-source.testing';

/*
 * The evidence insert (R3, exactly-once evidence): rows travel as one json parameter (issue 15). On the
 * PostgreSQL server and on PGlite, the embedded default: every value round-trips, a redelivered batch
 * writes nothing and returns nothing, a case repeated inside a batch is written once, and a label is clamped
 * to its column as the typed-array insert did. PGlite needs --experimental-vm-modules (npm run test:int).
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

function evidenceInsertContract(label: string, open: () => Promise<{ ds: DataSource; teardown(): Promise<void> }>): void {
  describe(`integration: the evidence insert (${label})`, () => {
    let ds: DataSource;
    let teardown: () => Promise<void>;
    const repo = new EvidenceRepository();

    beforeAll(async () => {
      ({ ds, teardown } = await open());
      await migrate(ds);
    }, 120_000);

    afterAll(async () => {
      await teardown?.();
    });

    it('writes every value as given and returns the rows it wrote; the same batch again writes and returns nothing', async () => {
      const rows = Array.from({ length: 700 }, (_, i) => row('run-a', i));
      // Text that needs escaping in any serialisation: quotes, backslashes, tab, newline, non-ASCII, braces.
      rows[1] = row('run-a', 1, { label: 'a "quoted" \\ label\twith\nbreaks, {braces} é ✓' });
      const written = await repo.insertBatch(ds, rows);
      expect(written).toHaveLength(700);
      expect(written[1]).toBe(rows[1]);
      const stored = await repo.forRun(ds, 'run-a');
      const byCase = new Map(stored.map((r) => [r.case_id, r]));
      for (const r of rows) expect(byCase.get(r.case_id)).toEqual(r);
      expect(await repo.insertBatch(ds, rows)).toEqual([]);
      expect(await repo.aggregate(ds, 'run-a')).toEqual({ n: 700, passed: rows.filter((r) => r.passed).length, score_sum: rows.reduce((s, r) => s + r.score, 0) });
    });

    it('writes only the new cases of a batch that overlaps stored evidence, and returns exactly those', async () => {
      await repo.insertBatch(ds, [row('run-b', 0), row('run-b', 1)]);
      const batch = [row('run-b', 1), row('run-b', 2), row('run-c', 1)];
      const written = await repo.insertBatch(ds, batch);
      expect(written).toEqual([batch[1], batch[2]]);
    });

    it('keeps the first of two rows for one case in one batch (ON CONFLICT DO NOTHING)', async () => {
      const first = row('run-d', 7, { label: 'first' });
      await repo.insertBatch(ds, [first, row('run-d', 7, { label: 'second' })]);
      expect((await repo.forRun(ds, 'run-d')).map((r) => r.label)).toEqual(['first']);
    });

    it('clamps a label to its varchar(120) column, as the explicit cast of the array insert did', async () => {
      await repo.insertBatch(ds, [row('run-e', 0, { label: 'x'.repeat(130) })]);
      expect((await repo.forRun(ds, 'run-e'))[0].label).toBe('x'.repeat(120));
    });
  });
}

evidenceInsertContract('PostgreSQL server', async () => {
  const schema = await createTestSchema('evins');
  const ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize: 2 });
  await ds.initialize();
  return {
    ds,
    async teardown() {
      await ds.destroy();
      await schema.drop();
    },
  };
});

evidenceInsertContract('PGlite, the embedded default', () => pgliteDataSource());
