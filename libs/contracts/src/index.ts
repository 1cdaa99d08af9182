/**
 * @evals/contracts: the bus contract of spec section 10 (subjects, envelope, one versioned payload schema
 * per message, decoder and encoder). docs/contracts.md is its human-readable twin; other teams build
 * against both.
 */
import 'reflect-metadata';

export * from './subjects';
export * from './limits';
export * from './contract-error';
export * from './envelope';
export { defineMessage, schemaName, type Direction, type MessageDefinition } from './message-definition';
export * from './registry';
export * from './codec';
export { ASYNCAPI_VERSION, buildAsyncApiDocument, renderAsyncApiJson, type AsyncApiDocument, type AsyncApiOptions } from './asyncapi';
export { SchemaGenerationError, type JsonSchema } from './asyncapi-schema';
export type { FieldIssue, UnknownFieldPolicy } from './validation/dto-validation';
/** The DTO validator of the bus edge, shared with the HTTP edge (libs/platform body-validation). */
export { validateDto } from './validation/dto-validation';
export * from './messages/run-requested.v1.message';
export * from './messages/output-submitted.v1.message';
export * from './messages/outputs-submitted.v1.message';
export * from './messages/run-sealed.v1.message';
export * from './messages/session-signal.v1.message';
export * from './messages/result-recorded.v1.message';
export * from './messages/finding-reported.v1.message';
export {
  type EvalMetricsV1,
  type IntervalV1,
  type MetricValue,
  MAX_EXTRA_METRICS,
  METRIC_KEY_PATTERN,
} from './messages/metrics';
