/**
 * The one error mechanism of the HTTP edge (docs/http-api.md): a domain error carries a stable code, and
 * this catalogue - nothing else - maps the code to its HTTP status. ApiExceptionFilter answers every error
 * as `{code, message, field?, details?}`; the OpenAPI document lists, per status, the codes it can carry.
 * A code used by a service but missing here does not type-check (`ApiErrorCode`).
 */
export const API_ERROR_CODES = {
  // 400: the request itself is malformed.
  INVALID_REQUEST: { status: 400, description: 'A field is missing, of the wrong type or out of range; `field` names it.' },
  MALFORMED_JSON: { status: 400, description: 'The body is not valid JSON.' },
  BODY_TOO_DEEP: { status: 400, description: 'The JSON body nests objects or arrays deeper than the documented limit (checked before parsing).' },
  MALFORMED_REQUEST: { status: 400, description: 'The bytes are not an HTTP/1.1 request; the connection is closed.' },
  TARGET_INVALID: { status: 400, description: 'A calibration target is not a number in (0, 1].' },
  // 401/403/429: access control (docs/security.md).
  UNAUTHENTICATED: { status: 401, description: 'No API key, an unknown one or a revoked one.' },
  FORBIDDEN: { status: 403, description: "The key's tier is below the route's." },
  RATE_LIMITED: { status: 429, description: 'More write requests per minute than the key may make; retry after `Retry-After` seconds.' },
  // 404: something named by the request does not exist.
  NOT_FOUND: { status: 404, description: 'No such route.' },
  SUITE_NOT_FOUND: { status: 404, description: 'No suite with that key (or that version is no longer stored).' },
  SUITE_VERSION_NOT_FOUND: { status: 404, description: 'The suite has no such version.' },
  UNKNOWN_RUN: { status: 404, description: 'No open run with that id (ingestion).' },
  RUN_NOT_FOUND: { status: 404, description: 'No such (completed) run.' },
  GATE_NOT_FOUND: { status: 404, description: 'No gate verdict with that id.' },
  FINDING_NOT_FOUND: { status: 404, description: 'The run has no finding (it did not regress, or is not compared yet).' },
  SET_NOT_FOUND: { status: 404, description: 'No calibration set with that id.' },
  REPORT_NOT_FOUND: { status: 404, description: 'No calibration report with that id.' },
  COMPARISON_NOT_FOUND: { status: 404, description: 'No pairwise comparison with that id.' },
  UPSTREAM_NOT_CONFIGURED: { status: 404, description: 'The dashboard has no other app to forward this request to: this process serves the route itself.' },
  KEY_NOT_FOUND: { status: 404, description: 'No API key with that id.' },
  PROJECT_NOT_FOUND: { status: 404, description: "No such project for this key: it does not exist, or the key belongs to another (the answer is the same, issue 30)." },
  // 408: too slow.
  REQUEST_TIMEOUT: { status: 408, description: 'The request was not received in time; the connection is closed.' },
  // 409: the request conflicts with the state of a run or a gate.
  RUN_ID_CONFLICT: { status: 409, description: 'The run id is taken by a run with other content.' },
  PROJECT_ID_TAKEN: { status: 409, description: 'A project with that id exists.' },
  RUN_SEALED: { status: 409, description: 'The run is sealed; it takes no more outputs.' },
  RUN_NOT_SEALED: { status: 409, description: 'The run is not sealed yet.' },
  RUN_NOT_EXPIRED: { status: 409, description: "The run's time is not up." },
  RUN_NOT_SCORED: { status: 409, description: "The run's scoring is not over." },
  LATE_SIGNAL: { status: 409, description: 'A session signal for a run that is already decided.' },
  NOTHING_TO_OVERRIDE: { status: 409, description: 'The gate verdict is already the one asked for.' },
  // 413: too large.
  PAYLOAD_TOO_LARGE: { status: 413, description: 'The body is larger than HTTP_BODY_LIMIT_MB.' },
  OUTPUT_TOO_LARGE: { status: 413, description: 'An output is larger than 512 KiB (UTF-8).' },
  // 431: refused by the HTTP parser, before any route.
  HEADERS_TOO_LARGE: { status: 431, description: 'The request line and headers are larger than 16 KiB; the connection is closed.' },
  // 422: well-formed, but the content breaks a rule of the domain.
  SUITE_INVALID: { status: 422, description: 'The suite is refused; `details.errors` lists every problem with its case and field.' },
  UNKNOWN_CASE: { status: 422, description: 'An output names a case the suite does not have.' },
  DUPLICATE_OUTPUT: { status: 422, description: 'Two outputs for one case.' },
  EMPTY_RUN: { status: 422, description: 'The outputs list is empty.' },
  BASELINE_NOT_FOUND: { status: 422, description: 'The explicit baseline run does not exist or is not completed.' },
  BASELINE_OTHER_SUITE: { status: 422, description: 'The baseline is a run of another suite.' },
  BASELINE_OTHER_SUBJECT: { status: 422, description: 'The baseline is a run of another subject.' },
  DUPLICATE_SUITE: { status: 422, description: 'A gate over several suites names one suite twice.' },
  RUBRIC_REQUIRED: { status: 422, description: 'No rubric to judge against.' },
  DUPLICATE_ITEM: { status: 422, description: 'An item id appears twice.' },
  DUPLICATE_CASE: { status: 422, description: 'A case id appears twice.' },
  OUTPUTS_MISSING: { status: 422, description: 'Items of the calibration set have no output to judge.' },
  UNKNOWN_ITEM: { status: 422, description: 'An output names an item the calibration set does not have.' },
  GOLDEN_NOT_AUTHORISED: { status: 422, description: 'Text was sent for a set not marked golden (D4).' },
  OUTPUT_HASH_MISMATCH: { status: 422, description: 'An output does not hash to its labelled output_hash.' },
  OUTPUT_CHARS_MISMATCH: { status: 422, description: 'output_chars is not the length of the output.' },
  TARGET_BELOW_MINIMUM: { status: 422, description: 'A calibration target below the minimum (targets may be raised, never lowered).' },
  SAME_RUN: { status: 422, description: 'run_a and run_b are the same run.' },
  RUNS_OTHER_SUITE: { status: 422, description: 'The two runs are runs of different suites.' },
  NO_SHARED_CASES: { status: 422, description: 'No case has an output on both sides.' },
  // 202: not an error - the run is accepted and still being scored.
  RUN_PENDING: { status: 202, description: 'The run is accepted and still being scored.' },
  // 5xx: nothing of the request was wrong.
  INTERNAL: { status: 500, description: 'An unexpected failure; nothing of it is shown.' },
  UPSTREAM_UNAVAILABLE: { status: 502, description: 'The dashboard forwarded a request to another app of the four-app layout, and it did not answer.' },
  JUDGE_CALL_FAILED: { status: 502, description: 'The judge model did not answer every item; nothing was stored.' },
  BUS_UNAVAILABLE: { status: 503, description: 'The message bus did not take the messages; retry the same request after `Retry-After` seconds.' },
  JUDGE_NOT_CONFIGURED: { status: 503, description: 'No judge is configured.' },
  JUDGE_CREDENTIAL_MISSING: { status: 503, description: 'The judge has no credential.' },
  HTTP_ERROR: { status: 400, description: 'Any other refusal by the HTTP framework.' },
} as const satisfies Record<string, { status: number; description: string }>;

