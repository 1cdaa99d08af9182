import { isSafeId } from '@evals/contracts';
import { regressionView, summarizeRun, type EvalResult, type ProjectedVerdict, type RegressionView, type RunDoc, type RunStatus, type RunSummary } from '@evals/domain';
import { CaseResultRepository, type CaseResultRow, type CaseResultSource } from './case-results.repository';
import { JudgeCorrectionQueries, type RunJudgeCorrection } from './judge-correction.queries';
import { RunReadModelRepository, type VerdictFilter } from './run-read-model.repository';
import type { Sql } from './sql';
import type { DataSource } from 'typeorm';

/** One case of a run as the API shows it: never the output, nor its hash or length (D1, D2). */
export type CaseView = CaseResultRow;

/** The regression decision of a completed run (G1-G5): built from `run.compared` by libs/domain, wherever it is read. */
export type { RegressionView } from '@evals/domain';

export interface RunView {
  readonly run: RunDoc & { readonly summary: RunSummary };
  readonly eval_result: EvalResult | null;
  readonly regression: RegressionView | null;
  readonly cases?: CaseView[];
  /**
   * J4/J9 (GT6): for a completed run whose judged cases a certified scope covers, the judge-corrected pass
   * rate of those cases with its 95% interval and denominators, per scope; absent otherwise.
   */
  readonly judge_corrected_pass_rates?: RunJudgeCorrection[];
}

/** The data of an SSE `case` frame (R6). */
export type CaseFrame = Omit<CaseResultRow, 'scored_at'>;

/** The data of the closing SSE `summary` frame (R6, GT6: the rate with its denominator and interval). */
export interface SummaryFrame extends RunSummary {
  readonly run_id: string;
  readonly status: RunStatus;
  readonly suite: string;
  readonly suite_version: number;
  readonly case_count: number;
  readonly missing_outputs: number;
  /** Case frames sent before this one. */
  readonly frames: number;
}

export type SseFrame = { readonly event: 'case'; readonly data: CaseFrame } | { readonly event: 'summary'; readonly data: SummaryFrame };

/**
 * The read side of the HTTP API (docs/read-model.md). Every query runs in one READ ONLY, REPEATABLE READ
 * transaction: the document, the EvalResult and the cases come from one snapshot, and the database
 * itself refuses any write - a replay triggers nothing and writes nothing (R6).
 *
 * Every query is asked within the caller's project (issue 30, ADR 0009): a run of another project answers
 * null, exactly as a missing run, before anything of it is read.
 */
export class RunQueries {
  constructor(
    private readonly dataSource: DataSource,
    private readonly runs = new RunReadModelRepository(),
    private readonly cases = new CaseResultRepository(),
    private readonly corrections = new JudgeCorrectionQueries(cases),
  ) {}

  /** GET /v1/runs/:id; null when no such run of `project` is projected. */
  async run(project: string, runId: string, options: { includeCases?: boolean } = {}): Promise<RunView | null> {
    if (!isSafeId(runId)) return null;
    return this.readOnly(async (sql) => {
      const doc = await this.runs.find(sql, project, runId);
      if (doc === null) return null;
      return runView(sql, { doc, eval_result: await this.runs.evalResult(sql, runId), verdict: await this.runs.loadVerdict(sql, runId) }, options, this.cases, this.corrections);
    });
  }

  /**
   * GET /v1/runs/:id/events: the persisted run as SSE frames - one `case` frame per projected case, ordered by
   * case id, then one `summary` frame. For a completed run the summary is the run's aggregate; for a run
   * still open or sealed it counts exactly the case frames sent, so the stream is consistent in itself.
   */
  async replay(project: string, runId: string): Promise<SseFrame[] | null> {
    if (!isSafeId(runId)) return null;
    return this.readOnly(async (sql) => {
      const doc = await this.runs.find(sql, project, runId);
      if (doc === null) return null;
      const rows = await this.cases.forRun(sql, runId);
      const frames: SseFrame[] = rows.map((r) => ({ event: 'case', data: caseFrame(r) }));
      const counted: RunDoc =
        doc.status === 'completed'
          ? doc
          : {
              ...doc,
              scored: rows.length,
              passed: rows.filter((r) => r.passed).length,
              score_sum: rows.reduce((s, r) => s + r.score, 0),
            };
      frames.push({
        event: 'summary',
        data: {
          run_id: doc.run_id,
          status: doc.status,
          suite: doc.suite_key,
          suite_version: doc.suite_version,
          case_count: doc.case_count,
          missing_outputs: doc.missing_outputs,
          frames: rows.length,
          ...summarizeRun(counted),
        },
      });
      return frames;
    });
  }

  /**
   * J4/J9: a run's judge-corrected pass rates under today's certified scopes (the scorecard's latest run,
   * of the scorecard's project: its suite version is looked up there).
   */
  async judgeCorrections(project: string, run: { readonly run_id: string; readonly suite_key: string; readonly suite_version: number }): Promise<RunJudgeCorrection[]> {
    return this.readOnly((sql) => this.corrections.forRun(sql, { ...run, project }));
  }

  /**
   * GET /v1/scorecards: the decided runs of every suite and subject of `project` the filter selects (key order), each
   * newest first and at most `limit`, from the read model's projection of `run.compared` - one snapshot.
   */
  async decidedRuns(project: string, filter: VerdictFilter, limit: number): Promise<ProjectedVerdict[][]> {
    return this.readOnly(async (sql) => {
      const out: ProjectedVerdict[][] = [];
      for (const s of await this.runs.verdictSubjects(sql, project, filter)) {
        out.push(await this.runs.verdictHistory(sql, project, s.suite_key, s.subject_kind, s.subject_id, limit));
      }
      return out;
    });
  }

  private readOnly<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      await manager.query('SET TRANSACTION READ ONLY');
      return work(manager);
    });
  }
}

/** One SSE frame on the wire: `event: <name>`, one `data:` line of JSON, a blank line. */
export function formatSseFrame(frame: SseFrame): string {
  // JSON.stringify escapes every line break, so the data is always a single `data:` line.
  return `event: ${frame.event}\ndata: ${JSON.stringify(frame.data)}\n\n`;
}

function caseFrame(r: CaseResultRow): CaseFrame {
  return { case_id: r.case_id, scorer: r.scorer, scorer_version: r.scorer_version, score: r.score, passed: r.passed, label: r.label };
}

/**
 * A run's view from its three facts - the document, the EvalResult, the projected verdict - however they were
 * obtained (the read model's tables, or the run's stream folded by the ingestion: issue 27), with the
 * judge-corrected pass rates and, when asked, the cases. The one place a RunView is put together, so both
 * answer the same JSON for the same run.
 */
export async function runView(
  sql: Sql,
  facts: { readonly doc: RunDoc; readonly eval_result: EvalResult | null; readonly verdict: ProjectedVerdict | null },
  options: { includeCases?: boolean },
  cases: CaseResultSource,
  corrections: JudgeCorrectionQueries,
): Promise<RunView> {
  const { doc } = facts;
  const view: RunView = { run: { ...doc, summary: summarizeRun(doc) }, eval_result: facts.eval_result, regression: regressionView(facts.verdict) };
  const corrected = doc.status === 'completed' ? await corrections.forRun(sql, doc) : [];
  const withCorrection: RunView = corrected.length > 0 ? { ...view, judge_corrected_pass_rates: corrected } : view;
  if (!options.includeCases) return withCorrection;
  return { ...withCorrection, cases: await cases.forRun(sql, doc.run_id) };
}
