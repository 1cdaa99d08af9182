import type { Envelope } from './envelope';
import type { MessageDefinition } from './message-definition';
import { FINDING_REPORTED_V1 } from './messages/finding-reported.v1.message';
import { OUTPUT_SUBMITTED_V1 } from './messages/output-submitted.v1.message';
import { OUTPUTS_SUBMITTED_V1 } from './messages/outputs-submitted.v1.message';
import { RESULT_RECORDED_V1 } from './messages/result-recorded.v1.message';
import { RUN_REQUESTED_V1 } from './messages/run-requested.v1.message';
import { RUN_SEALED_V1 } from './messages/run-sealed.v1.message';
import { SESSION_SIGNAL_V1 } from './messages/session-signal.v1.message';

/**
 * Every (type, version) this service decodes and encodes. A breaking change adds a `*.v2.message.ts` file
 * and a line here, and v1 stays until no producer sends it any more (docs/contracts.md, versioning).
 */
export const MESSAGE_DEFINITIONS = [
  RUN_REQUESTED_V1,
  OUTPUT_SUBMITTED_V1,
  OUTPUTS_SUBMITTED_V1,
  RUN_SEALED_V1,
  SESSION_SIGNAL_V1,
  RESULT_RECORDED_V1,
  FINDING_REPORTED_V1,
] as const;

type Definitions = (typeof MESSAGE_DEFINITIONS)[number];

/** e.g. `evals.run.requested.v1` */
export type MessageSchema = Definitions['schema'];
/** e.g. `evals.run.requested` */
export type MessageType = Definitions['type'];
export type MessageVersion<T extends MessageType> = Extract<Definitions, { type: T }>['version'];

/** The schema name of (type, version), e.g. SchemaOf<'evals.run.sealed', 1> = 'evals.run.sealed.v1'. */
export type SchemaOf<T extends MessageType, V extends number> = Extract<MessageSchema, `${T}.v${V}`>;

type DefinitionOf<S extends MessageSchema> = Extract<Definitions, { schema: S }>;
type DataOfDefinition<D> = D extends MessageDefinition<infer _T, infer _V, infer X> ? X : never;

export type MessageData<T extends MessageType, V extends MessageVersion<T>> = DataOfDefinition<
  Extract<Definitions, { type: T; version: V }>
>;

/** One decoded (or encoded) message of schema S. */
export type Message<S extends MessageSchema> = Envelope<
  DefinitionOf<S>['type'],
  DefinitionOf<S>['version'],
  DataOfDefinition<DefinitionOf<S>>
>;

/** Any message; narrow on `schema` to reach a typed `data`. */
export type AnyMessage = { [S in MessageSchema]: Message<S> }[MessageSchema];

const BY_SCHEMA: ReadonlyMap<string, MessageDefinition> = new Map(
  MESSAGE_DEFINITIONS.map((d) => [d.schema, d as unknown as MessageDefinition]),
);

export function findDefinition(schema: string): MessageDefinition | undefined {
  return BY_SCHEMA.get(schema);
}

export function versionsOf(type: string): number[] {
  return MESSAGE_DEFINITIONS.filter((d) => d.type === type)
    .map((d) => d.version as number)
    .sort((a, b) => a - b);
}
