import { RUN_RULE_CODES, RunRuleError, type RunRuleCode } from '@evals/domain';
import { ApiError } from '@evals/platform';

/**
 * A refusal of the intake, with a stable code and the offending field; its HTTP status comes from the
 * platform's catalogue (libs/platform/src/api-error.ts). The same errors dead-letter a bus message (code +
 * reason) and answer an HTTP request. Messages name fields and ids, never an output (D1).
 */
export type IntakeErrorCode =
  | 'INVALID_REQUEST'
  | 'OUTPUT_TOO_LARGE'
  | 'SUITE_NOT_FOUND'
  | 'SUITE_VERSION_NOT_FOUND'
  | 'UNKNOWN_CASE'
  | 'DUPLICATE_OUTPUT'
  | 'UNKNOWN_RUN'
  | 'RUN_SEALED'
  | 'SUITE_INVALID'
  | 'RUN_PENDING'
  | 'BASELINE_NOT_FOUND'
  | 'BASELINE_OTHER_SUITE'
  | 'LATE_SIGNAL'
  | 'GATE_NOT_FOUND'
  | 'NOTHING_TO_OVERRIDE'
  /** GT7: a gate over several suites names one suite twice. */
  | 'DUPLICATE_SUITE'
  /** The bus did not take a message (timeout, no responders, closed): retry the same request later. */
  | 'BUS_UNAVAILABLE'
  // The run model's rules (R7, libs/domain run.model.ts), as `intakeErrorOf` maps them.
  | RunRuleCode;

/**
 * An intake refusal: an ApiError of @evals/platform, whose catalogue maps the code to the HTTP status (the
 * one mapping for every app). `transient` tells the bus consumers to redeliver rather than dead-letter.
 */
export class IntakeError extends ApiError {
  declare readonly code: IntakeErrorCode;

  constructor(code: IntakeErrorCode, message: string, field?: string, details?: unknown) {
    super(code, message, field, details);
    this.name = 'IntakeError';
  }

  /** A transient failure: the same request (or message) succeeds later; never dead-lettered. */
  get transient(): boolean {
    return this.retryAfterSeconds !== undefined;
  }
}

/**
 * A rule of the run model broken (R7), as the intake answers it. The model's codes are kept, except that a
 * run never opened stays `UNKNOWN_RUN`, the code clients and dead letters have always had for it.
 */
export function intakeErrorOf(error: RunRuleError): IntakeError {
  const code: IntakeErrorCode = error.code === RUN_RULE_CODES.runNotFound ? 'UNKNOWN_RUN' : error.code;
  return new IntakeError(code, error.message, error.field);
}

/**
 * What a run that is not there answers - also a run of another project (issue 30, docs/adr/0009-projects.md):
 * the same code and a message naming only the id the caller sent, so nothing tells the two apart.
 */
export function unknownRun(runId: string, field = 'run_id'): IntakeError {
  return new IntakeError('UNKNOWN_RUN', `no run ${runId}`, field);
}

/**
 * A run id another project's run already has (issue 30): RUN_ID_CONFLICT with the run model's message for
 * any conflict, word for word (RunModel.decide, `open`), naming nothing of the other run.
 */
export function runIdConflict(runId: string): IntakeError {
  return new IntakeError('RUN_ID_CONFLICT', `run ${runId} exists with other content; use a new run_id for a new run`, 'run_id');
}

/** Runs `fn`, answering a broken rule of the run model as an IntakeError (HTTP status, dead-letter code). */
export async function underRunRules<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw error instanceof RunRuleError ? intakeErrorOf(error) : error;
  }
}

/**
 * The bus did not take a message. Whatever the adapter threw - JetStream's TimeoutError, JetStreamNotEnabled
 * (no responders), ClosedConnectionError or DrainingConnectionError, the in-process bus's closed bus or a
 * failed journal write - nothing of the request was wrong and every message id derives from the request, so
 * the same request again completes the run: 503 with Retry-After, never a 500. The adapter's error stays as
 * the cause, for logs; its message is not shown to the client.
 */
export function busUnavailable(cause: unknown): IntakeError {
  const error = new IntakeError('BUS_UNAVAILABLE', 'the message bus did not accept the run\'s messages; retry the same request', undefined);
  (error as { cause?: unknown }).cause = cause;
  return error;
}
