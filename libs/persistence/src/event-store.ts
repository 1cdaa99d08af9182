import { dispatchesOutboxRows, outboxRowsWritten, type OutboxRowWritten } from './outbox-dispatch';
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

const EVENT_SUBJECT_PREFIX = 'evals.event.';

/** Subject an internal event is relayed on: `evals.event.<type>` (stream EVALS_EVENTS). */
export function eventSubject(type: string): string {
  return `${EVENT_SUBJECT_PREFIX}${type}`;
}

export interface AppendOptions {
  /**
   * False for facts read from the log only, never relayed to the bus (no outbox row): a suite version's
   * events (issue 27) have no consumer on the bus, and the read model's consumer is handed run events alone.
   */
  readonly relay?: boolean;
  /**
   * Event types of the append that are written to the log only, the others relayed: a run's
   * `outputs.received` is read by the run's model alone, folded from the log (`LOG_ONLY_RUN_EVENTS`).
   */
  readonly logOnly?: ReadonlySet<string>;
}

/** One stream's part of a multi-stream append (`EventStore.appendMany`). */
export interface StreamAppend {
  readonly streamId: string;
  readonly expectedVersion: number;
  readonly events: readonly NewEvent[];
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
    return (await this.appendMany(sql, [{ streamId, expectedVersion, events }], options))[0];
  }

  /**
   * `append` to several streams in one statement (with their outbox rows): what a consumer that decides many
   * runs in one transaction writes (the scoring worker's seals of a micro-batch, issue 28). Each stream keeps
   * its own optimistic concurrency; a conflict on any of them throws StreamVersionConflict naming it, and the
   * caller's transaction rolls back whole. Returns each append's stored events, in order.
   */
  async appendMany(sql: Sql, appends: readonly StreamAppend[], options: AppendOptions = {}): Promise<StoredEvent[][]> {
    const params: unknown[] = [];
    const rows: string[] = [];
    for (const { streamId, expectedVersion, events } of appends) {
      events.forEach((event, i) => {
        const b = params.length;
        params.push(streamId, expectedVersion + i + 1, event.type, event.version, JSON.stringify(event.data), JSON.stringify(event.metadata), event.metadata.message_id);
        rows.push(`($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}::jsonb, $${b + 6}::jsonb, $${b + 7}::uuid)`);
      });
    }
    if (rows.length === 0) return appends.map(() => []);
    const logOnly = options.relay === false ? [] : [...(options.logOnly ?? [])];
    if (logOnly.length > 0) params.push(logOnly);
    // One statement - so atomic without a transaction of its own - writes the events and their outbox rows
    // (the wire form, `toWire`, built from what was inserted, in log order): an append is one round trip.
    const relayed =
      options.relay === false
        ? ''
        : `, relayed AS (
             INSERT INTO outbox (subject, message_id, payload)
             SELECT '${EVENT_SUBJECT_PREFIX}' || type, message_id,
                    jsonb_build_object('schema', type || '.v' || version, 'type', type, 'version', version, 'data', data, 'metadata', metadata,
                                       'position', position, 'stream_id', stream_id, 'stream_version', stream_version)
             FROM inserted${logOnly.length > 0 ? ` WHERE type <> ALL($${params.length}::text[])` : ''} ORDER BY position
             ON CONFLICT (message_id) DO NOTHING
             RETURNING id, subject, message_id, payload)`;
    // The outbox rows come back only to a process whose relay publishes them at the commit (outbox-dispatch.ts).
    const dispatching = relayed !== '' && dispatchesOutboxRows(sql);
    let inserted: Array<{ position: string; stream_id: string; stream_version: number; outbox_id?: string | null; subject?: string; message_id?: string; payload?: unknown }>;
    try {
      inserted = await sql.query(
        `WITH inserted AS (
           INSERT INTO events (stream_id, stream_version, type, version, data, metadata, message_id)
           VALUES ${rows.join(', ')} RETURNING position, stream_id, stream_version, type, version, data, metadata, message_id)${relayed}
         ${
           dispatching
             ? `SELECT i.position, i.stream_id, i.stream_version, r.id AS outbox_id, r.subject, r.message_id, r.payload
                FROM inserted i LEFT JOIN relayed r ON r.message_id = i.message_id ORDER BY i.position`
             : 'SELECT position, stream_id, stream_version FROM inserted'
         }`,
        params,
      );
    } catch (error) {
      if (pgCode(error) === PG_UNIQUE_VIOLATION) {
        const conflicting = conflictingStream(error, appends);
        throw new StreamVersionConflict(conflicting.streamId, conflicting.expectedVersion);
      }
      throw error;
    }
    if (dispatching) {
      // A message id already in the outbox (ON CONFLICT) inserted no row: that row is relayed as it was.
      outboxRowsWritten(
        sql,
        inserted.flatMap((r) => (r.outbox_id ? [{ id: String(r.outbox_id), subject: r.subject!, message_id: r.message_id!, payload: r.payload }] : [])),
      );
    }
    const positions = new Map(inserted.map((r) => [`${r.stream_id}\u0000${r.stream_version}`, Number(r.position)]));
    return appends.map(({ streamId, expectedVersion, events }) =>
      events.map((event, i) => ({ ...event, stream_id: streamId, stream_version: expectedVersion + i + 1, position: positions.get(`${streamId}\u0000${expectedVersion + i + 1}`)! })),
    );
  }

  /** Several streams in one query, each in order; a stream with no event is absent from the map. */
  async readStreams(sql: Sql, streamIds: readonly string[]): Promise<Map<string, StoredEvent[]>> {
    const streams = new Map<string, StoredEvent[]>();
    if (streamIds.length === 0) return streams;
    const rows = await sql.query(`SELECT ${EVENT_COLUMNS} FROM events WHERE stream_id = ANY($1::text[]) ORDER BY stream_id, stream_version`, [[...new Set(streamIds)]]);
    for (const row of rows) {
      const e = fromRow(row);
      const stream = streams.get(e.stream_id);
      if (stream) stream.push(e);
      else streams.set(e.stream_id, [e]);
    }
    return streams;
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

/** The append a unique violation was about, from PostgreSQL's detail (`Key (stream_id, stream_version)=(s, 3)`); the first when it cannot tell. */
function conflictingStream(error: unknown, appends: readonly StreamAppend[]): StreamAppend {
  const detail = (error as { detail?: unknown; driverError?: { detail?: unknown } }).detail ?? (error as { driverError?: { detail?: unknown } }).driverError?.detail;
  if (typeof detail === 'string') {
    const found = appends.find((a) => detail.includes(`=(${a.streamId}, `));
    if (found) return found;
  }
  return appends[0];
}

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
    const dispatching = dispatchesOutboxRows(sql);
    const rows: OutboxRowWritten[] = await sql.query(
      `INSERT INTO outbox (subject, message_id, payload)
       SELECT * FROM unnest($1::text[], $2::uuid[], $3::jsonb[])
       ON CONFLICT (message_id) DO NOTHING${dispatching ? ' RETURNING id, subject, message_id, payload' : ''}`,
      [entries.map((e) => e.subject), entries.map((e) => e.message_id), entries.map((e) => JSON.stringify(e.payload))],
    );
    if (dispatching) outboxRowsWritten(sql, rows.map((r) => ({ ...r, id: String(r.id) })));
  }
}
