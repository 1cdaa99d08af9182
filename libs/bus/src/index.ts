export { allAcknowledgedBefore } from './ack-floor';
export { BatchConsumer } from './batch-consumer';
export type { BatchConsumerOptions } from './batch-consumer';
export { JetStreamPublisher } from './publisher';
export type { MessagePublisher } from './publisher';
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
