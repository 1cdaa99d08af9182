import type { DataSource, EntitySubscriberInterface, QueryRunner, TransactionCommitEvent, TransactionRollbackEvent } from 'typeorm';
import type { Sql } from './sql';

/** An outbox row as it was inserted: what the relay publishes, with the row's id to mark it published. */
export interface OutboxRowWritten {
  readonly id: string;
  readonly subject: string;
  readonly message_id: string;
  readonly payload: unknown;
}

/** Receives committed outbox rows, in the order they were written (the relay's `dispatch`). */
export type DispatchCommitted = (rows: readonly OutboxRowWritten[]) => void;

interface Pending {
  /** The transaction's savepoint depth each batch of rows was written at: a rollback to a savepoint drops the deeper ones. */
  readonly batches: Array<{ readonly depth: number; readonly rows: readonly OutboxRowWritten[] }>;
}

const dispatchers = new WeakMap<DataSource, DispatchCommitted>();
const pending = new WeakMap<QueryRunner, Pending>();

/**
 * Issue 28: the rows an append writes reach the bus at its commit, not at the relay's next claim.
 *
 * Every app wrote its outbox rows, committed, and then woke its relay, which started a transaction, claimed
 * the oldest unpublished rows with an UPDATE that walked the outbox's partial index, published them and
 * committed: two more round trips and a scan on every hop of a run's way to its EvalResult (at 5 000 cases/s,
 * 7.6 of the pipeline's ~50 socket writes a run, and the outbox claim was a tenth of a core of the server).
 * The writer has the rows in hand: `EventStore` and `Outbox` report them here with their ids, and once the
 * transaction that wrote them commits, the data source's relay publishes them from memory and marks them
 * by primary key.
 *
 * The outbox stays what makes this safe: a row is published only after its commit, and a row whose publish
 * failed, or whose process died before the mark, is still unpublished for the relay's claim (the sweep), which
 * publishes it with the same Nats-Msg-Id - a repeat the bus drops.
 *
 * The hook is TypeORM's transaction events, so a writer needs no change: rows written inside a transaction wait
 * for its commit (dropped at its rollback, or at the rollback to a savepoint they were written under), rows
 * written by a statement of their own are committed when it returns. A data source with no relay started, or a
 * `Sql` this cannot place, dispatches nothing: its rows wait for a claim, as before.
 */
export function outboxRowsWritten(sql: Sql, rows: readonly OutboxRowWritten[]): void {
  if (rows.length === 0) return;
  const runner = queryRunnerOf(sql);
  const source = runner?.dataSource ?? dataSourceOf(sql);
  const dispatch = source && dispatchers.get(source);
  if (!dispatch) return;
  if (runner?.isTransactionActive) {
    const p = pending.get(runner) ?? { batches: [] };
    p.batches.push({ depth: depthOf(runner), rows });
    pending.set(runner, p);
    return;
  }
  dispatch(rows);
}

/** Whether rows written on `sql` have a relay to dispatch them (the writer then asks PostgreSQL for them back). */
export function dispatchesOutboxRows(sql: Sql): boolean {
  const source = queryRunnerOf(sql)?.dataSource ?? dataSourceOf(sql);
  return source !== undefined && dispatchers.has(source);
}

/** Registers `dispatch` for `dataSource`'s commits; returns the unregistration. One dispatcher a data source. */
export function dispatchCommittedOutboxRows(dataSource: DataSource, dispatch: DispatchCommitted): () => void {
  if (dispatchers.has(dataSource)) throw new Error('an outbox dispatcher is registered for this data source already');
  dispatchers.set(dataSource, dispatch);
  if (!dataSource.subscribers.includes(COMMIT_HOOK)) dataSource.subscribers.push(COMMIT_HOOK);
  return () => {
    if (dispatchers.get(dataSource) === dispatch) dispatchers.delete(dataSource);
  };
}

const COMMIT_HOOK: EntitySubscriberInterface = {
  afterTransactionCommit(event: TransactionCommitEvent): void {
    const runner = event.queryRunner;
    // A savepoint's release is a commit event too; the rows are committed with the outermost transaction only.
    if (runner.isTransactionActive) return;
    const p = pending.get(runner);
    if (!p) return;
    pending.delete(runner);
    const dispatch = dispatchers.get(runner.dataSource);
    if (dispatch) dispatch(p.batches.flatMap((b) => b.rows));
  },
  afterTransactionRollback(event: TransactionRollbackEvent): void {
    const runner = event.queryRunner;
    const p = pending.get(runner);
    if (!p) return;
    if (!runner.isTransactionActive) {
      pending.delete(runner);
      return;
    }
    // Rolled back to a savepoint: what was written under it is gone, what was written before it stays.
    const depth = depthOf(runner);
    const kept = p.batches.filter((b) => b.depth <= depth);
    p.batches.length = 0;
    p.batches.push(...kept);
  },
};

function depthOf(runner: QueryRunner): number {
  // TypeORM counts a transaction and its savepoints in `transactionDepth` (not in the QueryRunner interface).
  return (runner as unknown as { transactionDepth?: number }).transactionDepth ?? 1;
}

function queryRunnerOf(sql: Sql): QueryRunner | undefined {
  const s = sql as unknown as { queryRunner?: QueryRunner; isTransactionActive?: boolean; dataSource?: DataSource };
  // An EntityManager of a transaction carries its runner; a QueryRunner is one (it has `isTransactionActive`).
  if (s.queryRunner) return s.queryRunner;
  if (typeof s.isTransactionActive === 'boolean' && s.dataSource) return sql as unknown as QueryRunner;
  return undefined;
}

function dataSourceOf(sql: Sql): DataSource | undefined {
  const s = sql as unknown as { dataSource?: DataSource; manager?: { dataSource?: DataSource } };
  // An EntityManager outside a transaction has `dataSource`; a DataSource is its own manager's data source.
  return s.dataSource ?? (s.manager?.dataSource === (sql as unknown) ? (sql as unknown as DataSource) : undefined);
}
