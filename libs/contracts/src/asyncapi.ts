import { idSchema, SchemaContext, SchemaGenerationError, schemaNameOf, type JsonSchema } from './asyncapi-schema';
import { DECODE_ERROR_CODES } from './contract-error';
import { NATS_MSG_ID_HEADER } from './envelope';
import { MAX_MESSAGE_BYTES, TIMESTAMP_PATTERN } from './limits';
import type { MessageDefinition } from './message-definition';
import { MESSAGE_DEFINITIONS } from './registry';
import { ALL_SUBJECTS, type Subject } from './subjects';

/*
 * The bus contract as an AsyncAPI 3 document (issue 16, part 3): what /openapi.json is to HTTP clients, this
 * is to the platform's other modules. Generated from the registry and the DTO classes, never written by
 * hand: docs/asyncapi.json is this function's output (`npm run docs:asyncapi`), and every app serves it at
 * /asyncapi.json. Pure and deterministic (no clock, no ids): the same code gives the same document.
 */

export const ASYNCAPI_VERSION = '3.0.0';

export type AsyncApiDocument = {
  readonly asyncapi: string;
  readonly info: Record<string, unknown>;
  readonly channels: Record<string, JsonSchema>;
  readonly operations: Record<string, JsonSchema>;
  readonly components: { messages: Record<string, JsonSchema>; schemas: Record<string, JsonSchema> } & Record<string, unknown>;
} & Record<string, unknown>;

interface SubjectInfo {
  readonly title: string;
  readonly producer: string;
  readonly consumer: string;
  readonly description: string;
}

/** The subjects table of docs/contracts.md. A subject missing here stops the generation. */
const SUBJECT_INFO: Readonly<Record<Subject, SubjectInfo>> = {
  'evals.run.requested': {
    title: 'Run requested',
    producer: 'sandbox, CI',
    consumer: 'evals ingestion',
    description: 'Opens a run, optionally with its candidate outputs inline. A second request with the same run_id is the same run.',
  },
  'evals.output.submitted': {
    title: 'Output submitted',
    producer: 'sandbox, CI',
    consumer: 'evals ingestion',
    description: 'One candidate output for one case of an open run. Never persisted, logged or echoed (D1).',
  },
  'evals.outputs.submitted': {
    title: 'Outputs submitted',
    producer: 'sandbox, CI (@evals/publisher)',
    consumer: 'evals ingestion',
    description:
      'Up to 1 000 candidate outputs of one open run in one message, each with its own case id. An invalid output is dead-lettered alone (code and case id); the others are recorded. Never persisted, logged or echoed (D1).',
  },
  'evals.run.sealed': {
    title: 'Run sealed',
    producer: 'sandbox, CI',
    consumer: 'evals ingestion',
    description: 'No more outputs for the run: cases still without one fail as missing_output (R1).',
  },
  'evals.session.signal': {
    title: 'Session signal',
    producer: 'platform (sampled sessions)',
    consumer: 'evals ingestion',
    description: 'Behavioural signals of one sampled real session, never its text (D3).',
  },
  'evals.result.recorded': {
    title: 'Result recorded',
    producer: 'evals',
    consumer: 'compliance, UI',
    description: 'One EvalResult, the canonical artifact of a completed run (R3, R4). Published exactly once per run through the outbox.',
  },
  'finding.reported': {
    title: 'Finding reported',
    producer: 'evals',
    consumer: 'health, notifications',
    description: 'One regression Finding (G2), published best-effort (G6). Both denominators travel with the difference (G3).',
  },
};

/** Shown in `examples`: the metadata the docs use, so a reader sees one consistent flow. */
const EXAMPLE_METADATA = {
  message_id: '01JN7X81QK3M5V2W9ZT4RB6HDE',
  correlation_id: 'ci-4711',
  causation_id: 'ci-4711',
  occurred_at: '2025-03-01T12:00:01.000Z',
} as const;

export interface AsyncApiOptions {
  /** The application version in `info.version`. */
  readonly version?: string;
  /** Defaults to the registry; tests pass others. */
  readonly definitions?: readonly MessageDefinition[];
}

