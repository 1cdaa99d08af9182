import { DEFAULT_PROJECT, projectField } from '@evals/contracts';
import type { Sql } from './sql';
import { SuiteEvents } from './suite-stream';

/** A stored suite version (V1-V2): content is immutable once written; the database refuses edits. */
export interface SuiteVersionRecord {
  /** Issue 30: the project the suite belongs to; absent reads as `default`. */
  readonly project?: string;
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
  /** Absent (undefined) is "no expected"; null is the authored value null. */
  readonly expected?: unknown;
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

/**
 * The ingestion's suite tables (issue 27: no other app reads them). Every version written here also gets its
 * events in the same transaction (SuiteEvents: `suite.published`, then its case pages), which is how the
 * worker, the regression app and the read model learn it (`SuiteVersions`, `loadSuite`).
 *
 * Issue 30 (docs/adr/0009-projects.md): a suite key is unique per project, so every method takes the project
 * and every read, write and uniqueness decision is filtered by it: two projects may push the same key, each
 * with its own version 1.
 */
export class SuiteRepository {
  constructor(private readonly events = new SuiteEvents()) {}

  async versions(sql: Sql, project: string, suiteKey: string): Promise<SuiteVersionRecord[]> {
    const rows = await sql.query(
      `SELECT project, suite_key, version, content_hash, description, default_scorer, pass_threshold, regression_threshold,
              golden_fixtures, case_count, created_at FROM suite_versions WHERE project = $1 AND suite_key = $2 ORDER BY version`,
      [project, suiteKey],
    );
    return rows.map(toVersion);
  }

  /**
   * The version a suite text (by the SHA-256 of its bytes) was accepted as, if that version is still the
   * latest of its key; null otherwise (unknown bytes, or a newer version since: pushing them again is then a
   * revert, decided by the full path). V2, issue 15: identical bytes are answered without parsing.
   */
  async latestBySource(sql: Sql, project: string, sourceSha256: string): Promise<SuiteVersionRecord | null> {
    // Per project (issue 30): the same bytes pushed by another project are that project's suite, not ours.
    const rows = await sql.query(
      `SELECT v.project, v.suite_key, v.version, v.content_hash, v.description, v.default_scorer, v.pass_threshold, v.regression_threshold,
              v.golden_fixtures, v.case_count, v.created_at
       FROM suite_sources s JOIN suite_versions v ON v.project = s.project AND v.suite_key = s.suite_key AND v.version = s.version
       WHERE s.project = $1 AND s.source_sha256 = $2
         AND NOT EXISTS (SELECT 1 FROM suite_versions n WHERE n.project = s.project AND n.suite_key = s.suite_key AND n.version > s.version)`,
      [project, sourceSha256],
    );
    return rows.length === 0 ? null : toVersion(rows[0]);
  }

  /**
   * Records that a suite text became (or equals) `version`: in the transaction of that version's insert, or
   * alone for an identical push. Only ever moves forward (a revert re-records older bytes at its new version).
   */
  async recordSource(sql: Sql, project: string, sourceSha256: string, suiteKey: string, version: number): Promise<void> {
    await sql.query(
      `INSERT INTO suite_sources (project, source_sha256, suite_key, version) VALUES ($1, $2, $3, $4)
       ON CONFLICT (project, source_sha256) DO UPDATE SET suite_key = EXCLUDED.suite_key, version = EXCLUDED.version
       WHERE suite_sources.version < EXCLUDED.version`,
      [project, sourceSha256, suiteKey, version],
    );
  }

