import { isProjectId, isSuiteKey } from '@evals/contracts';
import { decodeSuiteEvent } from './suite-event.codec';
import { SUITE_EVENTS, SUITE_PAGE_MAX_BYTES, SUITE_PAGE_MAX_CASES, suiteCasePages, suiteStreamId, type SuiteCaseV1, type SuiteCasesPublishedV1, type SuitePublishedV1 } from './suite-events';
import { SUITE_STREAM_CODES, SuiteStreamError, foldSuite } from './suite-stream.model';

/** Issue 27: a suite version crosses to the worker, regression and read model as its stream, folded here. */
const head = (caseCount: number): SuitePublishedV1 => ({
  suite_key: 'triage',
  version: 3,
  content_hash: 'sha256:abc',
  case_count: caseCount,
  description: null,
  default_scorer: { type: 'exact' },
  pass_threshold: 0.8,
  regression_threshold: 0.05,
  golden_fixtures: false,
  created_at: '2026-12-03T18:00:00.000Z',
});
const published = (data: SuitePublishedV1) => ({ type: SUITE_EVENTS.published, version: 1, data });
const page = (data: SuiteCasesPublishedV1) => ({ type: SUITE_EVENTS.casesPublished, version: 1, data });
const cases = (n: number, from = 0): SuiteCaseV1[] => Array.from({ length: n }, (_, i) => ({ case_id: `c${from + i}`, input: `q${from + i}`, expected: `a${from + i}`, scorer: null, tags: ['t'] }));
const stream = (all: readonly SuiteCaseV1[], from = 0) => [published(head(all.length)), ...suiteCasePages('triage', 3, all, from).map(page)];

function refusal(events: readonly unknown[]): string {
  try {
    foldSuite(events);
  } catch (error) {
    if (error instanceof SuiteStreamError) return error.code;
    throw error;
  }
  throw new Error('the fold did not refuse');
}

