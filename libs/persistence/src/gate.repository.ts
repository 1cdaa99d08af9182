import type { Sql } from './sql';

export interface GateOverrideRow {
  readonly actor_key_id: string;
  readonly actor_name: string;
  readonly reason: string;
  readonly before: 'pass' | 'fail';
  readonly after: 'pass' | 'fail';
  readonly at: string;
}

const ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

/**
 * Recorded gate verdicts and their override audit (GT5): both append-only. A gate is its project's (issue 30):
 * found only in it, and overridden only through it - an override row names no project of its own, it
 * follows its gate's.
 */
export class GateRepository {
  async record(sql: Sql, project: string, gate: { gate_id: string; run_id: string; recorded_verdict: 'pass' | 'fail'; report: unknown; recorded_at: string }): Promise<void> {
    await sql.query(`INSERT INTO gate_verdicts (project, gate_id, run_id, recorded_verdict, report, recorded_at) VALUES ($1, $2, $3, $4, $5::jsonb, $6)`, [
      project,
      gate.gate_id,
      gate.run_id,
      gate.recorded_verdict,
      JSON.stringify(gate.report),
      gate.recorded_at,
    ]);
  }

  async find(sql: Sql, project: string, gateId: string): Promise<{ recorded_verdict: 'pass' | 'fail'; report: Record<string, unknown>; overrides: GateOverrideRow[] } | null> {
    if (!/^[0-9a-f-]{36}$/i.test(gateId)) return null;
    const rows = await sql.query(`SELECT recorded_verdict, report FROM gate_verdicts WHERE project = $1 AND gate_id = $2`, [project, gateId]);
    if (rows.length === 0) return null;
    const overrides = await sql.query(
      `SELECT actor_key_id, actor_name, reason, before, after, to_char(at AT TIME ZONE 'UTC', ${ISO}) AS at FROM gate_overrides WHERE gate_id = $1 ORDER BY id`,
      [gateId],
    );
    return { recorded_verdict: rows[0].recorded_verdict, report: rows[0].report, overrides };
  }

  /** Appends an override to a gate of `project`; a gate of another project gets none (returns false). */
  async addOverride(sql: Sql, project: string, gateId: string, o: GateOverrideRow): Promise<boolean> {
    const rows = await sql.query(
      `INSERT INTO gate_overrides (gate_id, actor_key_id, actor_name, reason, before, after, at)
       SELECT g.gate_id, $3, $4, $5, $6, $7, $8 FROM gate_verdicts g WHERE g.project = $1 AND g.gate_id = $2
       RETURNING gate_id`,
      [project, gateId, o.actor_key_id, o.actor_name, o.reason, o.before, o.after, o.at],
    );
    return rows.length > 0;
  }
}

export type BudgetMode = 'allow' | 'throttle' | 'block';

/** A budget as stored, with what its current window has spent (the ledger's sum) - GT4, issue 13. */
export interface BudgetRow {
  readonly scope: string;
  readonly mode: BudgetMode;
  readonly period: 'day' | 'month' | 'total';
  readonly limit_usd: number;
  readonly spent_usd: number;
  /** What running gates hold against this budget for spend not yet in the ledger (unexpired reservations). */
  readonly reserved_usd: number;
  /** The start of the current window (UTC), or null for `total`. */
  readonly window_start: string | null;
  readonly updated_at: string;
}

/** One judge spend: what a gate's run cost, with the model pin and the suite it counts against. */
export interface JudgeSpendEntry {
  readonly gate_id: string;
  readonly amount_usd: number;
  readonly judge_model: string | null;
  readonly suite_key: string;
  readonly recorded_at: string;
}

/** A gate's hold on the budgets for its estimated judge spend, until its actual spend reaches the ledger. */
export interface BudgetReservation {
  readonly gate_id: string;
  readonly amount_usd: number;
  readonly judge_model: string | null;
  readonly suite_key: string;
  readonly reserved_at: string;
  readonly expires_at: string;
}

/** Arbitrary but fixed, beside the run locks' (72_430_002): the advisory lock under which a gate weighs and holds. */
const BUDGET_LOCK_SPACE = 72_430_003;

/**
 * Which ledger rows or holds a budget's scope covers (the alias `s` has project, judge_model and suite_key):
 * only its own project's (issue 30) - the same scope name in two projects is two budgets.
 */
const COVERS = `s.project = b.project AND (b.scope = 'judge'
                       OR (left(b.scope, 6) = 'judge:' AND s.judge_model = substr(b.scope, 7))
                       OR (left(b.scope, 6) = 'suite:' AND s.suite_key = substr(b.scope, 7)))`;

