/**
 * The smallest thing a repository needs: a TypeORM DataSource, EntityManager or QueryRunner all have it.
 * Repositories take it per call, so one transaction can span several of them.
 */
export interface Sql {
  query(text: string, parameters?: unknown[]): Promise<any>;
}

/** PostgreSQL error codes we turn into domain outcomes. */
export const PG_UNIQUE_VIOLATION = '23505';

export function pgCode(error: unknown): string | undefined {
  const e = error as { code?: unknown; driverError?: { code?: unknown } };
  const code = e?.driverError?.code ?? e?.code;
  return typeof code === 'string' ? code : undefined;
}