  /** Every stored suite, by key, with its latest version (paged; `total` counts suites, not versions). */
  async list(sql: Sql, project: string, offset: number, limit: number): Promise<{ items: SuiteSummary[]; total: number; offset: number; limit: number }> {
    const [count] = await sql.query(`SELECT count(DISTINCT suite_key)::int AS n FROM suite_versions WHERE project = $1`, [project]);
    const rows = await sql.query(
      `SELECT v.suite_key, v.version, v.case_count, v.description, v.content_hash,
              to_char(v.created_at AT TIME ZONE 'UTC', ${ISO}) AS created_at,
              s.versions, to_char(s.first_at AT TIME ZONE 'UTC', ${ISO}) AS first_created_at
       FROM (SELECT suite_key, max(version) AS latest, count(*)::int AS versions, min(created_at) AS first_at
             FROM suite_versions WHERE project = $1 GROUP BY suite_key ORDER BY suite_key OFFSET $2 LIMIT $3) s
       JOIN suite_versions v ON v.project = $1 AND v.suite_key = s.suite_key AND v.version = s.latest
       ORDER BY v.suite_key`,
      [project, offset, limit],
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
  async find(sql: Sql, project: string, suiteKey: string, version?: number): Promise<SuiteVersionWithCases | null> {
    const rows = await sql.query(
      version === undefined
        ? `SELECT * FROM suite_versions WHERE project = $1 AND suite_key = $2 ORDER BY version DESC LIMIT 1`
        : `SELECT * FROM suite_versions WHERE project = $1 AND suite_key = $2 AND version = $3`,
      version === undefined ? [project, suiteKey] : [project, suiteKey, version],
    );
    if (rows.length === 0) return null;
    const head = toVersion(rows[0]);
    const cases = await sql.query(`SELECT ${CASE_COLUMNS} FROM suite_cases WHERE project = $1 AND suite_key = $2 AND suite_version = $3 ORDER BY ordinal`, [project, head.suite_key, head.version]);
    return { ...head, cases: cases.map(caseRecordOf) };
  }

  /**
   * Up to `limit` cases of a version from ordinal `fromOrdinal` on, with their ordinals: a version read a
   * batch at a time (the backfill of its events, issue 27), never whole.
   */
  async casesFrom(sql: Sql, project: string, suiteKey: string, version: number, fromOrdinal: number, limit: number): Promise<Array<SuiteCaseRecord & { readonly ordinal: number }>> {
    const rows = await sql.query(
      `SELECT ordinal, ${CASE_COLUMNS} FROM suite_cases WHERE project = $1 AND suite_key = $2 AND suite_version = $3 AND ordinal >= $4 ORDER BY ordinal LIMIT $5`,
      [project, suiteKey, version, fromOrdinal, limit],
    );
    return rows.map((r: any) => ({ ...caseRecordOf(r), ordinal: r.ordinal }));
  }

  /**
   * Writes a new version with its cases. Two writers minting the same version number collide on the
   * primary key; the caller re-reads and decides again (V2: identical content returns the existing one).
   */
  async insert(sql: Sql, suite: SuiteVersionWithCases): Promise<void> {
    await this.insertHead(sql, { ...suite, case_count: suite.cases.length });
    await this.insertCases(sql, suite.project ?? DEFAULT_PROJECT, suite.suite_key, suite.version, suite.cases, 0);
  }

  /**
   * The version's row alone, in `suite.project` (absent: `default`); its cases follow in the same transaction
   * (insertCases), as a streamed push writes them.
   */
  async insertHead(sql: Sql, suite: SuiteVersionRecord): Promise<void> {
    const project = suite.project ?? DEFAULT_PROJECT;
    const [row] = await sql.query(
      `INSERT INTO suite_versions (project, suite_key, version, content_hash, description, default_scorer, pass_threshold,
         regression_threshold, golden_fixtures, case_count) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10) RETURNING created_at`,
      [project, suite.suite_key, suite.version, suite.content_hash, suite.description, JSON.stringify(suite.default_scorer), suite.pass_threshold, suite.regression_threshold, suite.golden_fixtures, suite.case_count],
    );
    // SuiteEvents writes `project` into suite.published (omitted for `default`) and picks the project's stream.
    await this.events.published(sql, { ...suite, project, created_at: createdAt(row.created_at) });
  }

  /** Cases of a version, the first at ordinal `from` (issue 31: a streamed push writes one batch at a time). */
  async insertCases(sql: Sql, project: string, suiteKey: string, version: number, cases: readonly SuiteCaseRecord[], from: number): Promise<void> {
    // In statements of CASES_PER_INSERT (one transaction, the caller's): a 100 000-case suite is never one
    // parameter list of every case's JSON text at once (issue 15).
    for (let at = 0; at < cases.length; at += CASES_PER_INSERT) {
      const c = cases.slice(at, at + CASES_PER_INSERT);
      await sql.query(
        `INSERT INTO suite_cases (project, suite_key, suite_version, ordinal, case_id, input, expected, scorer, tags)
         SELECT $1, $2, $3, t.ordinal, t.case_id, t.input, t.expected, t.scorer, ARRAY(SELECT jsonb_array_elements_text(t.tags))
         FROM unnest($4::int[], $5::text[], $6::jsonb[], $7::jsonb[], $8::jsonb[], $9::jsonb[])
           AS t(ordinal, case_id, input, expected, scorer, tags)`,
        [
          project,
          suiteKey,
          version,
          c.map((_, i) => from + at + i),
          c.map((x) => x.case_id),
          c.map((x) => (x.input === undefined ? null : JSON.stringify(x.input))),
          c.map((x) => (x.expected === undefined ? null : JSON.stringify(x.expected))),
          c.map((x) => (x.scorer ? JSON.stringify(x.scorer) : null)),
          c.map((x) => JSON.stringify(x.tags ?? [])),
        ],
      );
      await this.events.pages(sql, project, suiteKey, version, c, from + at);
    }
  }

  /**
   * A version's row without its cases (the latest when `version` is undefined): all a run's open reads once
   * the version's case facts are cached (issue 15).
   */
  async head(sql: Sql, project: string, suiteKey: string, version?: number): Promise<SuiteVersionHead | null> {
    const rows = await sql.query(
      version === undefined
        ? `SELECT ${HEAD_COLUMNS} FROM suite_versions WHERE project = $1 AND suite_key = $2 ORDER BY version DESC LIMIT 1`
        : `SELECT ${HEAD_COLUMNS} FROM suite_versions WHERE project = $1 AND suite_key = $2 AND version = $3`,
      version === undefined ? [project, suiteKey] : [project, suiteKey, version],
    );
    return rows.length === 0 ? null : headOf(rows[0]);
  }

  /**
   * `head` of many requests in one query, answered in their order (issue 28: the run-opens of one moment, a
   * read each before). A request names its version or asks for the latest (`version` undefined).
   */
  async heads(sql: Sql, requests: ReadonlyArray<{ readonly project: string; readonly suiteKey: string; readonly version?: number }>): Promise<Array<SuiteVersionHead | null>> {
    if (requests.length === 0) return [];
    const rows: Array<Record<string, unknown> & { i: string }> = await sql.query(
      `SELECT DISTINCT ON (r.i) r.i, ${HEAD_COLUMNS.split(', ').map((c) => `v.${c}`).join(', ')}
       FROM unnest($1::text[], $2::text[], $3::int[]) WITH ORDINALITY AS r(project, suite_key, version, i)
       JOIN suite_versions v ON v.project = r.project AND v.suite_key = r.suite_key AND (r.version IS NULL OR v.version = r.version)
       ORDER BY r.i, v.version DESC`,
      [requests.map((r) => r.project), requests.map((r) => r.suiteKey), requests.map((r) => r.version ?? null)],
    );
    const found = new Map(rows.map((r) => [Number(r.i), headOf(r)]));
    return requests.map((_, i) => found.get(i + 1) ?? null);
  }

  /**
   * A version's cases in suite order with only what their scorer versions depend on (the id, the scorer spec
   * and `expected`, which some scorers validate against) - never the input or tags (issue 15).
   */
  async caseScorers(sql: Sql, project: string, suiteKey: string, version: number): Promise<SuiteCaseScorer[]> {
    const rows = await sql.query(
      `SELECT case_id, scorer, expected, expected IS NULL AS expected_absent FROM suite_cases
       WHERE project = $1 AND suite_key = $2 AND suite_version = $3 ORDER BY ordinal`,
      [project, suiteKey, version],
    );
    // As `find`: SQL NULL is "no expected", a JSON null the authored value.
    return rows.map((c: any) => ({ case_id: c.case_id, scorer: c.scorer, expected: c.expected_absent ? undefined : c.expected }));
  }
}

/** A suite version's row without its cases (`SuiteRepository.head`). */
const HEAD_COLUMNS = `suite_key, version, content_hash, default_scorer, pass_threshold, regression_threshold, case_count`;

function headOf(r: Record<string, unknown>): SuiteVersionHead {
  return {
    suite_key: r.suite_key as string,
    version: r.version as number,
    content_hash: r.content_hash as string,
    default_scorer: r.default_scorer as SuiteVersionHead['default_scorer'],
    pass_threshold: Number(r.pass_threshold),
    regression_threshold: Number(r.regression_threshold),
    case_count: r.case_count as number,
  };
}

export type SuiteVersionHead = Pick<SuiteVersionRecord, 'suite_key' | 'version' | 'content_hash' | 'default_scorer' | 'pass_threshold' | 'regression_threshold' | 'case_count'>;

/** A case as its scorer versions need it (`SuiteRepository.caseScorers`). */
export type SuiteCaseScorer = Pick<SuiteCaseRecord, 'case_id' | 'scorer' | 'expected'>;

const CASES_PER_INSERT = 2_000;

export const CASE_COLUMNS = 'case_id, input, expected, expected IS NULL AS expected_absent, scorer, tags';

/** SQL NULL is "no expected"; a JSON null is the authored value null (json_equal may expect it). */
export function caseRecordOf(c: any): SuiteCaseRecord {
  return { case_id: c.case_id, input: c.input, expected: c.expected_absent ? undefined : c.expected, scorer: c.scorer, tags: c.tags ?? [] };
}

/** A `suite_versions` row as its record. */
export function toVersion(r: any): SuiteVersionRecord {
  return {
    // Issue 30: named only outside `default`, as suite.published names it, so a default suite reads as before.
    ...projectField(r.project),
    suite_key: r.suite_key,
    version: r.version,
    content_hash: r.content_hash,
    description: r.description,
    default_scorer: r.default_scorer,
    pass_threshold: Number(r.pass_threshold),
    regression_threshold: Number(r.regression_threshold),
    golden_fixtures: r.golden_fixtures,
    case_count: r.case_count,
    created_at: createdAt(r.created_at),
  };
}

/** A `created_at` as the driver gives it (a Date; PGlite may give text), as ISO 8601 text. */
export function createdAt(value: unknown): string {
  return value instanceof Date ? value.toISOString() : (value as string);
}
