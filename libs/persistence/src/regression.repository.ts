import type { CompletedRunFacts, RunCompleteness } from '@evals/domain';
import type { Sql } from './sql';

/** One completed run as the regression app decided it (G1-G2); append-only. */
export interface RunVerdictRow extends CompletedRunFacts {
  /** Issue 30: the run's project (`runProject` of its stream); every read below is within one project. */
  readonly project: string;
  readonly pass_threshold: number;
  readonly scorer_versions: Readonly<Record<string, string>>;
  readonly verdict: string;
  /** R7: every case scored, some left unscored, or sealed by expiry (only `complete` runs are baselines). */
  readonly completeness: RunCompleteness;
  readonly baseline_run_id: string | null;
  readonly baseline_choice: string | null;
  readonly comparison: unknown;
}

export interface BaselinePin {
  readonly suite_key: string;
  readonly subject_kind: string;
  readonly subject_id: string;
  readonly variant: string | null;
  readonly run_id: string;
  readonly pinned_at?: string;
}

/** A completed run as a baseline candidate: its verdict row without the comparison it was decided by. */
export type BaselineCandidate = Omit<RunVerdictRow, 'comparison'>;

/** A suite and subject within a project: whose history is one list of baseline candidates. */
export interface SubjectKey {
  readonly project: string;
  readonly suite_key: string;
  readonly subject_kind: string;
  readonly subject_id: string;
}

/** A pin's key: a subject key and the variant. */
export interface PinKey extends SubjectKey {
  readonly variant: string | null;
}

/** A pin as `pinsFor` reads it: with its project and the pinned run's verdict row (null when the run has none in the project). */
export interface PinWithRun extends BaselinePin {
  readonly project: string;
  readonly pinned: BaselineCandidate | null;
}

/** A finding to store (`addFindings`). */
export interface NewFinding {
  readonly project: string;
  readonly finding_id: string;
  readonly kind: string;
  readonly run_id: string;
  readonly payload: unknown;
  readonly occurred_at: string;
}

const ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
const CANDIDATE_COLUMNS = `project, run_id, suite_key, suite_version, subject_kind, subject_id, variant,
  to_char(completed_at AT TIME ZONE 'UTC', ${ISO}) AS completed_at, n, passed, score, pass_threshold,
  scorer_versions, verdict, completeness, baseline_run_id, baseline_choice`;
const COLUMNS = `${CANDIDATE_COLUMNS}, comparison`;

/**
 * The regression app's verdicts, pins and findings (G1-G6). Issue 30: every method takes the project and reads
 * or writes only its rows - a run, pin or finding of another project is what a missing one is (ADR 0009). Run
 * ids are unique across the service, so `run_verdicts` and `findings` stay keyed by the run; the project is
 * still part of every lookup, so another project's run is never a baseline, a pin or a finding here.
 */
export class RegressionRepository {
  /** True when this call recorded the verdict (a redelivered event finds it there and does nothing). */
  async record(sql: Sql, row: RunVerdictRow): Promise<boolean> {
    const rows = await sql.query(
      `INSERT INTO run_verdicts (run_id, suite_key, suite_version, subject_kind, subject_id, variant, completed_at, n, passed,
         score, pass_threshold, scorer_versions, verdict, baseline_run_id, baseline_choice, comparison, completeness, project)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13, $14, $15, $16::jsonb, $17, $18)
       ON CONFLICT (run_id) DO NOTHING RETURNING 1`,
      [row.run_id, row.suite_key, row.suite_version, row.subject_kind, row.subject_id, row.variant, row.completed_at, row.n, row.passed, row.score, row.pass_threshold, JSON.stringify(row.scorer_versions), row.verdict, row.baseline_run_id, row.baseline_choice, row.comparison === null ? null : JSON.stringify(row.comparison), row.completeness, row.project],
    );
    return rows.length === 1;
  }

  /**
   * `record` for many rows in one statement (issue 28: a micro-batch's verdicts). Returns the run ids it
   * inserted: a row missing from it was recorded already, by another transaction (ON CONFLICT (run_id)).
   */
  async recordMany(sql: Sql, rows: readonly RunVerdictRow[]): Promise<Set<string>> {
    if (rows.length === 0) return new Set();
    const col = <T>(f: (r: RunVerdictRow) => T) => rows.map(f);
    const inserted: Array<{ run_id: string }> = await sql.query(
      `INSERT INTO run_verdicts (run_id, suite_key, suite_version, subject_kind, subject_id, variant, completed_at, n, passed,
         score, pass_threshold, scorer_versions, verdict, baseline_run_id, baseline_choice, comparison, completeness, project)
       SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::int[], $9::int[],
         $10::float8[], $11::float8[], $12::jsonb[], $13::text[], $14::text[], $15::text[], $16::jsonb[], $17::text[], $18::text[])
       ON CONFLICT (run_id) DO NOTHING RETURNING run_id`,
      [
        col((r) => r.run_id), col((r) => r.suite_key), col((r) => r.suite_version), col((r) => r.subject_kind), col((r) => r.subject_id), col((r) => r.variant),
        col((r) => r.completed_at), col((r) => r.n), col((r) => r.passed), col((r) => r.score), col((r) => r.pass_threshold), col((r) => JSON.stringify(r.scorer_versions)),
        col((r) => r.verdict), col((r) => r.baseline_run_id), col((r) => r.baseline_choice), col((r) => (r.comparison === null ? null : JSON.stringify(r.comparison))),
        col((r) => r.completeness), col((r) => r.project),
      ],
    );
    return new Set(inserted.map((r) => r.run_id));
  }

