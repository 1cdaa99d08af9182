import type { DataSource } from 'typeorm';
import { createTestSchema, type TestSchema } from '../../../test/support/isolation';
import { testServers } from '../../../test/support/servers';
import { createDataSource, migrate } from './data-source';

// V2, R3: append-only is enforced by the database itself, not by the code that happens to call it.
describe('integration: append-only tables refuse UPDATE, DELETE and TRUNCATE (V2, R3)', () => {
  let schema: TestSchema;
  let ds: DataSource;

  beforeAll(async () => {
    schema = await createTestSchema('appendonly');
    ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize: 2 });
    await ds.initialize();
    expect(await migrate(ds)).toEqual(['InitialSchema1764460800000', 'ReadModel1764460900000', 'Regression1764461000000', 'Monitor1764461100000', 'ApiKeys1764461200000', 'Gate1764461300000', 'Judge1764461400000']);
    await ds.query(`INSERT INTO events (stream_id, stream_version, type, version, data, metadata, message_id)
      VALUES ('run-1', 1, 'evals.run.opened', 1, '{}', '{}', gen_random_uuid())`);
    await ds.query(`INSERT INTO suite_versions (suite_key, version, content_hash, default_scorer, pass_threshold,
      regression_threshold, case_count) VALUES ('s', 1, 'h', '{"type":"exact"}', 0.8, 0.05, 1)`);
    await ds.query(`INSERT INTO suite_cases (suite_key, suite_version, ordinal, case_id, expected)
      VALUES ('s', 1, 0, 'c1', '"x"')`);
    await ds.query(`INSERT INTO evidence (run_id, case_id, scorer, scorer_version, score, passed, label, scored_at)
      VALUES ('run-1', 'c1', 'exact', '1.0.0', 1, true, 'match', now())`);
    await ds.query(`INSERT INTO dead_letters (subject, code, reason) VALUES ('evals.run.sealed', 'MALFORMED_JSON', 'r')`);
  });

  afterAll(async () => {
    await ds?.destroy();
    await schema?.drop();
  });

  it('a second migrate applies nothing', async () => {
    expect(await migrate(ds)).toEqual([]);
  });

  const cases: Array<[string, string, string]> = [
    ['events', `UPDATE events SET type = 'x'`, `DELETE FROM events`],
    ['suite_versions', `UPDATE suite_versions SET pass_threshold = 0`, `DELETE FROM suite_versions`],
    ['suite_cases', `UPDATE suite_cases SET expected = '"y"'`, `DELETE FROM suite_cases`],
    ['evidence', `UPDATE evidence SET passed = false`, `DELETE FROM evidence`],
    ['dead_letters', `UPDATE dead_letters SET reason = 'x'`, `DELETE FROM dead_letters`],
  ];

  it.each(cases)('%s: UPDATE, DELETE and TRUNCATE fail in the database', async (table, update, del) => {
    await expect(ds.query(update)).rejects.toThrow(new RegExp(`table ${table} is append-only: UPDATE refused`));
    await expect(ds.query(del)).rejects.toThrow(new RegExp(`table ${table} is append-only: DELETE refused`));
    await expect(ds.query(`TRUNCATE ${table} CASCADE`)).rejects.toThrow(/append-only: TRUNCATE refused/);
    const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM ${table}`);
    expect(n).toBe(1);
  });

  it('a duplicate (run, case) evidence row is refused by the primary key', async () => {
    await expect(
      ds.query(`INSERT INTO evidence (run_id, case_id, scorer, scorer_version, score, passed, label, scored_at)
        VALUES ('run-1', 'c1', 'exact', '1.0.0', 0, false, 'mismatch', now())`),
    ).rejects.toThrow(/duplicate key/);
  });
});
