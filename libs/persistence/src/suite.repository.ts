import type { Sql } from './sql';

/** A stored suite version (V1-V2): content is immutable once written; the database refuses edits. */
export interface SuiteVersionRecord {
  readonly suite_key: string;
  readonly version: number;
  readonly content_hash: string;
  readonly description: string | null;
  readonly default_scorer: Readonly<Record<string, unknown>>;
  readonly pass_threshold: number;
  readonly regression_threshold: number;
  readonly golden_fixtures: boolean;
  readonly case_count: number;
  readonly created_at?: string;
}

export interface SuiteCaseRecord {
  readonly case_id: string;
  readonly input: unknown;
  readonly expected: unknown;
  /** The case's own scorer spec, or null to use the suite's default. */
  readonly scorer: Readonly<Record<string, unknown>> | null;
  readonly tags: readonly string[];
}

export interface SuiteVersionWithCases extends SuiteVersionRecord {
  readonly cases: readonly SuiteCaseRecord[];
}

/** One stored suite in the list (`GET /v1/suites`): its latest version and how many versions it has. */
export interface SuiteSummary {
  readonly suite_key: string;
  readonly latest_version: number;
  readonly case_count: number;
  readonly versions: number;
  readonly description: string | null;
  readonly content_hash: string;
  /** When the latest version was pushed. */
  readonly created_at: string;
  /** When the first version was pushed. */
  readonly first_created_at: string;
}

const ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

export class SuiteRepository {
  async versions(sql: Sql, suiteKey: string): Promise<SuiteVersionRecord[]> {
    const rows = await sql.query(
      `SELECT suite_key, version, content_hash, description, default_scorer, pass_threshold, regression_threshold,
              golden_fixtures, case_count, created_at FROM suite_versions WHERE suite_key = $1 ORDER BY version`,
      [suiteKey],
    );
    return rows.map(toVersion);
  }

  /** Every stored suite, by key, with its latest version (paged; `total` counts suites, not versions). */
  async list(sql: Sql, offset: number, limit: number): Promise<{ items: SuiteSummary[]; total: number; offset: number; limit: number }> {
    const [count] = await sql.query(`SELECT count(DISTINCT suite_key)::int AS n FROM suite_versions`);
    const rows = await sql.query(
      `SELECT v.suite_key, v.version, v.case_count, v.description, v.content_hash,
              to_char(v.created_at AT TIME ZONE 'UTC', ${ISO}) AS created_at,
              s.versions, to_char(s.first_at AT TIME ZONE 'UTC', ${ISO}) AS first_created_at
       FROM (SELECT suite_key, max(version) AS latest, count(*)::int AS versions, min(created_at) AS first_at
             FROM suite_versions GROUP BY suite_key ORDER BY suite_key OFFSET $1 LIMIT $2) s
       JOIN suite_versions v ON v.suite_key = s.suite_key AND v.version = s.latest
       ORDER BY v.suite_key`,
      [offset, limit],
    );
    const items = rows.map((r: any) => ({
      suite_key: r.suite_key,
      latest_version: r.version,
      case_count: r.case_count,
      versions: r.versions,
      description: r.description,
      content_hash: r.content_hash,
      created_at: r.created_at,
      first_created_at: r.first_created_at,
    }));
    return { items, total: count.n, offset, limit };
  }

  /** Latest when `version` is undefined. */
  async find(sql: Sql, suiteKey: string, version?: number): Promise<SuiteVersionWithCases | null> {
    const rows = await sql.query(
      version === undefined
        ? `SELECT * FROM suite_versions WHERE suite_key = $1 ORDER BY version DESC LIMIT 1`
        : `SELECT * FROM suite_versions WHERE suite_key = $1 AND version = $2`,
      version === undefined ? [suiteKey] : [suiteKey, version],
    );
    if (rows.length === 0) return null;
    const head = toVersion(rows[0]);
    const cases = await sql.query(
      `SELECT case_id, input, expected, expected IS NULL AS expected_absent, scorer, tags FROM suite_cases
       WHERE suite_key = $1 AND suite_version = $2 ORDER BY ordinal`,
      [head.suite_key, head.version],
    );
    // SQL NULL is "no expected"; a JSON null is the authored value null (json_equal may expect it).
    return {
      ...head,
      cases: cases.map((c: any) => ({ case_id: c.case_id, input: c.input, expected: c.expected_absent ? undefined : c.expected, scorer: c.scorer, tags: c.tags ?? [] })),
    };
  }

  /**
   * Writes a new version with its cases. Two writers minting the same version number collide on the
   * primary key; the caller re-reads and decides again (V2: identical content returns the existing one).
   */
  async insert(sql: Sql, suite: SuiteVersionWithCases): Promise<void> {
    await sql.query(
      `INSERT INTO suite_versions (suite_key, version, content_hash, description, default_scorer, pass_threshold,
         regression_threshold, golden_fixtures, case_count) VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9)`,
      [suite.suite_key, suite.version, suite.content_hash, suite.description, JSON.stringify(suite.default_scorer), suite.pass_threshold, suite.regression_threshold, suite.golden_fixtures, suite.cases.length],
    );
    // In statements of CASES_PER_INSERT (one transaction, the caller's): a 100 000-case suite is never one
    // parameter list of every case's JSON text at once (issue 15).
    for (let from = 0; from < suite.cases.length; from += CASES_PER_INSERT) {
      const c = suite.cases.slice(from, from + CASES_PER_INSERT);
      await sql.query(
        `INSERT INTO suite_cases (suite_key, suite_version, ordinal, case_id, input, expected, scorer, tags)
         SELECT $1, $2, t.ordinal, t.case_id, t.input, t.expected, t.scorer, ARRAY(SELECT jsonb_array_elements_text(t.tags))
         FROM unnest($3::int[], $4::text[], $5::jsonb[], $6::jsonb[], $7::jsonb[], $8::jsonb[])
           AS t(ordinal, case_id, input, expected, scorer, tags)`,
        [
          suite.suite_key,
          suite.version,
          c.map((_, i) => from + i),
          c.map((x) => x.case_id),
          c.map((x) => (x.input === undefined ? null : JSON.stringify(x.input))),
          c.map((x) => (x.expected === undefined ? null : JSON.stringify(x.expected))),
          c.map((x) => (x.scorer ? JSON.stringify(x.scorer) : null)),
          c.map((x) => JSON.stringify(x.tags ?? [])),
        ],
      );
    }
  }
}

const CASES_PER_INSERT = 2_000;

function toVersion(r: any): SuiteVersionRecord {
  return {
    suite_key: r.suite_key,
    version: r.version,
    content_hash: r.content_hash,
    description: r.description,
    default_scorer: r.default_scorer,
    pass_threshold: Number(r.pass_threshold),
    regression_threshold: Number(r.regression_threshold),
    golden_fixtures: r.golden_fixtures,
    case_count: r.case_count,
    created_at: r.created_at instanceof Date ? r.created_at.toISOString() : r.created_at,
  };
}
