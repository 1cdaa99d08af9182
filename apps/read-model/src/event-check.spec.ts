/**
 * The read model's edge check (D1): the stored form (metadata, position) is checked here, the event itself
 * by the run events' codec (`decodeRunEvent`, libs/domain: its rules are tested there); one reason for both.
 */
import { randomUUID } from 'node:crypto';
import { checkEvent } from './event-check';

const SECRET = 'sk-live-SECRET-VALUE-1234';
const messageId = randomUUID();
const stored = (patch: object = {}) => ({
  type: 'run.sealed',
  version: 1,
  data: { run_id: 'ci-1' },
  metadata: { message_id: messageId, occurred_at: '2026-11-30T09:03:00.000Z', correlation_id: 'corr-1' },
  position: 42,
  stream_id: 'run-ci-1',
  stream_version: 2,
  ...patch,
});

describe('checkEvent: the stored form here, the event by the codec (D1)', () => {
  it('accepts a stored event: the decoded event, its metadata and position', () => {
    expect(checkEvent(stored())).toEqual({
      ok: true,
      value: {
        event: { type: 'run.sealed', version: 1, data: { run_id: 'ci-1' } },
        metadata: { message_id: messageId, correlation_id: 'corr-1', occurred_at: '2026-11-30T09:03:00.000Z' },
        position: 42,
      },
    });
  });

  it('falls back to the message id when there is no correlation id (the event started its own flow)', () => {
    const r = checkEvent(stored({ metadata: { message_id: messageId, occurred_at: '2026-11-30T09:03:00.000Z' } }));
    expect(r.ok && r.value.metadata.correlation_id).toBe(messageId);
  });

  it.each<[string, object | null, string]>([
    ['not an object', null, 'event: isObject'],
    ['no metadata', { metadata: undefined }, 'metadata: isObject'],
    ['metadata an array', { metadata: [messageId] }, 'metadata: isObject'],
    ['a message id not a UUID', { metadata: { message_id: SECRET, occurred_at: '2026-11-30T09:03:00.000Z' } }, 'metadata.message_id: isUuid'],
    ['a time not RFC 3339', { metadata: { message_id: messageId, occurred_at: `${SECRET} 2026` } }, 'metadata.occurred_at: isTimestamp'],
    ['an unsafe correlation id', { metadata: { message_id: messageId, occurred_at: '2026-11-30T09:03:00.000Z', correlation_id: `${SECRET}/..` } }, 'metadata.correlation_id: isSafeId'],
    ['position 0', { position: 0 }, 'position: isPositiveInteger'],
    ['position a string', { position: '42' }, 'position: isPositiveInteger'],
    ['the event refused by the codec', { data: { run_id: 'ci-1', reason: SECRET } }, 'data.reason: isSealReason'],
    [
      'both: the stored form first, then the event',
      { metadata: { message_id: SECRET }, position: -1, type: 'cases.scored', version: 2, data: { run_id: 'ci-1', n: 1, passed: 2, score_sum: 1 } },
      'metadata.message_id: isUuid; metadata.occurred_at: isTimestamp; position: isPositiveInteger; data.passed: isCountNotAboveN',
    ],
  ])('refuses %s, naming fields only', (_name, patch, reason) => {
    const r = checkEvent(patch === null ? null : stored(patch));
    expect(r).toMatchObject({ ok: false, reason });
    expect(JSON.stringify(r)).not.toContain('SECRET');
  });

  it('carries the message id of a refused event when it is a UUID, for its dead letter', () => {
    expect(checkEvent(stored({ type: SECRET }))).toEqual({ ok: false, reason: 'type: isRunEventType', message_id: messageId });
    expect(checkEvent(stored({ metadata: { message_id: SECRET }, type: SECRET }))).toEqual({
      ok: false,
      reason: 'metadata.message_id: isUuid; metadata.occurred_at: isTimestamp; type: isRunEventType',
    });
  });
});