  /**
   * The verdict rows of `runIds` in one query, of whichever project (a micro-batch's duplicate check and
   * explicit baselines, issue 28): callers that look a run up within a project compare `project` themselves.
   */
  async candidates(sql: Sql, runIds: readonly string[]): Promise<BaselineCandidate[]> {
    if (runIds.length === 0) return [];
    const rows = await sql.query(`SELECT ${CANDIDATE_COLUMNS} FROM run_verdicts WHERE run_id = ANY($1::text[])`, [[...new Set(runIds)]]);
    return rows.map(toRow);
  }

  async find(sql: Sql, project: string, runId: string): Promise<RunVerdictRow | null> {
    const rows = await sql.query(`SELECT ${COLUMNS} FROM run_verdicts WHERE run_id = $1 AND project = $2`, [runId, project]);
    return rows.length === 0 ? null : toRow(rows[0]);
  }

  /**
   * Completed runs of one suite and subject, newest first: the baseline candidates of every decision (G4, G5).
   * Without their comparisons, which no choice reads: each is a JSON document of intervals and counts, and a
   * subject with a long history had every new run read (and parse) up to 500 of them: 5.5 ms of client CPU per
   * call with them, 1.8 without (`npm run bench:history`; issue 15). Issue 30: of one project - the same suite
   * key in another project is another suite (index `run_verdicts_project`).
   */
  async history(sql: Sql, project: string, suiteKey: string, subjectKind: string, subjectId: string, limit = 500): Promise<BaselineCandidate[]> {
    const rows = await sql.query(
      `SELECT ${CANDIDATE_COLUMNS} FROM run_verdicts WHERE project = $5 AND suite_key = $1 AND subject_kind = $2 AND subject_id = $3
       ORDER BY completed_at DESC, run_id DESC LIMIT $4`,
      [suiteKey, subjectKind, subjectId, limit, project],
    );
    return rows.map(toRow);
  }

  /**
   * The first `limit` rows of `history` of each key, in one query (issue 28: a micro-batch's subjects), in
   * the order of `keys`; same ordering and project scoping as `history`.
   */
  async histories(sql: Sql, keys: readonly SubjectKey[], limit: number): Promise<BaselineCandidate[][]> {
    if (keys.length === 0) return [];
    // The timestamp itself orders (completed_at is microseconds; its text, milliseconds); dropped below.
    const rows = await sql.query(
      `SELECT k.i, h.* FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS k(project, suite_key, subject_kind, subject_id, i)
       CROSS JOIN LATERAL (
         SELECT ${CANDIDATE_COLUMNS}, completed_at AS sort_at FROM run_verdicts v
         WHERE v.project = k.project AND v.suite_key = k.suite_key AND v.subject_kind = k.subject_kind AND v.subject_id = k.subject_id
         ORDER BY v.completed_at DESC, v.run_id DESC LIMIT $5) h
       ORDER BY k.i, h.sort_at DESC, h.run_id DESC`,
      [keys.map((k) => k.project), keys.map((k) => k.suite_key), keys.map((k) => k.subject_kind), keys.map((k) => k.subject_id), limit],
    );
    const pages: BaselineCandidate[][] = keys.map(() => []);
    for (const { i, sort_at: _, ...row } of rows) pages[Number(i) - 1].push(toRow(row));
    return pages;
  }

  async subjects(sql: Sql, project: string, filter: { suite_key?: string; subject_kind?: string; subject_id?: string }): Promise<Array<{ suite_key: string; subject_kind: string; subject_id: string }>> {
    return sql.query(
      `SELECT DISTINCT suite_key, subject_kind, subject_id FROM run_verdicts
       WHERE project = $4 AND ($1::text IS NULL OR suite_key = $1) AND ($2::text IS NULL OR subject_kind = $2) AND ($3::text IS NULL OR subject_id = $3)
       ORDER BY suite_key, subject_kind, subject_id`,
      [filter.suite_key ?? null, filter.subject_kind ?? null, filter.subject_id ?? null, project],
    );
  }

  /** Pins (or re-pins) within `project`: the key is (project, suite, subject, variant), so a pin never moves another project's. */
  async pin(sql: Sql, project: string, pin: BaselinePin): Promise<void> {
    await sql.query(
      `INSERT INTO baseline_pins (project, suite_key, subject_kind, subject_id, variant, run_id) VALUES ($6, $1, $2, $3, $4, $5)
       ON CONFLICT (project, suite_key, subject_kind, subject_id, variant) DO UPDATE SET run_id = EXCLUDED.run_id, pinned_at = now()`,
      [pin.suite_key, pin.subject_kind, pin.subject_id, pin.variant ?? '', pin.run_id, project],
    );
  }

