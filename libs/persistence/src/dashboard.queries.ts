import { isSafeId } from '@evals/contracts';
import { summarizeRun, type RunDoc, type RunStatus, type RunSummary } from '@evals/domain';
import { CaseResultRepository } from './case-results.repository';
import { JudgeStatusRepository, type JudgeStatus } from './judge-status.repository';
import type { CaseView } from './run.queries';
import type { Sql } from './sql';
import type { DataSource } from 'typeorm';

const ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

/** Filters of the dashboard's runs list (docs/dashboard.md); each one optional. */
export interface RunListFilter {
  readonly suite_key?: string;
  readonly subject_kind?: string;
  readonly subject_id?: string;
  readonly variant?: string;
  /** A regression verdict (`regressed`, `inconclusive_noise`, `no_regression`, `no_baseline`) or `undecided`. */
  readonly verdict?: string;
  readonly status?: RunStatus;
}

/** One row of the runs list: the run's summary (rate, denominator, 95% interval) and its verdict, if decided. */
export interface RunListItem {
  readonly run_id: string;
  readonly suite_key: string;
  readonly suite_version: number;
  readonly subject_kind: string;
  readonly subject_id: string;
  readonly variant: string | null;
  readonly status: RunStatus;
  readonly case_count: number;
  readonly opened_at: string;
  readonly completed_at: string | null;
  readonly summary: RunSummary;
  readonly verdict: string | null;
  readonly baseline_run_id: string | null;
  readonly completeness: string | null;
}

export interface Page<T> {
  readonly items: T[];
  readonly total: number;
  readonly offset: number;
  readonly limit: number;
}

export interface CasePageFilter {
  /** true: passed cases only; false: failed only. */
  readonly passed?: boolean;
}

/**
 * The read model's list views for the dashboard (issue 17): runs with their verdicts, a run's cases a page
 * at a time (a 10 000-case run is never sent whole to draw its first page). Read-only snapshots, like
 * RunQueries; labels and scores only, never an output (D1).
 */
export class DashboardQueries {
  constructor(
    private readonly dataSource: DataSource,
    private readonly caseResults = new CaseResultRepository(),
  ) {}

  /** The runs of `project` only (issue 30): another project's runs are neither listed nor counted. */
  async runs(project: string, filter: RunListFilter, offset: number, limit: number): Promise<Page<RunListItem>> {
    const params: unknown[] = [project];
    const where: string[] = ['r.project = $1'];
    const eq = (column: string, value: string | undefined) => {
      if (value === undefined) return;
      params.push(value);
      where.push(`${column} = $${params.length}`);
    };
    eq('r.suite_key', filter.suite_key);
    eq('r.subject_kind', filter.subject_kind);
    eq('r.subject_id', filter.subject_id);
    eq('r.variant', filter.variant);
    eq('r.status', filter.status);
    if (filter.verdict === 'undecided') where.push('v.run_id IS NULL');
    else eq('v.verdict', filter.verdict);
    const clause = `WHERE ${where.join(' AND ')}`;
    return this.readOnly(async (sql) => {
      const [count] = await sql.query(`SELECT count(*)::int AS n FROM runs r LEFT JOIN read_run_verdicts v ON v.run_id = r.run_id ${clause}`, params);
      const rows: Array<{ doc: RunDoc; verdict: string | null; baseline_run_id: string | null; completeness: string | null }> = await sql.query(
        `SELECT r.doc, v.verdict, v.baseline_run_id, v.completeness FROM runs r LEFT JOIN read_run_verdicts v ON v.run_id = r.run_id ${clause}
         ORDER BY r.opened_at DESC, r.run_id DESC OFFSET $${params.length + 1} LIMIT $${params.length + 2}`,
        [...params, offset, limit],
      );
      const items = rows.map(({ doc, verdict, baseline_run_id, completeness }) => ({
        run_id: doc.run_id,
        suite_key: doc.suite_key,
        suite_version: doc.suite_version,
        subject_kind: doc.subject_kind,
        subject_id: doc.subject_id,
        variant: doc.variant ?? null,
        status: doc.status,
        case_count: doc.case_count,
        opened_at: doc.opened_at,
        completed_at: doc.completed_at,
        summary: summarizeRun(doc),
        verdict,
        baseline_run_id,
        completeness,
      }));
      return { items, total: count.n, offset, limit };
    });
  }

  /** A run's cases ordered by case id, a page at a time; null when no run of `project` has that id. */
  async cases(project: string, runId: string, filter: CasePageFilter, offset: number, limit: number): Promise<Page<CaseView> | null> {
    if (!isSafeId(runId)) return null;
    return this.readOnly(async (sql) => {
      const [run] = await sql.query(`SELECT 1 FROM runs WHERE run_id = $1 AND project = $2`, [runId, project]);
      if (!run) return null;
      const { items, total } = await this.caseResults.page(sql, runId, filter.passed, offset, limit);
      return { items, total, offset, limit };
    });
  }

  private readOnly<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      await manager.query('SET TRANSACTION READ ONLY');
      return work(manager);
    });
  }
}

/** One recorded gate in the ingestion app's list (GT5): both verdicts and how many overrides it had. */
export interface GateListItem {
  readonly gate_id: string;
  readonly run_id: string;
  readonly kind: string;
  readonly suite_key: string | null;
  readonly subject_id: string | null;
  readonly recorded_verdict: 'pass' | 'fail';
  readonly effective_verdict: 'pass' | 'fail';
  readonly reasons: string[];
  readonly warnings: string[];
  readonly overrides: number;
  readonly recorded_at: string;
}

