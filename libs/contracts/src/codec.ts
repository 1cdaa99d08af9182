import { ContractError, type DecodeErrorCode } from './contract-error';
import {
  MAX_TYPE_NAME_LENGTH,
  type MessageMetadata,
  SCHEMA_NAME_PATTERN,
  TYPE_NAME_PATTERN,
} from './envelope';
import { DEFAULT_PROJECT, isProjectId, isSafeId, projectField, isTimestamp, MAX_MESSAGE_BYTES, MAX_OUTPUT_BYTES, utf8ByteLength } from './limits';
import { type MessageDefinition, schemaName } from './message-definition';
import {
  type AnyMessage,
  findDefinition,
  type Message,
  type MessageData,
  type MessageType,
  type MessageVersion,
  type SchemaOf,
  versionsOf,
} from './registry';
import { OUTBOUND_SUBJECTS, projectSubject, type Subject } from './subjects';
import { validateCompiled } from './validation/compiled-dto';
import { type DtoValidation, type FieldIssue, isPlainObject, validateDto } from './validation/dto-validation';

/*
 * Reasons are assembled here from field paths, constraint names, the subject and integer limits only. No
 * value from a payload (and no text of a JSON.parse or class-validator error, which quote input) ever
 * reaches a reason: reasons go to dead-letter queues, logs and metrics, and the output must not (D1).
 */

export interface DecodeFailure {
  readonly ok: false;
  readonly code: DecodeErrorCode;
  /** Field paths and constraint names; never a payload value. */
  readonly reason: string;
  readonly subject: string;
  /** Present when the envelope carried a well-formed message_id. */
  readonly message_id?: string;
  /** The same problems as `reason`, structured. */
  readonly issues: readonly FieldIssue[];
}

/**
 * One item of a batch message (MessageDefinition.itemised) that was taken out: its position in the batch as
 * sent, its case id when that was well-formed, and the same code and reason a message of its own would get.
 */
export interface RefusedItem {
  readonly index: number;
  readonly case_id: string | null;
  readonly code: DecodeErrorCode;
  /** Field paths (`data.outputs[3].output`) and constraint names; never a payload value. */
  readonly reason: string;
}

export interface DecodeSuccess {
  readonly ok: true;
  readonly message: AnyMessage;
  /** A batch message's invalid items, taken out of `message.data` (empty or absent: none). */
  readonly refused?: readonly RefusedItem[];
}

export type DecodeResult = DecodeSuccess | DecodeFailure;

/** At most this many issues are spelled out in a reason; the rest are counted. */
export const MAX_REASON_ISSUES = 20;

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Decodes one message received on `subject`. Never throws, whatever the bytes: every refusal is a
 * `DecodeFailure` whose code says which dead-letter reason applies.
 */
export function decodeMessage(subject: string, payload: Uint8Array | string): DecodeResult {
  try {
    return decode(subject, payload);
  } catch {
    // Unreachable by design; a bug here must dead-letter one message, not crash the consumer. The
    // error text is not used: it could quote the payload.
    return failure(subject, 'DECODER_ERROR', [{ field: 'envelope', constraint: 'decoderError' }]);
  }
}

/**
 * A message travels on its type. Issue 30: an outbound one, on its type with its project's token
 * (projectSubject) - the project its own envelope names - so no message reaches another project's
 * consumers, `default`'s on the bare subject included.
 */
function onItsSubject(subject: string, type: string, project: unknown): boolean {
  if (!(OUTBOUND_SUBJECTS as readonly string[]).includes(type)) return subject === type;
  return subject === projectSubject(type as Subject, typeof project === 'string' ? project : DEFAULT_PROJECT);
}

