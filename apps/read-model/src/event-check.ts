import { isSafeId, isTimestamp } from '@evals/contracts';
import { decodeRunEvent, isUuid, joinIssues, type RunEvent } from '@evals/domain';

/**
 * Edge validation of one internal event before the run projection trusts it (docs/read-model.md). The
 * events come from our own log, but a malformed one must be dead-lettered, never poison the consumer: a
 * NOT NULL violation, a non-UUID message id in the inbox or a count that breaks the Wilson interval would
 * otherwise fail the whole micro-batch on every redelivery. Reasons name fields and constraints only, never
 * a value (D1): they go to the dead_letters table and the logs.
 *
 * Only the stored/wire form is checked here (metadata, log position); the event itself - `type`, `version`
 * and `data` - is the run events' one codec's, `decodeRunEvent` (libs/domain), whose issues follow these.
 */
export interface StoredEventLike {
  readonly type?: unknown;
  readonly version?: unknown;
  readonly data?: unknown;
  readonly metadata?: unknown;
  readonly position?: unknown;
  readonly stream_id?: unknown;
  readonly stream_version?: unknown;
}

export interface CheckedMetadata {
  readonly message_id: string;
  /** Falls back to message_id when absent (the event started its own flow). */
  readonly correlation_id: string;
  readonly occurred_at: string;
}

export interface CheckedEvent {
  readonly event: RunEvent;
  readonly metadata: CheckedMetadata;
  readonly position: number;
}

export type CheckResult = { readonly ok: true; readonly value: CheckedEvent } | { readonly ok: false; readonly reason: string; readonly message_id?: string };

export function checkEvent(raw: StoredEventLike | null | undefined): CheckResult {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { ok: false, reason: 'event: isObject' };
  const issues: string[] = [];
  const meta = raw.metadata as Record<string, unknown> | undefined;
  let messageId: string | undefined;
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) {
    issues.push('metadata: isObject');
  } else {
    if (isUuid(meta.message_id)) messageId = meta.message_id;
    else issues.push('metadata.message_id: isUuid');
    if (!isTimestamp(meta.occurred_at)) issues.push('metadata.occurred_at: isTimestamp');
    if (meta.correlation_id !== undefined && meta.correlation_id !== null && !isSafeId(meta.correlation_id)) {
      issues.push('metadata.correlation_id: isSafeId');
    }
  }
  if (!(typeof raw.position === 'number' && Number.isSafeInteger(raw.position) && raw.position >= 1)) issues.push('position: isPositiveInteger');
  const decoded = decodeRunEvent(raw);
  if (!decoded.ok) issues.push(...decoded.issues);
  if (!decoded.ok || issues.length > 0) return failure(issues, messageId);

  const m = meta as Record<string, unknown>;
  return {
    ok: true,
    value: {
      event: decoded.event,
      metadata: {
        message_id: messageId as string,
        correlation_id: isSafeId(m.correlation_id) ? m.correlation_id : (messageId as string),
        occurred_at: m.occurred_at as string,
      },
      position: raw.position as number,
    },
  };
}

function failure(issues: readonly string[], messageId: string | undefined): CheckResult {
  const reason = joinIssues(issues);
  return messageId === undefined ? { ok: false, reason } : { ok: false, reason, message_id: messageId };
}
