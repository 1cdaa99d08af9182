/**
 * A suite version folded from its stream (suite-events.ts): `suite.published`, then its case pages in
 * ordinal order. `evolve` folds one validated event; `finish` turns a complete fold into the version as
 * `SuiteRepository.find` gave it (so `compileSuite` takes either); `foldSuite` does both over raw events.
 * A stream that is not exactly one head and pages covering ordinals 0 .. case_count - 1 once, in order, is
 * refused with a SuiteStreamError naming what is wrong: the log is ours, so this is a bug to surface, never
 * a partial suite to score against. Pure.
 */
import { caseIssues, decodeSuiteEvent } from './suite-event.codec';
import { SUITE_EVENTS, type SuiteCaseV1, type SuiteEvent, type SuitePublishedV1 } from './suite-events';

export const SUITE_STREAM_CODES = {
  /** An event that does not validate (suite-event.codec.ts). */
  eventInvalid: 'SUITE_EVENT_INVALID',
  /** A page before the version's `suite.published`, or a stream without one. */
  notPublished: 'SUITE_NOT_PUBLISHED',
  publishedTwice: 'SUITE_PUBLISHED_TWICE',
  /** A page of another suite key or version than the stream's head. */
  foreignPage: 'SUITE_PAGE_FOREIGN',
  /** A page that does not start where the cases so far end (one missing, repeated or out of order), or a part out of sequence. */
  pageOutOfOrder: 'SUITE_PAGE_OUT_OF_ORDER',
  /** More cases than the head's case_count. */
  beyondCount: 'SUITE_PAGE_BEYOND_COUNT',
  /** Fewer cases than case_count at the end of the stream, or a large case's parts cut short. */
  incomplete: 'SUITE_STREAM_INCOMPLETE',
  /** A large case's parts that do not join into one valid case. */
  partInvalid: 'SUITE_PART_INVALID',
  duplicateCase: 'SUITE_CASE_DUPLICATE',
} as const;

export type SuiteStreamCode = (typeof SUITE_STREAM_CODES)[keyof typeof SUITE_STREAM_CODES];

export class SuiteStreamError extends Error {
  constructor(
    readonly code: SuiteStreamCode,
    message: string,
  ) {
    super(`${code}: ${message}`);
    this.name = 'SuiteStreamError';
  }
}

/** A case of a folded version, as `SuiteRepository.find` gives it: `input` null when absent, `expected` absent when absent. */
export interface PublishedCase {
  readonly case_id: string;
  readonly input: unknown;
  readonly expected?: unknown;
  readonly scorer: Readonly<Record<string, unknown>> | null;
  readonly tags: readonly string[];
}

export interface PublishedSuiteVersion extends SuitePublishedV1 {
  readonly cases: readonly PublishedCase[];
}

export interface SuiteStreamState {
  readonly head: SuitePublishedV1 | null;
  /** The whole-case pages so far, in order (kept as pages: a fold appends a page without copying the cases before it). */
  readonly pages: ReadonlyArray<readonly SuiteCaseV1[]>;
  /** Cases so far: the ordinal the next page must start at. */
  readonly cases: number;
  /** The parts of a large case read so far, until its last. */
  readonly part: { readonly from: number; readonly count: number; readonly texts: readonly string[] } | null;
}

export const initialSuiteState: SuiteStreamState = { head: null, pages: [], cases: 0, part: null };

export function evolve(state: SuiteStreamState, event: SuiteEvent): SuiteStreamState {
  if (event.type === SUITE_EVENTS.published) {
    if (state.head !== null) throw new SuiteStreamError(SUITE_STREAM_CODES.publishedTwice, `suite ${state.head.suite_key} v${state.head.version} is published twice`);
    return { ...state, head: event.data };
  }
  const page = event.data;
  const head = state.head;
  if (head === null) throw new SuiteStreamError(SUITE_STREAM_CODES.notPublished, `a page of suite ${page.suite_key} v${page.version} before its suite.published`);
  const name = `suite ${head.suite_key} v${head.version}`;
  if (page.suite_key !== head.suite_key || page.version !== head.version) throw new SuiteStreamError(SUITE_STREAM_CODES.foreignPage, `${name}: a page of another version in its stream`);
  if (page.from !== state.cases) throw new SuiteStreamError(SUITE_STREAM_CODES.pageOutOfOrder, `${name}: a page from case ${page.from} after ${state.cases} cases`);
  if (page.part !== undefined) return evolvePart(state, head, page.part);
  if (state.part !== null) throw new SuiteStreamError(SUITE_STREAM_CODES.pageOutOfOrder, `${name}: case ${state.part.from} has ${state.part.texts.length} of its ${state.part.count} parts`);
  const cases = page.cases ?? [];
  return withCases(state, head, cases);
}

