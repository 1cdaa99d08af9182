import type { Sql } from './sql';

/**
 * R7: runs opened before `cutoff` whose stream holds no `run.sealed` - the candidates of the expiry sweep.
 * Monitor windows (`source = session_sample`) are left out: they close by their own window and grace. The
 * model decides again with its own clock whether each one is due; this only narrows the search.
 */
export class RunExpiryQueries {
  async openBefore(sql: Sql, cutoff: string, limit: number): Promise<string[]> {
    const rows: Array<{ run_id: string }> = await sql.query(
      `SELECT o.data->>'run_id' AS run_id
         FROM events o
        WHERE o.type = 'run.opened'
          AND (o.metadata->>'occurred_at')::timestamptz < $1::timestamptz
          AND o.data->>'source' <> 'session_sample'
          AND NOT EXISTS (SELECT 1 FROM events s WHERE s.stream_id = o.stream_id AND s.type = 'run.sealed')
        ORDER BY o.position
        LIMIT $2`,
      [cutoff, limit],
    );
    return rows.map((r) => r.run_id);
  }

  /**
   * Runs sealed before `cutoff` that were never scored: their seal message was lost (a crash between the
   * append and the publish, a bus that failed then) and nobody retried. The sweep hands the seal to the
   * workers again; a worker that already scored the run does nothing.
   */
  async sealedNotScoredBefore(sql: Sql, cutoff: string, limit: number): Promise<string[]> {
    const rows: Array<{ run_id: string }> = await sql.query(
      `SELECT s.data->>'run_id' AS run_id
         FROM events s
        WHERE s.type = 'run.sealed'
          AND (s.metadata->>'occurred_at')::timestamptz < $1::timestamptz
          AND NOT EXISTS (SELECT 1 FROM events d WHERE d.stream_id = s.stream_id AND d.type = 'run.scored')
        ORDER BY s.position
        LIMIT $2`,
      [cutoff, limit],
    );
    return rows.map((r) => r.run_id);
  }
}
