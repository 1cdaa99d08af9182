import type { RunJudgeStabilityV1, RunJudgeUsageV1 } from '@evals/domain';
import { EVIDENCE_COLUMNS, insertEvidence, type EvidenceColumn, type EvidenceRow } from './evidence.repository';
import type { Sql } from './sql';

/** The judge columns of an evidence row (J1, J2, J6): the pin, the prompt version, tokens, cost, cache use. */
export interface JudgeEvidenceColumns {
  readonly judge_model: string;
  readonly prompt_version: string;
  readonly judge_cost_usd: number;
  readonly judge_input_tokens: number;
  readonly judge_output_tokens: number;
  /** true: cache hit; false: looked up and missed; null: the cache was not used. */
  readonly judge_cached: boolean | null;
  /** `repeats: k` cases (issue 13): k and the passing votes; absent (null in the table) for a single call. */
  readonly judge_repeats?: number;
  readonly judge_pass_votes?: number;
}

export interface JudgedEvidenceRow extends EvidenceRow {
  readonly judge: JudgeEvidenceColumns;
}

const JUDGED_COLUMNS: ReadonlyArray<EvidenceColumn<JudgedEvidenceRow>> = [
  ...EVIDENCE_COLUMNS,
  { name: 'judge_model', type: 'text', value: (r) => r.judge.judge_model },
  { name: 'prompt_version', type: 'text', value: (r) => r.judge.prompt_version },
  { name: 'judge_cost_usd', type: 'float8', value: (r) => r.judge.judge_cost_usd },
  { name: 'judge_input_tokens', type: 'int', value: (r) => r.judge.judge_input_tokens },
  { name: 'judge_output_tokens', type: 'int', value: (r) => r.judge.judge_output_tokens },
  { name: 'judge_cached', type: 'bool', value: (r) => r.judge.judge_cached },
  { name: 'judge_repeats', type: 'int2', value: (r) => r.judge.judge_repeats ?? null },
  { name: 'judge_pass_votes', type: 'int2', value: (r) => r.judge.judge_pass_votes ?? null },
];

/** The judge usage of one run, summed from its `llm_judge` evidence: exactly what `run.scored` carries. */
export type RunJudgeUsage = RunJudgeUsageV1;

/** Error labels of a judge call that was made (or attempted on the wire). */
const CALL_ERRORS = ['judge_unparseable', 'judge_timeout', 'judge_rate_limited', 'judge_unavailable'];

/**
 * Evidence of judged cases (S3). Same table, same append-only rules and the same `ON CONFLICT DO NOTHING`
 * as EvidenceRepository, plus the judge columns. Also the per-run judge summary (`run.scored.judge`); the
 * judge pin of a run reaches the regression app in its cases.scored v3 events (G4, issue 27).
 */
export class JudgeEvidenceRepository {
  /** Inserts judged rows; returns those actually written (a redelivered batch writes nothing twice). */
  insertBatch(sql: Sql, rows: readonly JudgedEvidenceRow[]): Promise<JudgedEvidenceRow[]> {
    return insertEvidence(sql, rows, JUDGED_COLUMNS);
  }

  /** Which of these cases of a run already have evidence (so a redelivered output is not judged - and paid - again). */
  async existing(sql: Sql, runId: string, caseIds: readonly string[]): Promise<Set<string>> {
    if (caseIds.length === 0) return new Set();
    const rows: Array<{ case_id: string }> = await sql.query(`SELECT case_id FROM evidence WHERE run_id = $1 AND case_id = ANY($2::text[])`, [runId, [...caseIds]]);
    return new Set(rows.map((r) => r.case_id));
  }

  /** The run's judge summary, or null when it has no `llm_judge` case with an output. */
  async runUsage(sql: Sql, runId: string): Promise<RunJudgeUsage | null> {
    const [row] = await sql.query(
      `SELECT count(*)::int AS cases,
              coalesce(sum(coalesce(judge_repeats, 1)) FILTER (WHERE judge_model IS NOT NULL AND judge_cached IS NOT TRUE AND label <> 'judge_credential_missing'), 0)::int AS calls,
              count(*) FILTER (WHERE label = ANY($2::text[]))::int AS errors,
              count(*) FILTER (WHERE label = 'judge_credential_missing')::int AS credential_missing,
              count(*) FILTER (WHERE label = 'judge_not_configured')::int AS not_configured,
              count(*) FILTER (WHERE judge_model IS NULL AND label <> 'judge_not_configured')::int AS skipped,
              count(*) FILTER (WHERE judge_cached IS TRUE)::int AS cache_hits,
              count(*) FILTER (WHERE judge_cached IS FALSE)::int AS cache_misses,
              coalesce(sum(judge_input_tokens), 0)::bigint AS input_tokens,
              coalesce(sum(judge_output_tokens), 0)::bigint AS output_tokens,
              coalesce(sum(judge_cost_usd), 0)::float8 AS cost_usd,
              min(judge_model) AS model,
              min(prompt_version) AS prompt_version
       FROM evidence WHERE run_id = $1 AND scorer = 'llm_judge' AND label <> 'missing_output'`,
      [runId, CALL_ERRORS],
    );
    if (!row || row.cases === 0) return null;
    return {
      cases: row.cases,
      calls: row.calls,
      errors: row.errors,
      credential_missing: row.credential_missing,
      not_configured: row.not_configured,
      skipped: row.skipped,
      cache_hits: row.cache_hits,
      cache_misses: row.cache_misses,
      input_tokens: Number(row.input_tokens),
      output_tokens: Number(row.output_tokens),
      cost_usd: Number(row.cost_usd),
      model: row.model ?? null,
      prompt_version: row.prompt_version ?? null,
    };
  }

  /**
   * The run's verdict stability counts (issue 13), from its cases judged with `repeats`: how many, how many
   * had k agreeing votes, and the unstable ones by id (case order, at most `limit`). Null when none was.
   */
  async runStability(sql: Sql, runId: string, limit: number): Promise<RunJudgeStabilityV1 | null> {
    const [row] = await sql.query(
      `SELECT count(*)::int AS cases,
              count(*) FILTER (WHERE judge_pass_votes = 0 OR judge_pass_votes = judge_repeats)::int AS stable,
              coalesce(max(judge_repeats), 0)::int AS repeats
       FROM evidence WHERE run_id = $1 AND scorer = 'llm_judge' AND judge_repeats IS NOT NULL`,
      [runId],
    );
    if (!row || row.cases === 0) return null;
    const unstable: Array<{ case_id: string }> = await sql.query(
      `SELECT case_id FROM evidence
       WHERE run_id = $1 AND scorer = 'llm_judge' AND judge_repeats IS NOT NULL AND judge_pass_votes <> 0 AND judge_pass_votes <> judge_repeats
       ORDER BY case_id LIMIT $2`,
      [runId, limit],
    );
    return { repeats: row.repeats, cases: row.cases, stable: row.stable, unstable_case_ids: unstable.map((r) => r.case_id) };
  }
}
