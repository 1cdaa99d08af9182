/**
 * Why a message was refused. Dead-letter metrics, logs and the DLQ are keyed on these codes; never on the
 * reason text.
 */
export const DECODE_ERROR_CODES = [
  /** The message is larger than MAX_MESSAGE_BYTES; checked before anything is parsed. */
  'MESSAGE_TOO_LARGE',
  /** Not UTF-8, or not one JSON text. */
  'MALFORMED_JSON',
  /** Not an object, or `schema`/`type`/`version`/`data`/`metadata` missing or of the wrong shape. */
  'INVALID_ENVELOPE',
  /** `schema` is not `${type}.v${version}`, or `type` is not the subject the message arrived on. */
  'SCHEMA_MISMATCH',
  /** A well-formed envelope whose (type, version) has no decoder here. */
  'UNKNOWN_SCHEMA',
  /** `data` breaks the payload schema. */
  'INVALID_PAYLOAD',
  /** A candidate output is larger than MAX_OUTPUT_BYTES. */
  'OUTPUT_TOO_LARGE',
  /** The decoder itself failed: a bug here. The message is dead-lettered instead of crashing the consumer. */
  'DECODER_ERROR',
] as const;

export type DecodeErrorCode = (typeof DECODE_ERROR_CODES)[number];

/**
 * Thrown only on the way out (`encodeMessage`): an outbound message that breaks its own contract is a bug in
 * this service, not data. The message names fields and constraints, never values.
 */
export class ContractError extends Error {
  override readonly name = 'ContractError';

  constructor(
    readonly code: DecodeErrorCode,
    readonly reason: string,
  ) {
    super(`${code}: ${reason}`);
  }
}