function decode(subject: string, payload: Uint8Array | string): DecodeResult {
  const size = typeof payload === 'string' ? utf8ByteLength(payload) : payload.byteLength;
  if (size > MAX_MESSAGE_BYTES) {
    return failure(subject, 'MESSAGE_TOO_LARGE', [{ field: 'message', constraint: 'maxMessageBytes' }]);
  }
  let text: string;
  if (typeof payload === 'string') {
    text = payload;
  } else {
    try {
      text = UTF8.decode(payload);
    } catch {
      return failure(subject, 'MALFORMED_JSON', [{ field: 'message', constraint: 'utf8' }]);
    }
  }
  // RFC 8259 section 8.1: a parser may ignore a byte order mark.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch {
    return failure(subject, 'MALFORMED_JSON', [{ field: 'message', constraint: 'json' }]);
  }

  if (!isPlainObject(root)) return failure(subject, 'INVALID_ENVELOPE', [{ field: 'envelope', constraint: 'isObject' }]);
  const env = readEnvelope(root);
  if (env.issues.length > 0) return failure(subject, 'INVALID_ENVELOPE', env.issues, env.messageId);
  const { schema, type, version, messageId } = env;

  if (schema !== schemaName(type, version)) {
    return failure(subject, 'SCHEMA_MISMATCH', [{ field: 'schema', constraint: 'equalsTypeDotVersion' }], messageId);
  }
  if (!onItsSubject(subject, type, (root['metadata'] as Record<string, unknown>)['project'])) {
    return failure(subject, 'SCHEMA_MISMATCH', [{ field: 'type', constraint: 'equalsSubject' }], messageId);
  }
  const def = findDefinition(schema);
  if (def === undefined) {
    // `type` equals the subject here, so naming the subject and the integer version quotes nothing new.
    const known = versionsOf(subject);
    return failure(subject, 'UNKNOWN_SCHEMA', [{ field: 'version', constraint: 'registered' }], messageId,
      `no decoder for ${subject} version ${version}` +
        (known.length > 0 ? ` (known: ${known.map((v) => `v${v}`).join(', ')})` : ' (unknown message type)'));
  }

  const checked = validatePayload(def, root['data'], def.direction === 'inbound' ? 'refuse' : 'strip');
  if (!checked.ok) return failure(subject, checked.code, checked.issues, messageId);

  const meta = root['metadata'] as Record<string, unknown>;
  const metadata: MessageMetadata = {
    message_id: messageId,
    correlation_id: optionalId(meta['correlation_id']) ?? messageId,
    causation_id: optionalId(meta['causation_id']) ?? messageId,
    occurred_at: meta['occurred_at'] as string,
    ...projectField(meta['project']),
  };
  const message = { schema, type, version, data: checked.data, metadata } as unknown as AnyMessage;
  return checked.refused && checked.refused.length > 0 ? { ok: true, message, refused: checked.refused } : { ok: true, message };
}

interface EnvelopeFields {
  readonly issues: FieldIssue[];
  readonly schema: string;
  readonly type: string;
  readonly version: number;
  /** '' when absent or malformed. */
  readonly messageId: string;
}

/**
 * Unknown top-level and metadata keys are ignored: the envelope is shared across teams and may grow (a
 * trace header, say) without any behaviour of ours depending on it.
 */
function readEnvelope(root: Record<string, unknown>): EnvelopeFields {
  const issues: FieldIssue[] = [];
  const { schema, type, version, metadata } = root;
  if (schema === undefined) issues.push({ field: 'schema', constraint: 'required' });
  else if (!isName(schema, SCHEMA_NAME_PATTERN)) issues.push({ field: 'schema', constraint: 'isSchemaName' });
  if (type === undefined) issues.push({ field: 'type', constraint: 'required' });
  else if (!isName(type, TYPE_NAME_PATTERN)) issues.push({ field: 'type', constraint: 'isTypeName' });
  if (version === undefined) issues.push({ field: 'version', constraint: 'required' });
  else if (!(typeof version === 'number' && Number.isSafeInteger(version) && version >= 1)) {
    issues.push({ field: 'version', constraint: 'isVersion' });
  }
  if (!Object.prototype.hasOwnProperty.call(root, 'data')) issues.push({ field: 'data', constraint: 'required' });
  let messageId = '';
  if (metadata === undefined) issues.push({ field: 'metadata', constraint: 'required' });
  else if (!isPlainObject(metadata)) issues.push({ field: 'metadata', constraint: 'isObject' });
  else {
    const id = metadata['message_id'];
    if (id === undefined) issues.push({ field: 'metadata.message_id', constraint: 'required' });
    else if (!isSafeId(id)) issues.push({ field: 'metadata.message_id', constraint: 'isSafeId' });
    else messageId = id;
    for (const key of ['correlation_id', 'causation_id'] as const) {
      const v = metadata[key];
      if (v !== undefined && v !== null && !isSafeId(v)) issues.push({ field: `metadata.${key}`, constraint: 'isSafeId' });
    }
    const at = metadata['occurred_at'];
    if (at === undefined) issues.push({ field: 'metadata.occurred_at', constraint: 'required' });
    else if (!isTimestamp(at)) issues.push({ field: 'metadata.occurred_at', constraint: 'isTimestamp' });
    const project = metadata['project'];
    if (project !== undefined && !isProjectId(project)) issues.push({ field: 'metadata.project', constraint: 'isProjectId' });
  }
  return {
    issues,
    schema: schema as string,
    type: type as string,
    version: version as number,
    messageId,
  };
}

