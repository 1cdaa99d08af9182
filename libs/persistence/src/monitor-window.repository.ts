import type { Sql } from './sql';

export interface MonitorWindowRow {
  readonly run_id: string;
  readonly suite_key: string;
  readonly subject_kind: string;
  readonly subject_id: string;
  readonly window_start: string;
  readonly window_end: string;
}

/**
 * Open and closed monitor windows (D3). Mutable bookkeeping: the evidence itself is append-only elsewhere.
 * A window is its project's (issue 30); its run id is unique across the service (the monitor names it by the
 * project), and a run id of another project's window is never counted in this one's.
 */
export class MonitorWindowRepository {
  /** Records a signal in its window; returns 'sealed' when the window has closed already (a late signal). */
  async admit(sql: Sql, project: string, row: MonitorWindowRow): Promise<'open' | 'sealed'> {
    const rows = await sql.query(
      `INSERT INTO monitor_windows (project, run_id, suite_key, subject_kind, subject_id, window_start, window_end, signals)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 1)
       ON CONFLICT (run_id) DO UPDATE SET signals = monitor_windows.signals + 1 WHERE monitor_windows.project = EXCLUDED.project
       RETURNING sealed_at`,
      [project, row.run_id, row.suite_key, row.subject_kind, row.subject_id, row.window_start, row.window_end],
    );
    // No row: the id is another project's window (not reachable by the monitor's ids); it takes no signal of this one.
    if (rows.length === 0) throw new Error('monitor window: the run id is another project\'s window');
    return rows[0].sealed_at === null ? 'open' : 'sealed';
  }

  /**
   * Claims windows whose end plus grace has passed, marks them sealed, and hands their run ids (with each
   * window's project) to `seal` inside the same transaction: a seal that fails leaves the window open for the
   * next sweep, and SKIP LOCKED lets several ingestion processes sweep side by side. Every project's windows:
   * closing them is the system's, not a request's.
   */
  async sweep(sql: { transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> }, graceSeconds: number, seal: (runId: string, project: string) => Promise<void>, limit = 100): Promise<string[]> {
    return sql.transaction(async (tx) => {
      const due: Array<{ run_id: string; project: string }> = await tx.query(
        `SELECT run_id, project FROM monitor_windows WHERE sealed_at IS NULL AND window_end + make_interval(secs => $1) <= now()
         ORDER BY window_end LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [graceSeconds, limit],
      );
      for (const { run_id, project } of due) await seal(run_id, project);
      if (due.length > 0) await tx.query(`UPDATE monitor_windows SET sealed_at = now() WHERE run_id = ANY($1::text[])`, [due.map((d) => d.run_id)]);
      return due.map((d) => d.run_id);
    });
  }
}
