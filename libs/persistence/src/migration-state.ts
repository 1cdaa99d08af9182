import type { DataSource } from 'typeorm';

/**
 * Whether the schema already records every one of `names` (typeorm's migrations table, by migration name):
 * one query, where typeorm's executor checks for its table, reads it and compares, with its own
 * statements, on every start. Only ever a shortcut: on any doubt - no table yet (a new database), an
 * error, a name missing - it answers false and the caller migrates as before, under its lock. A true
 * answer cannot go stale: migrations are only ever added, never removed (issue 15, the embedded cold start).
 */
export async function allMigrationsApplied(dataSource: DataSource, table: string, names: readonly string[]): Promise<boolean> {
  const schema = (dataSource.options as { schema?: string }).schema;
  const qualified = schema ? `"${schema.replace(/"/g, '')}"."${table}"` : `"${table}"`;
  try {
    // to_regclass: a missing table is NULL, not an error (an error would abort a surrounding transaction).
    const [exists] = (await dataSource.query(`SELECT to_regclass($1) IS NOT NULL AS present`, [qualified])) as Array<{ present: boolean }>;
    if (!exists?.present) return false;
    const rows = (await dataSource.query(`SELECT name FROM ${qualified}`)) as Array<{ name: string }>;
    const applied = new Set(rows.map((r) => r.name));
    return names.every((name) => applied.has(name));
  } catch {
    return false;
  }
}