function isName(value: unknown, pattern: RegExp): value is string {
  return typeof value === 'string' && value.length <= MAX_TYPE_NAME_LENGTH && pattern.test(value);
}

function optionalId(value: unknown): string | undefined {
  return isSafeId(value) ? value : undefined;
}

type PayloadCheck =
  | { readonly ok: true; readonly data: Record<string, unknown>; readonly refused?: readonly RefusedItem[] }
  | { readonly ok: false; readonly code: DecodeErrorCode; readonly issues: readonly FieldIssue[] };

function validatePayload(def: MessageDefinition, data: unknown, unknownFields: 'refuse' | 'strip'): PayloadCheck {
  const whole = validateWhole(def, data, unknownFields);
  return whole.ok || def.itemised === undefined ? whole : salvageItems(def, def.itemised, data, whole, unknownFields);
}

/**
 * A batch whose only problems are inside some of its items: those items are taken out and reported, and the
 * rest is validated again as a message (so a batch of only invalid items is a valid, empty batch). Any
 * problem outside the items - the run id, the array itself, its size - refuses the whole message as before.
 */
function salvageItems(def: MessageDefinition, field: string, data: unknown, whole: Extract<PayloadCheck, { ok: false }>, unknownFields: 'refuse' | 'strip'): PayloadCheck {
  if (!isPlainObject(data) || !Array.isArray(data[field])) return whole;
  const items = data[field] as unknown[];
  const itemPath = new RegExp(`^data\\.${field}\\[(\\d+)\\](?:\\.|$)`);
  const byItem = new Map<number, FieldIssue[]>();
  for (const issue of whole.issues) {
    const at = itemPath.exec(issue.field);
    const index = at ? Number(at[1]) : NaN;
    if (!(index >= 0 && index < items.length)) return whole;
    byItem.set(index, [...(byItem.get(index) ?? []), issue]);
  }
  const refused: RefusedItem[] = [...byItem.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, issues]) => {
      const item = items[index];
      const caseId = isPlainObject(item) && isSafeId(item['case_id']) ? item['case_id'] : null;
      return { index, case_id: caseId, code: issues.some((i) => i.constraint === 'maxUtf8Bytes') ? 'OUTPUT_TOO_LARGE' : 'INVALID_PAYLOAD', reason: formatIssues(issues) };
    });
  const kept = items.filter((_, i) => !byItem.has(i));
  // Nothing left: every other field was valid, since no issue lay outside the items (an empty array would
  // only fail the batch's minimum size, which is about what was sent, not what is left).
  if (kept.length === 0) return { ok: true, data: { ...data, [field]: [] }, refused };
  const rest = validateWhole(def, { ...data, [field]: kept }, unknownFields);
  return rest.ok ? { ok: true, data: rest.data, refused } : whole;
}

function validateWhole(def: MessageDefinition, data: unknown, unknownFields: 'refuse' | 'strip'): PayloadCheck {
  const dropNulls = def.direction === 'inbound';
  const options = { unknownFields, dropNulls };
  // The compiled check first (no class instance per output): it only ever says "valid" or "ask the DTOs",
  // so every refusal below comes from class-validator, with the same issues and codes. What it accepts is
  // at most three levels deep with declared keys only, so the depth and forbidden-key walks have nothing
  // to find there.
  const checked: DtoValidation =
    (isPlainObject(data) ? validateCompiled(def.dto, data, options) : null) ?? validateDto(def.dto, data, 'data', options);
  const issues: FieldIssue[] = checked.ok ? [] : [...checked.issues];
  const structural = checked.ok || !issues.some((i) => i.field === 'data');
  if (def.extraChecks !== undefined && structural && isPlainObject(data)) {
    issues.push(...prefixed(def.extraChecks(data)));
  }
  if (issues.length === 0 && checked.ok && def.invariants !== undefined) {
    issues.push(...prefixed(def.invariants(checked.value)));
  }
  if (issues.length > 0) {
    const tooLarge = issues.some((i) => i.constraint === 'maxUtf8Bytes');
    return { ok: false, code: tooLarge ? 'OUTPUT_TOO_LARGE' : 'INVALID_PAYLOAD', issues };
  }
  return { ok: true, data: (checked as { value: Record<string, unknown> }).value };
}

