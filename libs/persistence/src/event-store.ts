import { PG_UNIQUE_VIOLATION, pgCode, type Sql } from './sql';

export interface EventMetadata {
  readonly message_id: string;
  readonly correlation_id: string;
  readonly causation_id: string;
  readonly occurred_at: string;
}

export interface NewEvent<TData = unknown> {
  readonly type: string;
  readonly version: number;
  readonly data: TData;
  readonly metadata: EventMetadata;
}

export interface StoredEvent<TData = unknown> extends NewEvent<TData> {
  readonly position: number;
  readonly stream_id: string;
  readonly stream_version: number;
}

/** Subject an internal event is relayed on: `evals.event.<type>` (stream EVALS_EVENTS). */
export function eventSubject(type: string): string {
  return `evals.event.${type}`;
}

export interface AppendOptions {
  /**
   * False for facts read from the log only, never relayed to the bus (no outbox row): a suite version's
   * events (issue 27) have no consumer on the bus, and the read model's consumer is handed run events alone.
   */
  readonly relay?: boolean;
}

export class StreamVersionConflict extends Error {
  readonly code = 'STREAM_VERSION_CONFLICT';
  constructor(
    readonly streamId: string,
    readonly expectedVersion: number,
  ) {
    super(`stream ${streamId} is not at version ${expectedVersion}`);
  }
}

/**
 * Append-only event store with optimistic concurrency per stream. Appending also writes, in the same
 * transaction, the outbox rows that relay each event to the bus - so an event is published if and only if
 * it was committed. Call it inside a transaction when other writes must commit with the events.
 */
export class EventStore {
  /**
   * Appends `events` at `expectedVersion + 1 ...`. A concurrent writer that got there first makes this throw
   * StreamVersionConflict (the unique (stream_id, stream_version) index decides, not a read-then-write).
   */
  async append(sql: Sql, streamId: string, expectedVersion: number, events: readonly NewEvent[], options: AppendOptions = {}): Promise<StoredEvent[]> {
    if (events.length === 0) return [];
    const params: unknown[] = [];
    const rows = events.map((event, i) => {
      params.push(streamId, expectedVersion + i + 1, event.type, event.version, JSON.stringify(event.data), JSON.stringify(event.metadata), event.metadata.message_id);
      const b = i * 7;
      return `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}::jsonb, $${b + 6}::jsonb, $${b + 7}::uuid)`;
    });
    let inserted: Array<{ position: string; stream_version: number }>;
    try {
      inserted = await sql.query(
        `INSERT INTO events (stream_id, stream_version, type, version, data, metadata, message_id)
         VALUES ${rows.join(', ')} RETURNING position, stream_version`,
        params,
      );
    } catch (error) {
      if (pgCode(error) === PG_UNIQUE_VIOLATION) throw new StreamVersionConflict(streamId, expectedVersion);
      throw error;
    }
    const stored = events.map((event, i) => ({
      ...event,
      stream_id: streamId,
      stream_version: inserted[i].stream_version,
      position: Number(inserted[i].position),
    }));
    if (options.relay === false) return stored;
    await new Outbox().add(
      sql,
      stored.map((e) => ({ subject: eventSubject(e.type), message_id: e.metadata.message_id, payload: toWire(e) })),
    );
    return stored;
  }

  async readStream(sql: Sql, streamId: string): Promise<StoredEvent[]> {
    const rows = await sql.query(`SELECT ${EVENT_COLUMNS} FROM events WHERE stream_id = $1 ORDER BY stream_version`, [streamId]);
    return rows.map(fromRow);
  }

  /** Up to `limit` events of a stream after `afterVersion`: a long stream read a page at a time. */
  async readStreamPage(sql: Sql, streamId: string, afterVersion: number, limit: number): Promise<StoredEvent[]> {
    const rows = await sql.query(`SELECT ${EVENT_COLUMNS} FROM events WHERE stream_id = $1 AND stream_version > $2 ORDER BY stream_version LIMIT $3`, [streamId, afterVersion, limit]);
    return rows.map(fromRow);
  }

  /** The global log in order, for projections and rebuilds. */
  async readAll(sql: Sql, afterPosition: number, limit: number): Promise<StoredEvent[]> {
    const rows = await sql.query(`SELECT ${EVENT_COLUMNS} FROM events WHERE position > $1 ORDER BY position LIMIT $2`, [afterPosition, limit]);
    return rows.map(fromRow);
  }
}

/** The wire form of an internal event: the house envelope plus its place in the log. */
export function toWire(e: StoredEvent): Record<string, unknown> {
  return {
    schema: `${e.type}.v${e.version}`,
    type: e.type,
    version: e.version,
    data: e.data,
    metadata: e.metadata,
    position: e.position,
    stream_id: e.stream_id,
    stream_version: e.stream_version,
  };
}

const EVENT_COLUMNS = 'position, stream_id, stream_version, type, version, data, metadata';

function fromRow(r: Record<string, any>): StoredEvent {
  return {
    position: Number(r.position),
    stream_id: r.stream_id,
    stream_version: r.stream_version,
    type: r.type,
    version: r.version,
    data: r.data,
    metadata: r.metadata,
  };
}

export interface OutboxEntry {
  /** The contract subject (no deployment prefix). */
  readonly subject: string;
  readonly message_id: string;
  readonly payload: unknown;
}

export class Outbox {
  async add(sql: Sql, entries: readonly OutboxEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await sql.query(
      `INSERT INTO outbox (subject, message_id, payload)
       SELECT * FROM unnest($1::text[], $2::uuid[], $3::jsonb[])
       ON CONFLICT (message_id) DO NOTHING`,
      [entries.map((e) => e.subject), entries.map((e) => e.message_id), entries.map((e) => JSON.stringify(e.payload))],
    );
  }
}