function evolvePart(state: SuiteStreamState, head: SuitePublishedV1, part: { readonly index: number; readonly count: number; readonly text: string }): SuiteStreamState {
  const name = `suite ${head.suite_key} v${head.version}`;
  const sofar = state.part ?? { from: state.cases, count: part.count, texts: [] };
  if (part.count !== sofar.count || part.index !== sofar.texts.length) {
    throw new SuiteStreamError(SUITE_STREAM_CODES.pageOutOfOrder, `${name}: part ${part.index} of ${part.count} of case ${sofar.from} after ${sofar.texts.length} of ${sofar.count}`);
  }
  const texts = [...sofar.texts, part.text];
  if (texts.length < part.count) return { ...state, part: { ...sofar, texts } };
  let joined: unknown;
  try {
    joined = JSON.parse(texts.join(''));
  } catch {
    throw new SuiteStreamError(SUITE_STREAM_CODES.partInvalid, `${name}: the parts of case ${sofar.from} are not one JSON text`);
  }
  const issues = caseIssues([joined], 'part');
  if (issues.length > 0) throw new SuiteStreamError(SUITE_STREAM_CODES.partInvalid, `${name}: the parts of case ${sofar.from} are no case (${issues.join('; ')})`);
  return withCases({ ...state, part: null }, head, [joined as SuiteCaseV1]);
}

function withCases(state: SuiteStreamState, head: SuitePublishedV1, cases: readonly SuiteCaseV1[]): SuiteStreamState {
  const total = state.cases + cases.length;
  if (total > head.case_count) throw new SuiteStreamError(SUITE_STREAM_CODES.beyondCount, `suite ${head.suite_key} v${head.version}: ${total} cases of ${head.case_count}`);
  return { ...state, pages: [...state.pages, cases], cases: total };
}

/** The version of a complete fold, or a SuiteStreamError for one that is not. */
export function finish(state: SuiteStreamState): PublishedSuiteVersion {
  const head = state.head;
  if (head === null) throw new SuiteStreamError(SUITE_STREAM_CODES.notPublished, 'a suite stream without its suite.published');
  const name = `suite ${head.suite_key} v${head.version}`;
  if (state.part !== null) throw new SuiteStreamError(SUITE_STREAM_CODES.incomplete, `${name}: case ${state.part.from} has ${state.part.texts.length} of its ${state.part.count} parts`);
  if (state.cases !== head.case_count) throw new SuiteStreamError(SUITE_STREAM_CODES.incomplete, `${name}: ${state.cases} cases of ${head.case_count}`);
  const seen = new Set<string>();
  const cases: PublishedCase[] = [];
  for (const page of state.pages) {
    for (const c of page) {
      if (seen.has(c.case_id)) throw new SuiteStreamError(SUITE_STREAM_CODES.duplicateCase, `${name}: case ${c.case_id} twice`);
      seen.add(c.case_id);
      cases.push({ case_id: c.case_id, input: c.input ?? null, ...(c.expected === undefined ? {} : { expected: c.expected }), scorer: c.scorer, tags: c.tags });
    }
  }
  return { ...head, cases };
}

/** Validates one stored event (`{type, version, data}`) and folds it. */
export function evolveRaw(state: SuiteStreamState, raw: unknown): SuiteStreamState {
  const decoded = decodeSuiteEvent(raw);
  if (!decoded.ok) throw new SuiteStreamError(SUITE_STREAM_CODES.eventInvalid, decoded.reason);
  return evolve(state, decoded.event);
}

/** A whole stream of stored events, in stream order: the version, or null for an empty stream (no such version). */
export function foldSuite(events: readonly unknown[]): PublishedSuiteVersion | null {
  if (events.length === 0) return null;
  return finish(events.reduce<SuiteStreamState>(evolveRaw, initialSuiteState));
}
