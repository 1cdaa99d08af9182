import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import type { PoolClient } from 'pg';
import type { EntityManager, QueryRunner } from 'typeorm';
import { pgCode, PG_UNIQUE_VIOLATION, type Sql } from './sql';

/** One column of a bulk write: its name, its PostgreSQL type, and its value in a row. */
export interface CopyColumn<R> {
  readonly name: string;
  /** `text`, `float8`, `bool`, `int`, `int2`, `timestamptz`, or `varchar(n)` (clamped to n characters, as a cast is). */
  readonly type: string;
  readonly value: (row: R) => unknown;
}

/**
 * Below this many rows a batch is inserted by one statement: a COPY costs two more round trips (its
 * savepoint and release) and one more for its data, which only a batch of some size pays back
 * (`npm run bench:evidence`, docs/benchmarks.md). Issue 28 measured the threshold again on the worker's batch
 * sizes (bench/evidence/copy-threshold.bench.ts, PostgreSQL on a loaded 2-core machine): from 64 to 128 rows
 * the two are even - medians within 0.4 ms, COPY moving about 0.5 ms of CPU per transaction from the server
 * to the client - and above it COPY pulls ahead (200 rows: 0.5 ms; 500: 6 ms and a third of the server's
 * CPU), so raising the threshold would save nothing at 100 rows and lose that at a few hundred.
 */
export const COPY_MIN_ROWS = 64;

/**
 * Writes every row by `COPY ... FROM STDIN`, all or nothing, inside the caller's transaction: true once all are
 * written; false - with nothing written - when a row's key is already taken (a redelivered batch, a case twice
 * in one batch), for the caller to write the batch by a statement that skips those. A COPY has no ON CONFLICT,
 * so it runs behind a savepoint: a unique violation rolls back to it and leaves the transaction usable.
 *
 * Used only where it pays and is possible: a batch of COPY_MIN_ROWS or more, written in a transaction of a
 * TypeORM query runner on the `pg` driver (the server and the embedded PGlite alike, whose stream holds a
 * COPY until its data is complete). Anything else answers false before it sends anything.
 */
export async function copyRows<R>(sql: Sql, table: string, rows: readonly R[], columns: ReadonlyArray<CopyColumn<R>>): Promise<boolean> {
  if (rows.length < COPY_MIN_ROWS) return false;
  const client = transactionClient(sql);
  if (!client) return false;
  const { from } = require('pg-copy-streams') as typeof import('pg-copy-streams');
  await sql.query('SAVEPOINT copy_rows');
  try {
    await pipeline(Readable.from(csvChunks(rows, columns)), client.query(from(`COPY ${table} (${columns.map((c) => c.name).join(', ')}) FROM STDIN WITH (FORMAT csv)`)));
  } catch (error) {
    if (pgCode(error) !== PG_UNIQUE_VIOLATION) throw error;
    await sql.query('ROLLBACK TO SAVEPOINT copy_rows');
    return false;
  }
  await sql.query('RELEASE SAVEPOINT copy_rows');
  return true;
}

/** The `pg` client of a TypeORM transaction, when `sql` is one (an EntityManager or QueryRunner in a transaction). */
function transactionClient(sql: Sql): PoolClient | undefined {
  const runner: Partial<QueryRunner> | undefined = (sql as Partial<EntityManager>).queryRunner ?? (isQueryRunner(sql) ? sql : undefined);
  if (!runner?.isTransactionActive) return undefined;
  const client = (runner as { databaseConnection?: PoolClient }).databaseConnection;
  return client && typeof client.query === 'function' ? client : undefined;
}

function isQueryRunner(sql: Sql): sql is Sql & QueryRunner {
  return typeof (sql as Partial<QueryRunner>).startTransaction === 'function';
}

/** The rows as CSV, about 64 KiB per chunk (one CopyData message each). */
function* csvChunks<R>(rows: readonly R[], columns: ReadonlyArray<CopyColumn<R>>): Generator<string> {
  const encoders = columns.map((c) => encoder(c.type));
  let chunk = '';
  for (const row of rows) {
    for (let i = 0; i < columns.length; i++) {
      if (i > 0) chunk += ',';
      chunk += encoders[i]!(columns[i]!.value(row));
    }
    chunk += '\n';
    if (chunk.length >= 65_536) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk.length > 0) yield chunk;
}

/**
 * A CSV field for a column type, giving the column what the json insert gave it: an unquoted empty field is
 * NULL; text is always quoted (so an empty string stays one); a number that is not finite is NULL, as JSON
 * spells it (a NOT NULL column refuses it); `varchar(n)` is clamped to n characters, as an explicit cast is.
 */
function encoder(type: string): (value: unknown) => string {
  const clamp = /^varchar\((\d+)\)$/.exec(type);
  if (clamp) {
    const n = Number(clamp[1]);
    return (v) => (v === null || v === undefined ? '' : quote(clampChars(String(v), n)));
  }
  switch (type) {
    case 'float8':
    case 'int':
    case 'int2':
      return (v) => (typeof v === 'number' && Number.isFinite(v) ? String(v) : '');
    case 'bool':
      return (v) => (v === true ? 't' : v === false ? 'f' : '');
    default:
      return (v) => (v === null || v === undefined ? '' : quote(String(v)));
  }
}

function quote(s: string): string {
  return `"${s.includes('"') ? s.replace(/"/g, '""') : s}"`;
}

/** The first n characters (code points, as PostgreSQL counts them). */
function clampChars(s: string, n: number): string {
  if (s.length <= n) return s;
  return Array.from(s).slice(0, n).join('');
}