/** Recorded gates of one project, newest first (the ingestion app's `GET /v1/gates`; issue 30). */
export class GateListQueries {
  async list(sql: Sql, project: string, filter: { run_id?: readonly string[] }, offset: number, limit: number): Promise<Page<GateListItem>> {
    const params: unknown[] = [project];
    let clause = 'WHERE g.project = $1';
    if (filter.run_id && filter.run_id.length) {
      params.push(filter.run_id);
      clause += ` AND g.run_id = ANY($2::text[])`;
    }
    const [count] = await sql.query(`SELECT count(*)::int AS n FROM gate_verdicts g ${clause}`, params);
    // The effective verdict is the last override's `after` (overrides only ever pass a failed gate, GT5).
    const rows = await sql.query(
      `SELECT g.gate_id, g.run_id, g.recorded_verdict, g.report, to_char(g.recorded_at AT TIME ZONE 'UTC', ${ISO}) AS recorded_at,
              (SELECT count(*)::int FROM gate_overrides o WHERE o.gate_id = g.gate_id) AS overrides,
              (SELECT o.after FROM gate_overrides o WHERE o.gate_id = g.gate_id ORDER BY o.id DESC LIMIT 1) AS last_after
       FROM gate_verdicts g ${clause} ORDER BY g.recorded_at DESC, g.gate_id DESC OFFSET $${params.length + 1} LIMIT $${params.length + 2}`,
      [...params, offset, limit],
    );
    const codes = (list: unknown): string[] => (Array.isArray(list) ? list.map((r) => String((r as { code?: unknown })?.code ?? '')) : []);
    const items: GateListItem[] = rows.map((r: Record<string, any>) => {
      const report = (r.report ?? {}) as Record<string, any>;
      return {
        gate_id: r.gate_id,
        run_id: r.run_id,
        kind: report.kind === 'family' ? 'family' : 'suite',
        suite_key: report.run?.suite_key ?? null,
        subject_id: report.subject?.id ?? report.run?.subject_id ?? null,
        recorded_verdict: r.recorded_verdict,
        effective_verdict: r.last_after ?? r.recorded_verdict,
        reasons: codes(report.reasons),
        warnings: codes(report.warnings),
        overrides: r.overrides,
        recorded_at: r.recorded_at,
      };
    });
    return { items, total: count.n, offset, limit };
  }
}

/**
 * One calibrated scope of a judge pin (J4): the status of the scope's latest measured report, the name of the
 * set it was measured on, and that report's verbosity correlations.
 */
export type JudgePinStatus = JudgeStatus & { readonly set_name: string | null; readonly verbosity_bias: unknown };

/**
 * Every calibrated scope of every judge pin (J4, issue 13): one row per model pin + prompt version + scope
 * (`rubric:<sha256>` or `suite:<key>`), each by the latest measured report of that scope - the same reports the
 * gate trusts (`JudgeStatusRepository.scopes`), so a pin certified on one rubric and failing on another shows
 * both. A pin with no measured scope (only refused sets, reports from before scopes, or just configured) gets
 * one `uncalibrated` row with scope null. Issue 30: of one project - its reports, its standing (ADR 0009).
 */
export class JudgePinQueries {
  constructor(private readonly status = new JudgeStatusRepository()) {}

  async list(sql: Sql, project: string, also: ReadonlyArray<{ judge_model: string; prompt_version: string }> = []): Promise<JudgePinStatus[]> {
    const pins: Array<{ judge_model: string; prompt_version: string }> = await sql.query(
      `SELECT DISTINCT judge_model, prompt_version FROM calibration_reports WHERE project = $1 ORDER BY judge_model, prompt_version LIMIT 500`,
      [project],
    );
    for (const p of also) if (!pins.some((q) => q.judge_model === p.judge_model && q.prompt_version === p.prompt_version)) pins.push({ judge_model: p.judge_model, prompt_version: p.prompt_version });
    const scopes: JudgeStatus[] = [];
    for (const p of pins) {
      const measured = await this.status.scopes(sql, project, p.judge_model, p.prompt_version);
      // No measured scope means no measured report at all: `status` answers `uncalibrated`, scope null.
      scopes.push(...(measured.length > 0 ? measured : [await this.status.status(sql, project, p.judge_model, p.prompt_version)]));
    }
    const ids = scopes.map((s) => s.report_id).filter((id): id is string => id !== null);
    const extras: Array<{ id: string; set_name: string; verbosity_bias: unknown }> = ids.length
      ? await sql.query(
          `SELECT r.id, s.name AS set_name, r.report->'verbosity_bias' AS verbosity_bias
           FROM calibration_reports r JOIN calibration_sets s ON s.id = r.set_id WHERE r.id = ANY($1::uuid[]) AND r.project = $2`,
          [ids, project],
        )
      : [];
    const byId = new Map(extras.map((e) => [e.id, e]));
    return scopes.map((s) => ({ ...s, set_name: (s.report_id && byId.get(s.report_id)?.set_name) || null, verbosity_bias: (s.report_id && byId.get(s.report_id)?.verbosity_bias) ?? null }));
  }
}
