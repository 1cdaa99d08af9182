/**
 * A refusal of the intake, with a stable code, the offending field and an HTTP status. The same errors
 * dead-letter a bus message (code + reason) and answer an HTTP request. Messages name fields and ids,
 * never an output (D1).
 */
export type IntakeErrorCode =
  | 'INVALID_REQUEST'
  | 'OUTPUT_TOO_LARGE'
  | 'SUITE_NOT_FOUND'
  | 'SUITE_VERSION_NOT_FOUND'
  | 'UNKNOWN_CASE'
  | 'DUPLICATE_CASE'
  | 'RUN_ID_CONFLICT'
  | 'UNKNOWN_RUN'
  | 'RUN_SEALED'
  | 'SUITE_INVALID'
  | 'RUN_PENDING'
  | 'BASELINE_NOT_FOUND'
  | 'BASELINE_OTHER_SUITE'
  | 'LATE_SIGNAL'
  | 'GATE_NOT_FOUND'
  | 'NOTHING_TO_OVERRIDE';

const STATUS: Record<IntakeErrorCode, number> = {
  INVALID_REQUEST: 400,
  OUTPUT_TOO_LARGE: 413,
  SUITE_NOT_FOUND: 404,
  SUITE_VERSION_NOT_FOUND: 404,
  UNKNOWN_CASE: 422,
  DUPLICATE_CASE: 422,
  RUN_ID_CONFLICT: 409,
  UNKNOWN_RUN: 404,
  RUN_SEALED: 409,
  SUITE_INVALID: 422,
  // Not an error: the run is accepted and still being scored (POST /v1/runs past its wait).
  RUN_PENDING: 202,
  BASELINE_NOT_FOUND: 422,
  BASELINE_OTHER_SUITE: 422,
  LATE_SIGNAL: 409,
  GATE_NOT_FOUND: 404,
  NOTHING_TO_OVERRIDE: 409,
};

export class IntakeError extends Error {
  readonly status: number;
  constructor(
    readonly code: IntakeErrorCode,
    message: string,
    readonly field?: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.status = STATUS[code];
  }
}
