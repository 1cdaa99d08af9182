import type { Sql } from './sql';

/**
 * Transaction-scoped advisory locks on runs (released at commit or rollback). Scoring transactions take the
 * run's lock in shared mode, so any number of them run side by side; the sealing transaction takes it
 * exclusively, so no evidence row of a run can be written while - or after - its aggregate is computed
 * (docs/pipeline.md step 2). The key is a hash of the run id in a key space of our own; a collision only
 * makes two runs wait for each other, never wrong.
 */
const RUN_LOCK_SPACE = 72_430_002;

export class RunLocks {
  /** Locks every run in shared mode, in one fixed (key) order, so scoring transactions never deadlock. */
  shared(sql: Sql, runIds: readonly string[]): Promise<void> {
    return lockAll(sql, 'pg_advisory_xact_lock_shared', runIds);
  }

  async exclusive(sql: Sql, runId: string): Promise<void> {
    await sql.query(`SELECT pg_advisory_xact_lock(${RUN_LOCK_SPACE}, hashtext($1))`, [runId]);
  }

  /** Locks every run exclusively in one statement, in the same key order as `shared`, so seals of many runs never deadlock. */
  exclusiveAll(sql: Sql, runIds: readonly string[]): Promise<void> {
    return lockAll(sql, 'pg_advisory_xact_lock', runIds);
  }
}

async function lockAll(sql: Sql, lock: 'pg_advisory_xact_lock' | 'pg_advisory_xact_lock_shared', runIds: readonly string[]): Promise<void> {
  if (runIds.length === 0) return;
  await sql.query(
    `SELECT ${lock}(${RUN_LOCK_SPACE}, k)
     FROM (SELECT DISTINCT hashtext(r) AS k FROM unnest($1::text[]) AS r ORDER BY k) AS keys`,
    [runIds],
  );
}
