import { copyRows, type CopyColumn } from './copy-rows';
import type { Sql } from './sql';

/** One row of per-case evidence (R3, D2): never the output - its keyed hash and length at most. */
export interface EvidenceRow {
  readonly run_id: string;
  readonly case_id: string;
  readonly scorer: string;
  readonly scorer_version: string;
  readonly score: number;
  readonly passed: boolean;
  readonly label: string;
  readonly detail_hash: string | null;
  readonly output_chars: number | null;
  readonly scored_at: string;
}

export interface EvidenceAggregate {
  readonly n: number;
  readonly passed: number;
  readonly score_sum: number;
}

/** A run's evidence as a seal reads it: the cases that have a row, and the aggregate of those rows. */
export interface EvidenceSummary extends EvidenceAggregate {
  readonly case_ids: ReadonlySet<string>;
}

/** One column of an evidence insert: its name, its PostgreSQL type, and its value in a row. */
export type EvidenceColumn<R> = CopyColumn<R>;

/** The columns every evidence row has; JudgeEvidenceRepository adds the judge's. */
export const EVIDENCE_COLUMNS: ReadonlyArray<EvidenceColumn<EvidenceRow>> = [
  { name: 'run_id', type: 'text', value: (r) => r.run_id },
  { name: 'case_id', type: 'text', value: (r) => r.case_id },
  { name: 'scorer', type: 'text', value: (r) => r.scorer },
  { name: 'scorer_version', type: 'text', value: (r) => r.scorer_version },
  { name: 'score', type: 'float8', value: (r) => r.score },
  { name: 'passed', type: 'bool', value: (r) => r.passed },
  { name: 'label', type: 'varchar(120)', value: (r) => r.label },
  { name: 'detail_hash', type: 'text', value: (r) => r.detail_hash },
  { name: 'output_chars', type: 'int', value: (r) => r.output_chars },
  { name: 'scored_at', type: 'timestamptz', value: (r) => r.scored_at },
];

/**
 * Evidence is append-only (the database refuses UPDATE/DELETE). A batch insert skips the cases a run
 * already has and returns the ones it actually wrote, so a redelivered batch writes - and announces -
 * nothing twice.
 *
 * A batch of some size, in a transaction, goes first by COPY (copy-rows.ts): all or nothing behind a
 * savepoint, so a batch whose every case is new - nearly every batch - is written at COPY's cost (PGlite:
 * about a third of the statement's, issue 15). When a case is already there the COPY writes nothing and the
 * statement below writes the batch. The statement keeps the cost per case low too: the rows travel as ONE
 * json text parameter, expanded server side by `json_to_recordset`. It replaced one typed array per column
 * (`unnest($1::text[], ...)`), whose array literals `pg` escapes element by element in JavaScript;
 * `JSON.stringify` is native, and `bench/evidence` measures all three on PostgreSQL and PGlite. A row that is
 * not valid for a column (a NaN score, which JSON spells null) is refused by the column's NOT NULL, either way.
 */
export async function insertEvidence<R extends EvidenceRow>(sql: Sql, rows: readonly R[], columns: ReadonlyArray<EvidenceColumn<R>>): Promise<R[]> {
  if (rows.length === 0) return [];
  if (await copyRows(sql, 'evidence', rows, columns)) return [...rows];
  const names = columns.map((c) => c.name).join(', ');
  // Read as the base type and cast explicitly, as the array casts did (an explicit cast to varchar(n) clamps).
  const casts = columns.map((c) => `${c.name}::${c.type}`).join(', ');
  const record = columns.map((c) => `${c.name} ${c.type.replace(/\(.*\)$/, '')}`).join(', ');
  const records = new Array<Record<string, unknown>>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const one: Record<string, unknown> = {};
    for (const c of columns) one[c.name] = c.value(rows[i]);
    records[i] = one;
  }
  const inserted: Array<{ run_id: string; case_id: string }> = await sql.query(
    `INSERT INTO evidence (${names})
     SELECT ${casts} FROM json_to_recordset($1::json) AS t(${record})
     ON CONFLICT (run_id, case_id) DO NOTHING
     RETURNING run_id, case_id`,
    [JSON.stringify(records)],
  );
  if (inserted.length === rows.length) return [...rows];
  // Keyed by run and case: one batch may hold two runs of the same suite. Each key once: of two rows for one
  // case in the batch, the first is the one written (the second met the first's key).
  const written = new Set(inserted.map((r) => `${r.run_id}\u0000${r.case_id}`));
  return rows.filter((r) => written.delete(`${r.run_id}\u0000${r.case_id}`));
}

export class EvidenceRepository {
  insertBatch(sql: Sql, rows: readonly EvidenceRow[]): Promise<EvidenceRow[]> {
    return insertEvidence(sql, rows, EVIDENCE_COLUMNS);
  }

