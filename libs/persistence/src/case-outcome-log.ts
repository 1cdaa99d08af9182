import { caseOutcomesOf, decodeRunEvent, type CaseOutcome } from '@evals/domain';
import type { CaseResultRow, CaseResultSource, JudgedCaseRow } from './case-results.repository';
import type { Sql } from './sql';

/**
 * A run's per-case results folded on demand from its `cases.scored` events in the shared log (issue 27, ADR
 * 0006): how the regression app learns which cases two runs scored and passed, and the judge pin, without
 * reading the worker's evidence. One index lookup (the partial index `events_cases_scored_run`), not a
 * join: its plan does not depend on statistics that have not seen the run yet (issue 15).
 */
export class CaseOutcomeLog {
  /**
   * Every case of the run once, in log order: the first result of a case is its evidence (the evidence key
   * keeps the first row), a later one a backfill repeating a v1 result. `invalid` counts events the codec
   * refused - never written by a healthy worker; the caller says so.
   */
  async forRun(sql: Sql, runId: string): Promise<{ outcomes: CaseOutcome[]; invalid: number }> {
    return (await this.forRuns(sql, [runId])).get(runId)!;
  }

  /** `forRun` of many runs in one query (issue 28: the runs of a micro-batch); every run asked for has an entry. */
  async forRuns(sql: Sql, runIds: readonly string[]): Promise<Map<string, { outcomes: CaseOutcome[]; invalid: number }>> {
    const found = new Map(runIds.map((runId) => [runId, { outcomes: [] as CaseOutcome[], invalid: 0, seen: new Set<string>() }]));
    if (runIds.length === 0) return found;
    // v2 events carry counts only; the backfill wrote their rows' results as v3.
    const rows: Array<{ type: string; version: number; data: unknown; occurred_at: string; run_id: string }> = await sql.query(
      `SELECT type, version, data, metadata->>'occurred_at' AS occurred_at, data->>'run_id' AS run_id FROM events
       WHERE type = 'cases.scored' AND data->>'run_id' = ANY($1::text[]) AND version <> 2 ORDER BY position`,
      [[...found.keys()]],
    );
    for (const { run_id: runId, ...row } of rows) {
      const run = found.get(runId)!;
      const decoded = decodeRunEvent(row);
      if (!decoded.ok || decoded.event.type !== 'cases.scored' || decoded.event.data.run_id !== runId) {
        run.invalid++;
        continue;
      }
      for (const o of caseOutcomesOf(decoded.event, row.occurred_at)) {
        if (run.seen.has(o.case_id)) continue;
        run.seen.add(o.case_id);
        run.outcomes.push(o);
      }
    }
    return new Map([...found].map(([runId, { outcomes, invalid }]) => [runId, { outcomes, invalid }]));
  }
}

/**
 * A run's cases as a run view shows them, folded from the log (issue 27): what the ingestion's gate and
 * `POST /v1/runs` answer with, so it reads no table of the read model. The same rows, in the same order, as
 * the read model's `read_case_results` (verdicts.int-spec.ts compares the two views).
 */
export class LoggedCaseResults implements CaseResultSource {
  constructor(private readonly log = new CaseOutcomeLog()) {}

  async forRun(sql: Sql, runId: string): Promise<CaseResultRow[]> {
    const { outcomes } = await this.log.forRun(sql, runId);
    return byCaseId(outcomes).map(({ judge_model: _model, prompt_version: _prompt, ...row }) => ({ ...row, scored_at: new Date(row.scored_at).toISOString() }));
  }

  async judged(sql: Sql, runId: string): Promise<JudgedCaseRow[]> {
    const { outcomes } = await this.log.forRun(sql, runId);
    return byCaseId(outcomes)
      .filter((o) => o.scorer === 'llm_judge' && o.judge_model != null && o.prompt_version != null)
      .map((o) => ({ case_id: o.case_id, passed: o.passed, judge_model: o.judge_model!, prompt_version: o.prompt_version! }));
  }
}

/** Case id order as PostgreSQL sorts text in the C collation the read model's ORDER BY uses: by code unit. */
function byCaseId(outcomes: readonly CaseOutcome[]): CaseOutcome[] {
  return [...outcomes].sort((a, b) => (a.case_id < b.case_id ? -1 : a.case_id > b.case_id ? 1 : 0));
}
