export { acknowledgeAll } from './acknowledge-all';
export { DEFAULT_MAX_BATCH_BYTES } from './batch-cut';
export { AckFloorProbe, BatchSettlement, HandledLedger, Limiter } from './batch-lanes';
export { Coalescer } from './coalescer';
export type { ItemOutcome } from './coalescer';
export { JetStreamBus } from './jetstream.bus';
export { InProcessBus } from './in-process.bus';
export type { InProcessBusOptions } from './in-process.bus';
export { JournalDamagedError } from './journal-file';
export { describeRepair, repairJournals } from './journal-repair';
export type { JournalRepair } from './journal-repair';
export type { BusMessage, ConsumeOptions, MessageBus, MessagePublisher, PublishAck, Subscription } from './message-bus.port';
export {
  CONSUMERS,
  PRODUCTION_NAMES,
  STREAMS,
  contractSubject,
  ensureConsumer,
  ensureTopology,
  streamConfig,
  streamOf,
  subjectOf,
} from './topology';
export type { BusNames, ConsumerSpec, StreamName, StreamSpec, TopologyOptions } from './topology';
