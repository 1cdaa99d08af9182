/**
 * Limits and identifier formats shared by every message (and by suites in @evals/domain, so a case id that a
 * suite accepts is always one that `evals.output.submitted` accepts too). Documented in docs/contracts.md.
 */

/**
 * 512 KiB. A candidate output larger than this is refused with OUTPUT_TOO_LARGE, measured in UTF-8 bytes.
 * Chosen so that one maximal output, JSON-escaped in its envelope, still fits NATS's default `max_payload`
 * (1 MiB): the service works on a stock server, and an oversize output reaches us to be dead-lettered with
 * its reason instead of being refused by the server before we ever see it.
 */
export const MAX_OUTPUT_BYTES = 512 * 1024;

/**
 * 8 MiB for a whole message on the wire. NATS refuses payloads above the server's `max_payload` (1 MiB by
 * default), so the deployment raises it to this value; 8 MiB is the ceiling NATS itself recommends.
 */
export const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

/**
 * Outputs in one `evals.outputs.submitted` (issue 28). A batch is one run's outputs in one message: one
 * publish, one ack and one decode for up to this many cases. 1 000 keeps a redelivered batch's repeated work
 * and a consumer's memory per message small (a micro-batch of the ingestion holds up to 500 messages), while
 * the per-message costs (JetStream's publish and ack, a header parse) are already below a tenth of the
 * per-case ones at that size. Bytes are bounded by MAX_MESSAGE_BYTES like any message; a publisher that must
 * work on a stock NATS (max_payload 1 MiB) cuts batches at BATCH_TARGET_BYTES.
 */
export const MAX_BATCH_OUTPUTS = 1_000;

/** What the publisher library (@evals/publisher) packs into one batch at most: fits a stock NATS max_payload (1 MiB) with room for the envelope. */
export const BATCH_TARGET_BYTES = 768 * 1024;

/** Inline outputs in one `evals.run.requested`; larger runs stream `evals.outputs.submitted` (or `evals.output.submitted`) instead. */
export const MAX_INLINE_OUTPUTS = 10_000;

export const MAX_ID_LENGTH = 200;

/**
 * Identifiers (run, case, subject, session, finding and message ids, variants): 1 to 200 characters of
 * ASCII letters, digits and `. _ : @ -`, starting with a letter or digit. No spaces, slashes, quotes or
 * control characters, so an id is safe in a URL path segment, a log line, a NATS header and a file name,
 * and a leading `-` can never be read as a CLI flag. UUIDs, ULIDs and `ci:github:1234` all fit.
 */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,199}$/;

export const MAX_SUITE_KEY_LENGTH = 128;

/**
 * Suite keys: a lowercase slug of 1 to 128 characters (`a-z 0-9 . _ -`, starting with a letter or digit).
 * Lowercase only, so `Support` and `support` can never be two suites.
 */
export const SUITE_KEY_PATTERN = /^[a-z0-9][a-z0-9._-]{0,127}$/;

/**
 * Project ids (issue 30, docs/adr/0009-projects.md): a lowercase slug of 1 to 63 characters (`a-z 0-9 -`,
 * starting with a letter or digit). No `.`, so a project is one NATS subject token; no `:`, so it can prefix
 * a suite's stream id unambiguously.
 */
export const PROJECT_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** The project every deployment has, and every row and event written before projects existed belongs to. */
export const DEFAULT_PROJECT = 'default';

export function isProjectId(value: unknown): value is string {
  return typeof value === 'string' && PROJECT_ID_PATTERN.test(value);
}

/** What a caller is told of a malformed project id (never the id itself). */
export const PROJECT_ID_RULE = 'a project id is 1-63 characters of a-z, 0-9 and -, starting with a letter or digit';

/** The HTTP header a platform key names the request's project with (docs/security.md, "Projects"). */
export const PROJECT_HEADER = 'x-evals-project';

/**
 * `{project}` to spread into an event, an envelope, a record or a cache key - nothing for `default` (or no
 * project, or not a string): what `default` writes stays byte for byte what it wrote before projects.
 */
export function projectField(project: unknown): { readonly project?: string } {
  return typeof project === 'string' && project !== DEFAULT_PROJECT ? { project } : {};
}

/**
 * Small vocabularies chosen by a producer (subject kinds, session states): lowercase, 1 to 64 characters,
 * starting with a letter.
 */
export const TOKEN_PATTERN = /^[a-z][a-z0-9._-]{0,63}$/;

export function isSafeId(value: unknown): value is string {
  return typeof value === 'string' && ID_PATTERN.test(value);
}

export function isSuiteKey(value: unknown): value is string {
  return typeof value === 'string' && SUITE_KEY_PATTERN.test(value);
}

export function isToken(value: unknown): value is string {
  return typeof value === 'string' && TOKEN_PATTERN.test(value);
}

export function utf8ByteLength(value: string): number {
  return Buffer.byteLength(value, 'utf8');
}

export const TIMESTAMP_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:Z|([+-])(\d{2}):(\d{2}))$/;

/**
 * RFC 3339 date-time with an explicit offset (`2025-03-01T12:00:00.000Z`, `...+02:00`), uppercase `T`/`Z`,
 * calendar-checked. Checked by hand rather than through `Date.parse`, which accepts many other shapes
 * (and a date-only string as UTC midnight).
 */
export function isTimestamp(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const m = TIMESTAMP_PATTERN.exec(value);
  if (m === null) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return false;
  if (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6]) > 59) return false;
  if (m[7] !== undefined && (Number(m[8]) > 23 || Number(m[9]) > 59)) return false;
  return true;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) {
    const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
    return leap ? 29 : 28;
  }
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
