import { decodeMessage, SUBJECTS, type RunRequestedV1 } from '@evals/contracts';
import { IntakeError } from './intake-error';

/**
 * Validates an HTTP run request with the same contract as `evals.run.requested` v1 (class-validator DTOs in
 * libs/contracts), so HTTP and the bus cannot drift. Errors name fields and constraints, never a value (D1).
 * `extra` names body fields that belong to the caller (the gate's `sample`), removed before validation.
 */
export function parseRunRequest(body: unknown, requestId: string, now: string, extra: readonly string[] = []): RunRequestedV1 {
  if (!isObject(body)) throw new IntakeError('INVALID_REQUEST', 'the body must be a JSON object', 'body');
  const data: Record<string, unknown> = { ...body, run_id: body['run_id'] ?? requestId, source: body['source'] ?? 'inline', outputs: body['outputs'] ?? [] };
  for (const key of extra) delete data[key];
  const envelope = { schema: `${SUBJECTS.RUN_REQUESTED}.v1`, type: SUBJECTS.RUN_REQUESTED, version: 1, data, metadata: { message_id: requestId, occurred_at: now } };
  const decoded = decodeMessage(SUBJECTS.RUN_REQUESTED, JSON.stringify(envelope));
  if (!decoded.ok) {
    const issues = decoded.issues.map((i) => ({ field: i.field.replace(/^data\.?/, '') || 'body', constraint: i.constraint }));
    // R7: a second output for a case is its own refusal (422), as the worker's dead letter is on the bus.
    const duplicate = issues.length > 0 && issues.every((i) => i.constraint === 'uniqueCaseId');
    throw new IntakeError(
      decoded.code === 'OUTPUT_TOO_LARGE' ? 'OUTPUT_TOO_LARGE' : duplicate ? 'DUPLICATE_OUTPUT' : 'INVALID_REQUEST',
      `invalid request: ${issues.map((i) => `${i.field} (${i.constraint})`).join(', ')}`,
      issues[0]?.field,
      { issues },
    );
  }
  if (decoded.message.type !== SUBJECTS.RUN_REQUESTED) throw new IntakeError('INVALID_REQUEST', 'unexpected message type', 'body');
  return decoded.message.data;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