/** The AsyncAPI 3 document of the bus contract. Throws SchemaGenerationError when a message has no complete schema. */
export function buildAsyncApiDocument(options: AsyncApiOptions = {}): AsyncApiDocument {
  const definitions = options.definitions ?? (MESSAGE_DEFINITIONS as unknown as readonly MessageDefinition[]);
  const ctx = new SchemaContext();
  const metadataRefs = {
    inbound: ctx.define('InboundMetadata', metadataSchema('inbound')),
    outbound: ctx.define('MessageMetadata', metadataSchema('outbound')),
  };
  const headersRef = ctx.define('NatsHeaders', {
    type: 'object',
    description: `JetStream headers. ${NATS_MSG_ID_HEADER} is metadata.message_id: the stream drops a re-published duplicate within its duplicate window, so a producer that retries must reuse it.`,
    required: [NATS_MSG_ID_HEADER],
    properties: { [NATS_MSG_ID_HEADER]: { ...idSchema(), description: 'Equal to metadata.message_id.' } },
  });

  for (const def of definitions) {
    if (!(ALL_SUBJECTS as readonly string[]).includes(def.type)) {
      throw new SchemaGenerationError(`${def.schema}: ${def.type} is not a subject of subjects.ts`);
    }
  }
  const channels: Record<string, JsonSchema> = {};
  const operations: Record<string, JsonSchema> = {};
  const messages: Record<string, JsonSchema> = {};
  for (const subject of ALL_SUBJECTS) {
    const info = SUBJECT_INFO[subject];
    if (info === undefined) throw new SchemaGenerationError(`subject ${subject} has no description in asyncapi.ts`);
    const defs = definitions.filter((d) => d.type === subject).sort((a, b) => a.version - b.version);
    if (defs.length === 0) throw new SchemaGenerationError(`subject ${subject} has no registered message version`);
    const direction = defs[0]!.direction;
    if (defs.some((d) => d.direction !== direction)) throw new SchemaGenerationError(`subject ${subject} mixes directions`);

    const channelMessages: Record<string, JsonSchema> = {};
    for (const def of defs) {
      if (messages[def.schema] !== undefined) throw new SchemaGenerationError(`${def.schema} is registered twice`);
      messages[def.schema] = messageObject(def, ctx.refTo(def.dto, def.direction), metadataRefs[def.direction], headersRef);
      channelMessages[def.schema] = { $ref: `#/components/messages/${def.schema}` };
    }
    channels[subject] = {
      address: subject,
      title: info.title,
      description: `${info.description} Producer: ${info.producer}. Consumer: ${info.consumer}. Versions: ${defs.map((d) => `v${d.version}`).join(', ')}.`,
      messages: channelMessages,
    };
    const action = direction === 'inbound' ? 'receive' : 'send';
    operations[`${subject}.${action}`] = {
      action,
      channel: { $ref: `#/channels/${subject}` },
      summary:
        direction === 'inbound'
          ? `evals consumes ${subject}; a message that breaks its schema is dead-lettered with a code (${DECODE_ERROR_CODES.join(', ')}) and acknowledged.`
          : `evals publishes ${subject}; consumers must ignore fields they do not know (tolerant reader).`,
      messages: defs.map((d) => ({ $ref: `#/channels/${subject}/messages/${d.schema}` })),
    };
  }

  return {
    asyncapi: ASYNCAPI_VERSION,
    id: 'urn:evals:bus',
    info: {
      title: 'evals bus contract',
      version: options.version ?? '0.1.0',
      description:
        'The messages the evals service consumes and publishes on NATS JetStream (spec section 10), generated from ' +
        '@evals/contracts. Every message is one UTF-8 JSON envelope {schema, type, version, data, metadata} of at most ' +
        `${MAX_MESSAGE_BYTES} bytes, published with the ${NATS_MSG_ID_HEADER} header. Inbound data refuses unknown ` +
        'fields; outbound data may gain optional fields within a version. Cross-field rules are in docs/contracts.md.',
      license: { name: 'Apache-2.0' },
    },
    defaultContentType: 'application/json',
    servers: {
      jetstream: {
        host: '{host}',
        protocol: 'nats',
        description: 'The deployment\'s NATS JetStream (NATS_URL). Subjects carry EVALS_SUBJECT_PREFIX, empty in production.',
        variables: { host: { default: 'localhost:4222', description: 'host:port of a NATS server' } },
      },
    },
    channels,
    operations,
    components: { messages, schemas: sortKeys(ctx.schemas) },
  };
}

function messageObject(def: MessageDefinition, dataRef: JsonSchema, metadataRef: JsonSchema, headersRef: JsonSchema): JsonSchema {
  return {
    name: def.schema,
    title: `${def.type} v${def.version}`,
    summary: `${SUBJECT_INFO[def.type].title} (${def.direction}); data is ${schemaNameOf(def.dto)}.`,
    contentType: 'application/json',
    correlationId: { location: '$message.payload#/metadata/correlation_id' },
    headers: headersRef,
    payload: {
      type: 'object',
      description: 'The envelope. Unknown top-level and metadata keys are ignored (the envelope may grow).',
      required: ['schema', 'type', 'version', 'data', 'metadata'],
      properties: {
        schema: { type: 'string', const: def.schema },
        type: { type: 'string', const: def.type },
        version: { type: 'integer', const: def.version },
        data: dataRef,
        metadata: metadataRef,
      },
    },
    examples: [
      {
        name: `${def.schema}.example`,
        summary: 'A valid message (the library exports the same data).',
        headers: { [NATS_MSG_ID_HEADER]: EXAMPLE_METADATA.message_id },
        payload: { schema: def.schema, type: def.type, version: def.version, data: def.example, metadata: EXAMPLE_METADATA },
      },
    ],
  };
}

/** Correlation and causation are optional (or null) on inbound messages and default to message_id. */
function metadataSchema(direction: 'inbound' | 'outbound'): JsonSchema {
  const optionalId: JsonSchema = { anyOf: [idSchema(), { type: 'null' }], description: 'Absent or null: defaults to message_id.' };
  return {
    type: 'object',
    required: direction === 'inbound' ? ['message_id', 'occurred_at'] : ['message_id', 'correlation_id', 'causation_id', 'occurred_at'],
    properties: {
      message_id: { ...idSchema(), description: `Unique per message; also the ${NATS_MSG_ID_HEADER} header.` },
      correlation_id: direction === 'inbound' ? optionalId : { ...idSchema(), description: 'Shared by every message of one flow.' },
      causation_id: direction === 'inbound' ? optionalId : { ...idSchema(), description: 'The message (or request) that caused this one.' },
      occurred_at: { type: 'string', format: 'date-time', pattern: TIMESTAMP_PATTERN.source, description: 'When the producer emitted the message.' },
    },
  };
}

function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The document as docs/asyncapi.json holds it: two-space indentation and a final newline. */
export function renderAsyncApiJson(options: AsyncApiOptions = {}): string {
  return `${JSON.stringify(buildAsyncApiDocument(options), null, 2)}\n`;
}
