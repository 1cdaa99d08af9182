export { createDataSource, migrate, migrations } from './data-source';
export type { PostgresConfig } from './data-source';
export { EventStore, Outbox, StreamVersionConflict, eventSubject, toWire } from './event-store';
export type { EventMetadata, NewEvent, OutboxEntry, StoredEvent } from './event-store';
export { OutboxRelay } from './outbox-relay';
export type { OutboxRelayOptions, RelayPublisher } from './outbox-relay';
export { PG_UNIQUE_VIOLATION, pgCode } from './sql';
export type { Sql } from './sql';