  async aggregate(sql: Sql, runId: string): Promise<EvidenceAggregate> {
    const [row] = await sql.query(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE passed)::int AS passed, coalesce(sum(score), 0)::float8 AS score_sum
       FROM evidence WHERE run_id = $1`,
      [runId],
    );
    return { n: row.n, passed: row.passed, score_sum: Number(row.score_sum) };
  }

  /**
   * Of each run, in one query: the cases that have evidence and their aggregate - what a seal reads. One scan
   * of the runs' rows, where a query for the case ids and another for the aggregates read them twice (issue
   * 28: those two were the seal's costliest statements). A run without evidence has no cases and counts zero.
   * The scores are summed in case order: a float sum depends on its order, and the order rows are read in
   * depends on the plan and on where they lie (a seal inside another transaction read them one ulp apart, in
   * an experiment of issue 28). In case order a run's `score_sum` has the same bits however it is read.
   */
  async summaries(sql: Sql, runIds: readonly string[]): Promise<Map<string, EvidenceSummary>> {
    const found = new Map<string, EvidenceSummary>(runIds.map((id) => [id, { case_ids: new Set<string>(), n: 0, passed: 0, score_sum: 0 }]));
    if (runIds.length === 0) return found;
    const rows: Array<{ run_id: string; case_ids: string[]; n: number; passed: number; score_sum: string | number }> = await sql.query(
      `SELECT run_id, array_agg(case_id) AS case_ids, count(*)::int AS n, count(*) FILTER (WHERE passed)::int AS passed,
              coalesce(sum(score ORDER BY case_id), 0)::float8 AS score_sum
       FROM evidence WHERE run_id = ANY($1::text[]) GROUP BY run_id`,
      [[...new Set(runIds)]],
    );
    for (const r of rows) found.set(r.run_id, { case_ids: new Set(r.case_ids), n: r.n, passed: r.passed, score_sum: Number(r.score_sum) });
    return found;
  }

  async caseIds(sql: Sql, runId: string): Promise<Set<string>> {
    const rows: Array<{ case_id: string }> = await sql.query(`SELECT case_id FROM evidence WHERE run_id = $1`, [runId]);
    return new Set(rows.map((r) => r.case_id));
  }

  /**
   * The stored `detail_hash` of each of these cases of a run that has evidence; null for a row written
   * without an output (R1 `missing_output`). Cases with no evidence are absent. Lets the scoring worker tell
   * a redelivered output (the same hash) from a second, different output for the case.
   */
  async detailHashes(sql: Sql, runId: string, caseIds: readonly string[]): Promise<Map<string, string | null>> {
    if (caseIds.length === 0) return new Map();
    const rows: Array<{ case_id: string; detail_hash: string | null }> = await sql.query(
      `SELECT case_id, detail_hash FROM evidence WHERE run_id = $1 AND case_id = ANY($2::text[])`,
      [runId, [...caseIds]],
    );
    return new Map(rows.map((r) => [r.case_id, r.detail_hash]));
  }

  async forRun(sql: Sql, runId: string): Promise<EvidenceRow[]> {
    const rows = await sql.query(
      `SELECT e.run_id, e.case_id, e.scorer, e.scorer_version, e.score, e.passed, e.label, e.detail_hash, e.output_chars,
              to_char(e.scored_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS scored_at
       FROM evidence e WHERE e.run_id = $1 ORDER BY e.case_id`,
      [runId],
    );
    return rows.map((r: any) => ({ ...r, score: Number(r.score) }));
  }
}

export interface DeadLetter {
  readonly subject: string;
  readonly code: string;
  /** Field names and constraint names only; never a payload value (D1). */
  readonly reason: string;
  readonly message_id?: string | null;
  readonly stream_seq?: number | null;
  /** An output refused inside a batch message (issue 28): its position in the batch, and its case id when well-formed. */
  readonly item_index?: number | null;
  readonly case_id?: string | null;
}

export class DeadLetterRepository {
  async add(sql: Sql, letters: readonly DeadLetter[]): Promise<void> {
    if (letters.length === 0) return;
    await sql.query(
      `INSERT INTO dead_letters (subject, code, reason, message_id, stream_seq, item_index, case_id)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::int[], $7::text[])
       ON CONFLICT (subject, stream_seq, (coalesce(item_index, -1))) WHERE stream_seq IS NOT NULL DO NOTHING`,
      [
        letters.map((l) => l.subject),
        letters.map((l) => l.code),
        letters.map((l) => l.reason.slice(0, 1000)),
        letters.map((l) => l.message_id ?? null),
        letters.map((l) => l.stream_seq ?? null),
        letters.map((l) => l.item_index ?? null),
        letters.map((l) => l.case_id ?? null),
      ],
    );
  }

  async list(sql: Sql, limit = 100): Promise<Array<DeadLetter & { id: number; received_at: string }>> {
    const rows = await sql.query(
      `SELECT id, subject, code, reason, message_id, stream_seq, item_index, case_id, received_at FROM dead_letters ORDER BY id DESC LIMIT $1`,
      [limit],
    );
    return rows.map((r: any) => ({ ...r, id: Number(r.id), stream_seq: r.stream_seq === null ? null : Number(r.stream_seq) }));
  }
}