export type ApiErrorCode = keyof typeof API_ERROR_CODES;

/** Seconds a client waits before retrying the same request, for the codes that are transient. */
const RETRY_AFTER_SECONDS: Partial<Record<ApiErrorCode, number>> = { BUS_UNAVAILABLE: 2 };

export function isApiErrorCode(code: unknown): code is ApiErrorCode {
  return typeof code === 'string' && Object.prototype.hasOwnProperty.call(API_ERROR_CODES, code);
}

/** The HTTP status of a code (500 for a code the catalogue does not know). */
export function statusOfCode(code: string): number {
  return isApiErrorCode(code) ? API_ERROR_CODES[code].status : 500;
}

/** The codes answered with `status`, in catalogue order (for the OpenAPI document and docs/http-api.md). */
export function codesOfStatus(status: number): ApiErrorCode[] {
  return (Object.keys(API_ERROR_CODES) as ApiErrorCode[]).filter((c) => API_ERROR_CODES[c].status === status);
}

/**
 * A refusal of a request by the domain: the stable code, a plain message naming fields and ids (never a
 * value a client sent, D1), the offending field, and optional structured details (a suite's problems).
 */
export class ApiError extends Error {
  readonly status: number;
  /** A transient refusal: the HTTP answer carries `Retry-After`. */
  readonly retryAfterSeconds?: number;

  constructor(
    readonly code: ApiErrorCode,
    message: string,
    readonly field?: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = API_ERROR_CODES[code].status;
    const retryAfter = RETRY_AFTER_SECONDS[code];
    if (retryAfter !== undefined) this.retryAfterSeconds = retryAfter;
  }
}

/** Throws the ApiError for `code` (services' one-line refusals). */
export function refuse(code: ApiErrorCode, message: string, field?: string, details?: unknown): never {
  throw new ApiError(code, message, field, details);
}
