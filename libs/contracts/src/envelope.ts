import { DEFAULT_PROJECT } from './limits';

/**
 * The envelope every message travels in: the house event style `{type, version, data, metadata}` plus the
 * `schema` field that spec section 10 requires, always equal to `${type}.v${version}`:
 *
 *   { "schema": "evals.run.requested.v1", "type": "evals.run.requested", "version": 1,
 *     "data": { ... }, "metadata": { "message_id", "correlation_id", "causation_id", "occurred_at" } }
 *
 * `metadata.message_id` is also the JetStream `Nats-Msg-Id` header, so a redelivered or re-published
 * message is de-duplicated by the server within its duplicate window.
 */
export interface MessageMetadata {
  /** Unique per message (ID_PATTERN). */
  readonly message_id: string;
  /** The id shared by every message of one flow (a CI job, a sandbox session). */
  readonly correlation_id: string;
  /** The message_id of the message (or request id) that caused this one. */
  readonly causation_id: string;
  /** When the producer emitted the message (RFC 3339 with offset). */
  readonly occurred_at: string;
  /**
   * Issue 30 (docs/adr/0009-projects.md): the project the message belongs to, PROJECT_ID_PATTERN. Added to
   * v1 additively: absent means `default`, in and out - a message of `default` is written exactly as before
   * projects. Read it with `messageProject`.
   */
  readonly project?: string;
}

/** The project of a message (issue 30): `metadata.project`, `default` when absent. */
export function messageProject(metadata: { readonly project?: string | null }): string {
  return typeof metadata.project === 'string' ? metadata.project : DEFAULT_PROJECT;
}

/**
 * Metadata as other teams may send it: correlation and causation are optional on inbound messages. A
 * message without them starts its own flow, so both default to its own message_id.
 */
export interface InboundMetadata {
  readonly message_id: string;
  readonly correlation_id?: string | null;
  readonly causation_id?: string | null;
  readonly occurred_at: string;
  /** Absent: the `default` project. */
  readonly project?: string;
}

export interface Envelope<TType extends string = string, TVersion extends number = number, TData = unknown> {
  readonly schema: `${TType}.v${TVersion}`;
  readonly type: TType;
  readonly version: TVersion;
  readonly data: TData;
  readonly metadata: MessageMetadata;
}

/** Header name under which `metadata.message_id` is published (JetStream de-duplication). */
export const NATS_MSG_ID_HEADER = 'Nats-Msg-Id';

/** Lowercase dotted names, e.g. `evals.run.requested`, `finding.reported`. */
export const TYPE_NAME_PATTERN = /^[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*$/;
export const SCHEMA_NAME_PATTERN = /^[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*\.v[1-9][0-9]*$/;
export const MAX_TYPE_NAME_LENGTH = 200;
