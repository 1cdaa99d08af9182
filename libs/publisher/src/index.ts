// @evals/publisher (issue 28): what a sandbox team imports to publish runs to the evals service over NATS
// JetStream instead of hand-writing subjects, envelopes and message ids (docs/contracts.md, "Publishing a run").
export { EvalsPublisher, RunStream } from './run-publisher';
export type { PublisherOptions, PublishPort, RunOpening, RunOptions, RunSummary } from './run-publisher';
export { jetStreamPort } from './jetstream.port';