  async pinFor(sql: Sql, project: string, suiteKey: string, subjectKind: string, subjectId: string, variant: string | null): Promise<BaselinePin | null> {
    const rows = await sql.query(
      `SELECT suite_key, subject_kind, subject_id, variant, run_id FROM baseline_pins
       WHERE project = $5 AND suite_key = $1 AND subject_kind = $2 AND subject_id = $3 AND variant = $4`,
      [suiteKey, subjectKind, subjectId, variant ?? '', project],
    );
    return rows.length === 0 ? null : { ...rows[0], variant: rows[0].variant === '' ? null : rows[0].variant };
  }

  /**
   * `pinFor` of many keys in one query, each pin with what `find` answers for its run (issue 28: a
   * micro-batch's pins). A key with no pin is absent.
   */
  async pinsFor(sql: Sql, keys: readonly PinKey[]): Promise<PinWithRun[]> {
    if (keys.length === 0) return [];
    const rows = await sql.query(
      `SELECT p.project, p.suite_key, p.subject_kind, p.subject_id, p.variant, p.run_id,
              (SELECT row_to_json(c) FROM (SELECT ${CANDIDATE_COLUMNS} FROM run_verdicts v WHERE v.run_id = p.run_id AND v.project = p.project) c) AS pinned
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS k(project, suite_key, subject_kind, subject_id, variant)
       JOIN baseline_pins p ON p.project = k.project AND p.suite_key = k.suite_key AND p.subject_kind = k.subject_kind AND p.subject_id = k.subject_id AND p.variant = k.variant`,
      [keys.map((k) => k.project), keys.map((k) => k.suite_key), keys.map((k) => k.subject_kind), keys.map((k) => k.subject_id), keys.map((k) => k.variant ?? '')],
    );
    return rows.map((r: any) => ({ ...r, variant: r.variant === '' ? null : r.variant, pinned: r.pinned === null ? null : toRow(r.pinned) }));
  }

  async pins(sql: Sql, project: string, filter: { suite_key?: string; subject_id?: string }): Promise<BaselinePin[]> {
    const rows = await sql.query(
      `SELECT suite_key, subject_kind, subject_id, variant, run_id, to_char(pinned_at AT TIME ZONE 'UTC', ${ISO}) AS pinned_at
       FROM baseline_pins WHERE project = $3 AND ($1::text IS NULL OR suite_key = $1) AND ($2::text IS NULL OR subject_id = $2)
       ORDER BY suite_key, subject_kind, subject_id, variant`,
      [filter.suite_key ?? null, filter.subject_id ?? null, project],
    );
    return rows.map((r: any) => ({ ...r, variant: r.variant === '' ? null : r.variant }));
  }

  async addFinding(sql: Sql, project: string, finding: { finding_id: string; kind: string; run_id: string; payload: unknown; occurred_at: string }): Promise<boolean> {
    const rows = await sql.query(
      `INSERT INTO findings (finding_id, kind, run_id, payload, occurred_at, project) VALUES ($1, $2, $3, $4::jsonb, $5, $6)
       ON CONFLICT DO NOTHING RETURNING 1`,
      [finding.finding_id, finding.kind, finding.run_id, JSON.stringify(finding.payload), finding.occurred_at, project],
    );
    return rows.length === 1;
  }

  /** `addFinding` of many in one statement (issue 28: a micro-batch's findings). */
  async addFindings(sql: Sql, findings: readonly NewFinding[]): Promise<void> {
    if (findings.length === 0) return;
    await sql.query(
      `INSERT INTO findings (finding_id, kind, run_id, payload, occurred_at, project)
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::jsonb[], $5::timestamptz[], $6::text[])
       ON CONFLICT DO NOTHING`,
      [findings.map((f) => f.finding_id), findings.map((f) => f.kind), findings.map((f) => f.run_id), findings.map((f) => JSON.stringify(f.payload)), findings.map((f) => f.occurred_at), findings.map((f) => f.project)],
    );
  }

  /** Stored finding payloads of one project, newest first, optionally of one suite and subject (index `findings_project`). */
  async findings(sql: Sql, project: string, filter: { suite_key?: string; subject_id?: string; limit: number }): Promise<unknown[]> {
    const rows = await sql.query(
      `SELECT payload FROM findings
        WHERE project = $4 AND ($1::text IS NULL OR payload->>'suite' = $1) AND ($2::text IS NULL OR payload->>'subject_id' = $2)
        ORDER BY occurred_at DESC, finding_id LIMIT $3`,
      [filter.suite_key ?? null, filter.subject_id ?? null, filter.limit, project],
    );
    return rows.map((r: { payload: unknown }) => r.payload);
  }

  async findingFor(sql: Sql, project: string, runId: string): Promise<{ finding_id: string; payload: unknown } | null> {
    const rows = await sql.query(`SELECT finding_id, payload FROM findings WHERE run_id = $1 AND project = $2`, [runId, project]);
    return rows[0] ?? null;
  }
}

function toRow<T extends BaselineCandidate>(r: any): T {
  return { ...r, score: Number(r.score), pass_threshold: Number(r.pass_threshold) };
}
