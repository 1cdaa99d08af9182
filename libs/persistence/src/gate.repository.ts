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

/** Recorded gate verdicts and their override audit (GT5): both append-only. */
export class GateRepository {
  async record(sql: Sql, gate: { gate_id: string; run_id: string; recorded_verdict: 'pass' | 'fail'; report: unknown; recorded_at: string }): Promise<void> {
    await sql.query(`INSERT INTO gate_verdicts (gate_id, run_id, recorded_verdict, report, recorded_at) VALUES ($1, $2, $3, $4::jsonb, $5)`, [
      gate.gate_id,
      gate.run_id,
      gate.recorded_verdict,
      JSON.stringify(gate.report),
      gate.recorded_at,
    ]);
  }

  async find(sql: Sql, gateId: string): Promise<{ recorded_verdict: 'pass' | 'fail'; report: Record<string, unknown>; overrides: GateOverrideRow[] } | null> {
    if (!/^[0-9a-f-]{36}$/i.test(gateId)) return null;
    const rows = await sql.query(`SELECT recorded_verdict, report FROM gate_verdicts WHERE gate_id = $1`, [gateId]);
    if (rows.length === 0) return null;
    const overrides = await sql.query(
      `SELECT actor_key_id, actor_name, reason, before, after, to_char(at AT TIME ZONE 'UTC', ${ISO}) AS at FROM gate_overrides WHERE gate_id = $1 ORDER BY id`,
      [gateId],
    );
    return { recorded_verdict: rows[0].recorded_verdict, report: rows[0].report, overrides };
  }

  async addOverride(sql: Sql, gateId: string, o: GateOverrideRow): Promise<void> {
    await sql.query(
      `INSERT INTO gate_overrides (gate_id, actor_key_id, actor_name, reason, before, after, at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [gateId, o.actor_key_id, o.actor_name, o.reason, o.before, o.after, o.at],
    );
  }
}

export type BudgetMode = 'allow' | 'throttle' | 'block';

/**
 * The budget port's PostgreSQL adapter (GT4). The FinOps module writes `budgets`; we only read it, and
 * record our judge spend in an append-only ledger. A read that fails is reported, never guessed.
 */
export class BudgetRepository {
  /** Modes of the budgets that apply to any of `scopes`; throws when the store cannot be read. */
  async applicable(sql: Sql, scopes: readonly string[]): Promise<Array<{ scope: string; mode: BudgetMode }>> {
    return sql.query(`SELECT scope, mode FROM budgets WHERE scope = ANY($1::text[]) ORDER BY scope`, [scopes]);
  }

  async recordSpend(sql: Sql, scope: string, gateId: string, amountUsd: number): Promise<void> {
    await sql.query(`INSERT INTO budget_spend (scope, gate_id, amount_usd) VALUES ($1, $2, $3)`, [scope, gateId, amountUsd]);
  }
}
