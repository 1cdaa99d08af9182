/**
 * The events of a suite version, written by the ingestion with the version's rows (issue 27: the suite
 * tables are the ingestion's; every other app learns a version from these facts in the shared log). One
 * stream per version, `suite-<key>@<version>`: `suite.published` first (the head), then the cases in
 * `suite.cases.published` pages, in ordinal order. One interface per version; readers validate them with
 * `decodeSuiteEvent` (suite-event.codec.ts) and fold them with `SuiteStreamModel` (suite-stream.model.ts).
 * Suite content only - inputs, expected values, scorer specs - never a candidate output (D1).
 */
import { DEFAULT_PROJECT } from '@evals/contracts';

export const SUITE_EVENTS = {
  published: 'suite.published',
  casesPublished: 'suite.cases.published',
} as const;

export type SuiteEventType = (typeof SUITE_EVENTS)[keyof typeof SUITE_EVENTS];

/** The head of a suite version: everything `SuiteRepository.find` gives but the cases. */
export interface SuitePublishedV1 {
  /** Issue 30: the project the suite belongs to; absent in versions published before projects (`default`). */
  readonly project?: string;
  readonly suite_key: string;
  readonly version: number;
  readonly content_hash: string;
  /** How many cases the version's pages carry: a fold with fewer is incomplete. */
  readonly case_count: number;
  readonly description: string | null;
  readonly default_scorer: Readonly<Record<string, unknown>>;
  readonly pass_threshold: number;
  readonly regression_threshold: number;
  readonly golden_fixtures: boolean;
  /** When the version was stored (the row's `created_at`, ISO 8601 to the millisecond). */
  readonly created_at: string;
}

/** A case as a page carries it. `input` absent reads as null, as a NULL column did; `expected` absent is "no expected", null a value. */
export interface SuiteCaseV1 {
  readonly case_id: string;
  readonly input?: unknown;
  readonly expected?: unknown;
  /** The case's own scorer spec, or null for the suite's default. */
  readonly scorer: Readonly<Record<string, unknown>> | null;
  readonly tags: readonly string[];
}

/**
 * Consecutive cases of a version, the first at ordinal `from`. A page holds at most SUITE_PAGE_MAX_CASES
 * cases and SUITE_PAGE_MAX_BYTES of their JSON; a case whose JSON alone is larger travels in `part`s
 * instead: its JSON text cut into consecutive pieces (`index` 0 .. `count` - 1, every one with the same
 * `from`), each a page of its own with no `cases`.
 */
export interface SuiteCasesPublishedV1 {
  readonly suite_key: string;
  readonly version: number;
  readonly from: number;
  readonly cases?: readonly SuiteCaseV1[];
  readonly part?: { readonly index: number; readonly count: number; readonly text: string };
}

export type SuiteEvent =
  | { readonly type: 'suite.published'; readonly version: 1; readonly data: SuitePublishedV1 }
  | { readonly type: 'suite.cases.published'; readonly version: 1; readonly data: SuiteCasesPublishedV1 };

/**
 * Cases per page: the ingestion's insert batch (2 000 rows per statement), so a push writes at most one page
 * per batch by count and holds one batch at a time (issue 31).
 */
export const SUITE_PAGE_MAX_CASES = 2_000;
/**
 * JSON bytes of a page's cases: a quarter of NATS's default max_payload (1 MiB), so a page relayed on the
 * bus fits one message with room for the envelope and metadata; in the log it is one modest jsonb row,
 * and a reader holds one page of raw rows at a time.
 */
export const SUITE_PAGE_MAX_BYTES = 256 * 1024;
/**
 * UTF-16 units of one part's text: every unit escaped (`\u001f`, 6 bytes) still stays within
 * SUITE_PAGE_MAX_BYTES, so a part is bounded however its text is written out.
 */
export const SUITE_PART_MAX_CHARS = Math.floor(SUITE_PAGE_MAX_BYTES / 6);

/**
 * The stream of one suite version in a project. A suite key has no `@` and neither a key nor a project has
 * a `:` (SUITE_KEY_PATTERN, PROJECT_ID_PATTERN), so the id is unique; `default` keeps the ids its streams had
 * before projects (docs/adr/0009-projects.md), so an upgrade moves nothing.
 */
export function suiteStreamId(project: string, suiteKey: string, version: number): string {
  return project === DEFAULT_PROJECT ? `suite-${suiteKey}@${version}` : `suite-${project}:${suiteKey}@${version}`;
}

/**
 * The pages of `cases`, the first at ordinal `from`, within the bounds above. Pure: the ingestion writes
 * what this returns, and the backfill migration writes the same for every version stored before it.
 */
export function suiteCasePages(suiteKey: string, version: number, cases: readonly SuiteCaseV1[], from: number): SuiteCasesPublishedV1[] {
  const pages: SuiteCasesPublishedV1[] = [];
  let page: SuiteCaseV1[] = [];
  let pageFrom = from;
  let bytes = 0;
  const flush = () => {
    if (page.length > 0) pages.push({ suite_key: suiteKey, version, from: pageFrom, cases: page });
    page = [];
    bytes = 0;
  };
  cases.forEach((c, i) => {
    const event = caseEvent(c);
    const json = JSON.stringify(event);
    const size = utf8Bytes(json);
    if (page.length > 0 && (page.length >= SUITE_PAGE_MAX_CASES || bytes + size > SUITE_PAGE_MAX_BYTES)) flush();
    if (page.length === 0) pageFrom = from + i;
    if (size <= SUITE_PAGE_MAX_BYTES) {
      page.push(event);
      bytes += size;
      return;
    }
    flush();
    const parts = splitText(json, SUITE_PART_MAX_CHARS);
    parts.forEach((text, index) => pages.push({ suite_key: suiteKey, version, from: from + i, part: { index, count: parts.length, text } }));
  });
  flush();
  return pages;
}

/** Only the fields of SuiteCaseV1, `input` and `expected` left out when absent. */
function caseEvent(c: SuiteCaseV1): SuiteCaseV1 {
  return {
    case_id: c.case_id,
    ...(c.input === undefined ? {} : { input: c.input }),
    ...(c.expected === undefined ? {} : { expected: c.expected }),
    scorer: c.scorer ?? null,
    tags: c.tags ?? [],
  };
}

/** UTF-8 length without encoding the text (a page is measured case by case). */
function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** Pieces of at most `max` UTF-16 units, never cutting a surrogate pair (a lone half is not valid JSON text for PostgreSQL). */
function splitText(text: string, max: number): string[] {
  const pieces: string[] = [];
  for (let at = 0; at < text.length; ) {
    let end = Math.min(at + max, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    pieces.push(text.slice(at, end));
    at = end;
  }
  return pieces;
}