function prefixed(issues: readonly FieldIssue[]): FieldIssue[] {
  return issues.map((i) => ({ field: i.field === '' ? 'data' : `data.${i.field}`, constraint: i.constraint }));
}

function failure(
  subject: string,
  code: DecodeErrorCode,
  issues: readonly FieldIssue[],
  messageId = '',
  reason = formatIssues(issues),
): DecodeFailure {
  return messageId === ''
    ? { ok: false, code, reason, subject, issues }
    : { ok: false, code, reason, subject, message_id: messageId, issues };
}

export function formatIssues(issues: readonly FieldIssue[]): string {
  const shown = issues.slice(0, MAX_REASON_ISSUES).map((i) => `${i.field}: ${describe(i.constraint)}`);
  const rest = issues.length - shown.length;
  return shown.join('; ') + (rest > 0 ? `; and ${rest} more` : '');
}

function describe(constraint: string): string {
  switch (constraint) {
    case 'maxUtf8Bytes':
      return `maxUtf8Bytes (limit ${MAX_OUTPUT_BYTES} bytes)`;
    case 'maxMessageBytes':
      return `maxMessageBytes (limit ${MAX_MESSAGE_BYTES} bytes)`;
    default:
      return constraint;
  }
}

/**
 * Builds the wire object for an outbound (or test) message, validating `data` at the edge exactly as a
 * consumer will: unknown fields refused, every invariant checked. Throws ContractError: an invalid
 * message of our own is a bug, not data. Publish it with `metadata.message_id` as the Nats-Msg-Id header.
 */
export function encodeMessage<T extends MessageType, V extends MessageVersion<T>>(
  type: T,
  version: V,
  data: MessageData<T, V>,
  metadata: MessageMetadata,
): Message<SchemaOf<T, V>> {
  const schema = schemaName(type, version);
  const def = findDefinition(schema);
  if (def === undefined) throw new ContractError('UNKNOWN_SCHEMA', `no encoder for ${type} version ${version}`);
  const metaIssues: FieldIssue[] = [];
  for (const key of ['message_id', 'correlation_id', 'causation_id'] as const) {
    if (!isSafeId(metadata?.[key])) metaIssues.push({ field: `metadata.${key}`, constraint: 'isSafeId' });
  }
  if (!isTimestamp(metadata?.occurred_at)) metaIssues.push({ field: 'metadata.occurred_at', constraint: 'isTimestamp' });
  if (metadata?.project !== undefined && !isProjectId(metadata.project)) metaIssues.push({ field: 'metadata.project', constraint: 'isProjectId' });
  if (metaIssues.length > 0) throw new ContractError('INVALID_ENVELOPE', formatIssues(metaIssues));

  const checked = validatePayload(def, data, 'refuse');
  if (!checked.ok) throw new ContractError(checked.code, formatIssues(checked.issues));
  const wire = {
    schema,
    type,
    version,
    data: checked.data,
    metadata: {
      message_id: metadata.message_id,
      correlation_id: metadata.correlation_id,
      causation_id: metadata.causation_id,
      occurred_at: metadata.occurred_at,
      // Issue 30: a message of `default` is written as before projects (its subject too: projectSubject).
      ...projectField(metadata.project),
    },
  };
  if (utf8ByteLength(JSON.stringify(wire)) > MAX_MESSAGE_BYTES) {
    throw new ContractError('MESSAGE_TOO_LARGE', formatIssues([{ field: 'message', constraint: 'maxMessageBytes' }]));
  }
  return wire as unknown as Message<SchemaOf<T, V>>;
}

/** The bytes to publish for a wire message. */
export function serializeMessage(message: AnyMessage): Uint8Array {
  return Buffer.from(JSON.stringify(message), 'utf8');
}