/**
 * The budget port's PostgreSQL adapter (GT4, issue 13). The FinOps module writes `budgets` (scope, limit,
 * mode, window); we read them, and append our judge spend to the ledger `budget_spend`. A budget's spent
 * amount is the ledger's sum over its scope (`judge`: every entry; `judge:<model>`: the pin's;
 * `suite:<key>`: the suite's) in its current window: it follows from the ledger, never kept beside it.
 * A read that fails throws: the caller refuses the spend and logs why, never guesses. Budgets, holds and
 * spend are per project (issue 30): every method takes the project and reads or writes only its rows.
 */
export class BudgetRepository {
  /** The project's budgets of `scopes` (all its budgets when null) with their spend in the window containing `now`. */
  async standings(sql: Sql, project: string, scopes: readonly string[] | null, now: Date): Promise<BudgetRow[]> {
    const day = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())).toISOString();
    const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
    const rows = await sql.query(
      `SELECT b.scope, b.mode, b.period, b.limit_usd::float8 AS limit_usd,
              CASE b.period WHEN 'day' THEN $2::timestamptz WHEN 'month' THEN $3::timestamptz END AS window_start,
              to_char(b.updated_at AT TIME ZONE 'UTC', ${ISO}) AS updated_at,
              coalesce((
                SELECT sum(s.amount_usd) FROM budget_spend s
                WHERE ${COVERS}
                  AND (b.period = 'total' OR s.recorded_at >= CASE b.period WHEN 'day' THEN $2::timestamptz ELSE $3::timestamptz END)
              ), 0)::float8 AS spent_usd,
              coalesce((
                SELECT sum(s.amount_usd) FROM budget_reservations s WHERE ${COVERS} AND s.expires_at > $4::timestamptz
              ), 0)::float8 AS reserved_usd
       FROM budgets b
       WHERE b.project = $5 AND ($1::text[] IS NULL OR b.scope = ANY($1::text[]))
       ORDER BY b.scope`,
      [scopes === null ? null : [...scopes], day, month, now.toISOString(), project],
    );
    return rows.map((r: Record<string, unknown>) => ({
      scope: r['scope'] as string,
      mode: r['mode'] as BudgetMode,
      period: r['period'] as BudgetRow['period'],
      limit_usd: Number(r['limit_usd']),
      spent_usd: Number(r['spent_usd']),
      reserved_usd: Number(r['reserved_usd']),
      window_start: r['window_start'] === null ? null : new Date(r['window_start'] as string | Date).toISOString(),
      updated_at: r['updated_at'] as string,
    }));
  }

  /**
   * Serialises the gates' weigh-and-hold (GT4): taken inside the transaction that reads the standings and
   * inserts the hold, released at its commit, so the next gate's read sees the hold. One key for every
   * scope of a project (its budgets share no spend with another's, issue 30): the step is two short
   * statements, and a gate takes one key only, so it cannot deadlock. `default` keeps the key it had.
   */
  async lockSpending(sql: Sql, project: string): Promise<void> {
    await sql.query(`SELECT pg_advisory_xact_lock(${BUDGET_LOCK_SPACE}, CASE WHEN $1 = 'default' THEN 0 ELSE hashtext($1) END)`, [project]);
  }

  /** Holds a gate's estimated spend against every budget covering it (counted by `standings` until it expires). */
  async reserve(sql: Sql, project: string, r: BudgetReservation): Promise<void> {
    // Holds past their expiry count for nothing; they go here, under the same lock, so the table stays small.
    await sql.query(`DELETE FROM budget_reservations WHERE project = $1 AND expires_at <= $2`, [project, r.reserved_at]);
    await sql.query(`INSERT INTO budget_reservations (project, gate_id, amount_usd, judge_model, suite_key, reserved_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
      project,
      r.gate_id,
      r.amount_usd,
      r.judge_model,
      r.suite_key,
      r.reserved_at,
      r.expires_at,
    ]);
  }

  /** Drops a gate's hold: with its actual spend appended in the same transaction, or when its run never started. */
  async release(sql: Sql, project: string, gateId: string): Promise<void> {
    await sql.query(`DELETE FROM budget_reservations WHERE project = $1 AND gate_id = $2`, [project, gateId]);
  }

  /** Appends one judge spend to the ledger (append-only); every budget whose scope covers it counts it. */
  async recordSpend(sql: Sql, project: string, entry: JudgeSpendEntry): Promise<void> {
    await sql.query(`INSERT INTO budget_spend (project, scope, gate_id, amount_usd, judge_model, suite_key, recorded_at) VALUES ($1, 'judge', $2, $3, $4, $5, $6)`, [
      project,
      entry.gate_id,
      entry.amount_usd,
      entry.judge_model,
      entry.suite_key,
      entry.recorded_at,
    ]);
  }
}