describe('suite stream fold (issue 27: suite.published)', () => {
  it('folds the head and its pages into the version as SuiteRepository.find gave it', () => {
    const all: SuiteCaseV1[] = [
      { case_id: 'a', input: { q: 1 }, expected: null, scorer: { type: 'json_equal' }, tags: [] },
      { case_id: 'b', scorer: null, tags: ['x', 'y'] },
    ];
    const suite = foldSuite(stream(all))!;
    expect(suite).toMatchObject({ suite_key: 'triage', version: 3, case_count: 2, pass_threshold: 0.8, created_at: '2026-12-03T18:00:00.000Z' });
    // An authored null stays null; an absent expected stays absent; an absent input is null, as a NULL column read.
    expect(suite.cases).toEqual([
      { case_id: 'a', input: { q: 1 }, expected: null, scorer: { type: 'json_equal' }, tags: [] },
      { case_id: 'b', input: null, scorer: null, tags: ['x', 'y'] },
    ]);
    expect('expected' in suite.cases[1]).toBe(false);
  });

  it('is null for an empty stream (no such version) and keeps a version of no cases', () => {
    expect(foldSuite([])).toBeNull();
    expect(foldSuite([published(head(0))])!.cases).toEqual([]);
  });

  it('pages by count: at most SUITE_PAGE_MAX_CASES cases a page, consecutive ordinals, in suite order', () => {
    const all = cases(2 * SUITE_PAGE_MAX_CASES + 7);
    const pages = suiteCasePages('triage', 3, all, 0);
    expect(pages.map((p) => [p.from, p.cases!.length])).toEqual([
      [0, SUITE_PAGE_MAX_CASES],
      [SUITE_PAGE_MAX_CASES, SUITE_PAGE_MAX_CASES],
      [2 * SUITE_PAGE_MAX_CASES, 7],
    ]);
    expect(foldSuite(stream(all))!.cases.map((c) => c.case_id)).toEqual(all.map((c) => c.case_id));
  });

  it('pages by bytes: no page holds more than SUITE_PAGE_MAX_BYTES of case JSON', () => {
    const big = 'é'.repeat(20_000); // 40 000 bytes of UTF-8, 20 000 characters
    const all = cases(30).map((c) => ({ ...c, input: big }));
    const pages = suiteCasePages('triage', 3, all, 0);
    for (const p of pages) expect(Buffer.byteLength(JSON.stringify(p.cases))).toBeLessThanOrEqual(SUITE_PAGE_MAX_BYTES + 2 * p.cases!.length);
    expect(pages.length).toBeGreaterThan(4);
    expect(foldSuite(stream(all))!.cases.map((c) => c.input)).toEqual(all.map(() => big));
  });

  it('carries a case larger than a page in parts, each bounded, without cutting a surrogate pair', () => {
    const huge = '😀'.repeat(SUITE_PAGE_MAX_BYTES); // 4 bytes a character, 2 UTF-16 units
    const all = [...cases(2), { case_id: 'huge', input: huge, scorer: null, tags: [] }, ...cases(2, 2)];
    const pages = suiteCasePages('triage', 3, all, 0);
    const parts = pages.filter((p) => p.part);
    expect(parts.length).toBeGreaterThan(4);
    expect(parts.every((p) => p.from === 2 && p.part!.count === parts.length)).toBe(true);
    expect(parts.map((p) => p.part!.index)).toEqual(parts.map((_, i) => i));
    for (const p of parts) {
      expect(Buffer.byteLength(JSON.stringify(p))).toBeLessThanOrEqual(SUITE_PAGE_MAX_BYTES + 200);
      expect(p.part!.text).not.toMatch(/^[\udc00-\udfff]|[\ud800-\udbff]$/);
    }
    expect(pages.map((p) => p.from)).toEqual([0, ...parts.map(() => 2), 3]);
    const suite = foldSuite(stream(all))!;
    expect(suite.cases.map((c) => c.case_id)).toEqual(['c0', 'c1', 'huge', 'c2', 'c3']);
    expect(suite.cases[2].input).toBe(huge);
  });

  it('numbers the pages of a later slice from its first ordinal (a streamed push writes slice by slice)', () => {
    const first = suiteCasePages('triage', 3, cases(3), 0);
    const second = suiteCasePages('triage', 3, cases(2, 3), 3);
    expect(second[0].from).toBe(3);
    expect(foldSuite([published(head(5)), ...[...first, ...second].map(page)])!.cases).toHaveLength(5);
  });

  describe('refuses a stream that is not exactly the version, with a code', () => {
    const all = cases(5);
    const pages = suiteCasePages('triage', 3, all, 0).flatMap((p) => [0, 2, 4].map((at) => ({ ...p, from: at, cases: p.cases!.slice(at, at + 2) })));

    it('a missing page in the middle or at the end', () => {
      expect(refusal([published(head(5)), page(pages[0]), page(pages[2])])).toBe(SUITE_STREAM_CODES.pageOutOfOrder);
      expect(refusal([published(head(5)), page(pages[0]), page(pages[1])])).toBe(SUITE_STREAM_CODES.incomplete);
    });

    it('a page repeated or out of order', () => {
      expect(refusal([published(head(5)), page(pages[0]), page(pages[0]), page(pages[1]), page(pages[2])])).toBe(SUITE_STREAM_CODES.pageOutOfOrder);
      expect(refusal([published(head(5)), page(pages[1]), page(pages[0]), page(pages[2])])).toBe(SUITE_STREAM_CODES.pageOutOfOrder);
    });

    it('pages before the head, a second head, a page of another version', () => {
      expect(refusal([page(pages[0])])).toBe(SUITE_STREAM_CODES.notPublished);
      expect(refusal([published(head(5)), published(head(5))])).toBe(SUITE_STREAM_CODES.publishedTwice);
      expect(refusal([published(head(5)), page({ ...pages[0], version: 4 })])).toBe(SUITE_STREAM_CODES.foreignPage);
    });

    it('more cases than the head counts, and a case twice', () => {
      expect(refusal([published(head(1)), page(pages[0])])).toBe(SUITE_STREAM_CODES.beyondCount);
      expect(refusal([published(head(2)), page({ ...pages[0], cases: [all[0], all[0]] })])).toBe(SUITE_STREAM_CODES.duplicateCase);
    });

    it('a large case with a part missing, out of sequence, or not one case', () => {
      const parts = suiteCasePages('triage', 3, [{ case_id: 'h', input: 'x'.repeat(SUITE_PAGE_MAX_BYTES), scorer: null, tags: [] }], 0).map(page);
      expect(parts.length).toBeGreaterThan(2);
      expect(refusal([published(head(1)), ...parts.slice(0, -1)])).toBe(SUITE_STREAM_CODES.incomplete);
      expect(refusal([published(head(1)), parts[1], parts[0]])).toBe(SUITE_STREAM_CODES.pageOutOfOrder);
      expect(refusal([published(head(1)), parts[0], page({ suite_key: 'triage', version: 3, from: 0, cases: [] })])).toBe(SUITE_STREAM_CODES.pageOutOfOrder);
      const garbled = page({ suite_key: 'triage', version: 3, from: 0, part: { index: 0, count: 1, text: '{"case_id":' } });
      expect(refusal([published(head(1)), garbled])).toBe(SUITE_STREAM_CODES.partInvalid);
      const noCase = page({ suite_key: 'triage', version: 3, from: 0, part: { index: 0, count: 1, text: '{"case_id":"a b","scorer":null,"tags":[]}' } });
      expect(refusal([published(head(1)), noCase])).toBe(SUITE_STREAM_CODES.partInvalid);
    });

    it('an event that does not validate, naming fields and never values', () => {
      const secret = 'do-not-echo-this';
      const bad = page({ ...pages[0], cases: [{ case_id: `${secret} `, scorer: null, tags: [secret as unknown as string, 3 as unknown as string] }] });
      expect(refusal([published(head(5)), bad])).toBe(SUITE_STREAM_CODES.eventInvalid);
      const decoded = decodeSuiteEvent(bad);
      expect(decoded.ok).toBe(false);
      if (!decoded.ok) {
        expect(decoded.issues).toEqual(['data.cases[].case_id: isSafeId', 'data.cases[].tags: isStringArray']);
        expect(decoded.reason).not.toContain(secret);
      }
      expect(decodeSuiteEvent({ type: 'suite.published', version: 2, data: head(1) })).toMatchObject({ ok: false, issues: ['version: supported'] });
      expect(decodeSuiteEvent({ type: 'constructor', version: 1, data: {} })).toMatchObject({ ok: false, issues: ['type: isSuiteEventType'] });
      expect(decodeSuiteEvent(published({ ...head(1), pass_threshold: 2, case_count: -1 }))).toMatchObject({ ok: false, issues: ['data.case_count: isCount', 'data.pass_threshold: inUnitInterval'] });
      expect(decodeSuiteEvent(page({ suite_key: 'triage', version: 3, from: 0 }))).toMatchObject({ ok: false, issues: ['data: casesOrPart'] });
    });
  });

  it('names one stream per version and project, default keeping the ids of before projects (issue 30)', () => {
    expect(suiteStreamId('default', 'triage', 3)).toBe('suite-triage@3');
    expect(suiteStreamId('default', 'triage', 3)).not.toBe(suiteStreamId('default', 'triage', 30));
    expect(suiteStreamId('team-a', 'triage', 3)).toBe('suite-team-a:triage@3');
    // Only a key holding `:` could spell another project's stream in `default`; no suite key may.
    expect(isSuiteKey('team-a:triage')).toBe(false);
    expect(isProjectId('team:a')).toBe(false);
  });
});
