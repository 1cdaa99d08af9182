/**
 * The run events' one codec (R7, D1): every (type, version) decodes, table-driven; every rule refuses with
 * the field named; and, as properties, it never throws, a generated valid event always decodes to itself,
 * and no reason ever carries a value (a canary put into fields never comes out).
 */
import fc from 'fast-check';
import { MAX_EVENT_REASON_ISSUES, decodeRunEvent, joinIssues } from './run-event.codec';
import { parseRunEvent, type RunEvent } from './run-events';

const CANARY = 'sk-live-CANARY-7f3a';

const opened = {
  run_id: 'ci-4711',
  suite_key: 'support-triage',
  suite_version: 3,
  suite_content_hash: 'sha256:abc',
  pass_threshold: 0.8,
  regression_threshold: 0.1,
  subject_kind: 'agent',
  subject_id: 'support-bot',
  variant: null,
  baseline_run_id: null,
  source: 'ci',
  case_count: 8,
  scorer_versions: { exact: '1.0.0' },
};
const result = { case_id: 'c1', scorer: 'exact', scorer_version: '1.0.0', score: 1, passed: true, label: 'match' };
const judge = {
  cases: 4,
  calls: 3,
  errors: 1,
  credential_missing: 0,
  not_configured: 0,
  skipped: 0,
  cache_hits: 1,
  cache_misses: 2,
  input_tokens: 1200,
  output_tokens: 80,
  cost_usd: 0.0042,
  model: 'claude-x@2025-01-01',
  prompt_version: 'v3',
};
const scored = { run_id: 'ci-4711', n: 8, passed: 7, score_sum: 7.5, missing_case_ids: [] as string[] };
const compared = {
  run_id: 'ci-4711',
  verdict: 'regressed',
  completeness: 'complete',
  baseline_run_id: 'ci-4700',
  chosen_by: 'automatic',
  comparison: { score_drop: 0.2 },
  finding_id: '0b7e5e8e-3c1a-4b0e-9d5c-2f7a1c9e4d10',
};

const ev = (type: string, version: unknown, data: unknown) => ({ type, version, data });
const expectRefused = (raw: unknown, reason: string) => expect(decodeRunEvent(raw)).toEqual({ ok: false, reason, issues: reason.split('; ') });

describe('decodeRunEvent: every event type and version decodes (R7)', () => {
  it.each<[string, RunEvent]>([
    ['run.opened v1, the required fields', { type: 'run.opened', version: 1, data: { ...opened, source: 'ci' } }],
    [
      'run.opened v1, with a sample, the judge options and the request hash (GT3, GT4, J6)',
      {
        type: 'run.opened',
        version: 1,
        data: { ...opened, source: 'ci', variant: 'prompt-v7', baseline_run_id: 'ci-4700', sample: { size: 2, seed: 's1', case_ids: ['c1', 'c2'] }, judge_cache: true, judge_skip: 'budget_blocked', request_hash: 'h1' },
      },
    ],
    ['run.opened v1, sample and judge_skip null', { type: 'run.opened', version: 1, data: { ...opened, source: 'session_sample', sample: null, judge_skip: null } }],
    ['run.sealed v1 by its owner (reason absent)', { type: 'run.sealed', version: 1, data: { run_id: 'ci-4711' } }],
    ['run.sealed v1, reason client', { type: 'run.sealed', version: 1, data: { run_id: 'ci-4711', reason: 'client' } }],
    ['run.sealed v1, reason expired', { type: 'run.sealed', version: 1, data: { run_id: 'ci-4711', reason: 'expired' } }],
    ['cases.scored v1 (results)', { type: 'cases.scored', version: 1, data: { run_id: 'ci-4711', results: [result, { ...result, case_id: 'c2', score: 0, passed: false, label: '', judge_model: 'm', prompt_version: 'v3' }] } }],
    ['cases.scored v1, no results', { type: 'cases.scored', version: 1, data: { run_id: 'ci-4711', results: [] } }],
    ['cases.scored v2 (counts)', { type: 'cases.scored', version: 2, data: { run_id: 'ci-4711', n: 2, passed: 1, score_sum: 1.5 } }],
    ['cases.scored v2, a sum of n ones off by rounding', { type: 'cases.scored', version: 2, data: { run_id: 'ci-4711', n: 3, passed: 3, score_sum: 3 + 1e-12 } }],
    ['run.scored v1', { type: 'run.scored', version: 1, data: scored }],
    ['run.scored v1, nothing scored', { type: 'run.scored', version: 1, data: { run_id: 'ci-4711', n: 0, passed: 0, score_sum: 0, missing_count: 0, missing_case_ids: [] } }],
    ['run.scored v1, missing outputs and judge usage', { type: 'run.scored', version: 1, data: { ...scored, missing_count: 1, missing_case_ids: ['c8'], judge: { ...judge, model: null, prompt_version: null } } }],
    ['run.compared v1, the whole decision', { type: 'run.compared', version: 1, data: { ...compared, verdict: 'regressed', completeness: 'complete' } }],
    ['run.compared v1, bare (older logs)', { type: 'run.compared', version: 1, data: { run_id: 'ci-4711', verdict: 'no_baseline' } }],
    [
      'run.compared v1, a refused baseline',
      { type: 'run.compared', version: 1, data: { run_id: 'ci-4711', verdict: 'no_baseline', completeness: 'expired', baseline_run_id: null, chosen_by: null, comparison: { error: { code: 'BASELINE_NOT_FOUND' } }, finding_id: null } },
    ],
  ])('%s', (_name, event) => {
    const decoded = decodeRunEvent({ ...event, metadata: { message_id: 'm1' }, position: 7 });
    expect(decoded).toEqual({ ok: true, event });
    // The reader's own data object, not a copy; the wire form (metadata, position) is not the event's.
    expect(decoded.ok && decoded.event.data).toBe(event.data);
    expect(decoded.ok && Object.keys(decoded.event)).toEqual(['type', 'version', 'data']);
  });
});

describe('decodeRunEvent: each rule refuses with the field named, never the value (D1)', () => {
  it.each<[string, unknown, string]>([
    ['not an object', null, 'event: isObject'],
    ['an array', [ev('run.sealed', 1, { run_id: 'r1' })], 'event: isObject'],
    ['a string', CANARY, 'event: isObject'],
    ['no type', { version: 1, data: { run_id: 'r1' } }, 'type: isRunEventType'],
    ['an unknown type', ev(CANARY, 1, { run_id: 'r1' }), 'type: isRunEventType'],
    ['run.opened v2', ev('run.opened', 2, opened), 'version: supported'],
    ['cases.scored v4', ev('cases.scored', 4, { run_id: 'r1', n: 1, passed: 1, score_sum: 1 }), 'version: supported'],
    ['a version as a string', ev('run.sealed', '1', { run_id: 'r1' }), 'version: supported'],
    ['no version', { type: 'run.sealed', data: { run_id: 'r1' } }, 'version: supported'],
    ['data not an object', ev('run.sealed', 1, [CANARY]), 'data: isObject'],
    ['data null', ev('run.scored', 1, null), 'data: isObject'],
    ['an unsafe run id', ev('run.sealed', 1, { run_id: `${CANARY} /..` }), 'data.run_id: isSafeId'],
    ['no run id', ev('run.compared', 1, { verdict: 'no_baseline' }), 'data.run_id: isSafeId'],
    // run.opened
    ['run.opened: an empty suite key', ev('run.opened', 1, { ...opened, suite_key: '' }), 'data.suite_key: isString'],
    ['run.opened: suite version 0', ev('run.opened', 1, { ...opened, suite_version: 0 }), 'data.suite_version: isPositiveInteger'],
    ['run.opened: suite version 1.5', ev('run.opened', 1, { ...opened, suite_version: 1.5 }), 'data.suite_version: isPositiveInteger'],
    ['run.opened: no content hash', ev('run.opened', 1, { ...opened, suite_content_hash: undefined }), 'data.suite_content_hash: isString'],
    ['run.opened: pass threshold above 1', ev('run.opened', 1, { ...opened, pass_threshold: 1.2 }), 'data.pass_threshold: inUnitInterval'],
    ['run.opened: regression threshold NaN', ev('run.opened', 1, { ...opened, regression_threshold: Number.NaN }), 'data.regression_threshold: inUnitInterval'],
    ['run.opened: an empty subject kind', ev('run.opened', 1, { ...opened, subject_kind: '' }), 'data.subject_kind: isString'],
    ['run.opened: a subject id not a string', ev('run.opened', 1, { ...opened, subject_id: 42 }), 'data.subject_id: isString'],
    ['run.opened: no variant (null is none)', ev('run.opened', 1, { ...opened, variant: undefined }), 'data.variant: isStringOrNull'],
    ['run.opened: a baseline not a string', ev('run.opened', 1, { ...opened, baseline_run_id: [CANARY] }), 'data.baseline_run_id: isStringOrNull'],
    ['run.opened: an unknown source', ev('run.opened', 1, { ...opened, source: CANARY }), 'data.source: isRunSource'],
    ['run.opened: a negative case count', ev('run.opened', 1, { ...opened, case_count: -1 }), 'data.case_count: isCount'],
    ['run.opened: a fractional case count', ev('run.opened', 1, { ...opened, case_count: 2.5 }), 'data.case_count: isCount'],
    ['run.opened: a scorer version not a string', ev('run.opened', 1, { ...opened, scorer_versions: { exact: 1 } }), 'data.scorer_versions: isStringMap'],
    ['run.opened: scorer versions an array', ev('run.opened', 1, { ...opened, scorer_versions: ['1.0.0'] }), 'data.scorer_versions: isStringMap'],
    ['run.opened: a sample not an object', ev('run.opened', 1, { ...opened, sample: CANARY }), 'data.sample: isObjectOrNull'],
    [
      'run.opened: a sample with wrong fields',
      ev('run.opened', 1, { ...opened, sample: { size: -2, seed: 7, case_ids: ['c1', 3] } }),
      'data.sample.size: isCount; data.sample.seed: isString; data.sample.case_ids: isStringArray',
    ],
    ['run.opened: judge_cache not a boolean', ev('run.opened', 1, { ...opened, judge_cache: 'yes' }), 'data.judge_cache: isBoolean'],
    ['run.opened: an empty judge_skip', ev('run.opened', 1, { ...opened, judge_skip: '' }), 'data.judge_skip: isStringOrNull'],
    ['run.opened: a request hash not a string', ev('run.opened', 1, { ...opened, request_hash: null }), 'data.request_hash: isString'],
    // run.sealed
    ['run.sealed: an unknown reason', ev('run.sealed', 1, { run_id: 'r1', reason: CANARY }), 'data.reason: isSealReason'],
    ['run.sealed: a null reason', ev('run.sealed', 1, { run_id: 'r1', reason: null }), 'data.reason: isSealReason'],
    // cases.scored v1
    ['cases.scored v1: no results', ev('cases.scored', 1, { run_id: 'r1' }), 'data.results: isArray'],
    ['cases.scored v1: a result not an object', ev('cases.scored', 1, { run_id: 'r1', results: [result, CANARY] }), 'data.results[]: isObject'],
    [
      'cases.scored v1: every field of a result wrong, each named once however many results',
      ev('cases.scored', 1, {
        run_id: 'r1',
        results: [
          { case_id: '', scorer: 1, scorer_version: null, score: 1.5, passed: 'yes', label: 7, judge_model: 1, prompt_version: 2 },
          { case_id: CANARY, scorer: CANARY, scorer_version: 2, score: -1, passed: 0, label: null },
        ],
      }),
      'data.results[].case_id: isString; data.results[].scorer: isString; data.results[].scorer_version: isString; data.results[].score: inUnitInterval; data.results[].passed: isBoolean; data.results[].label: isString; data.results[].judge_model: isString; data.results[].prompt_version: isString',
    ],
    // cases.scored v2
    ['cases.scored v2: n 0 (a batch that inserted nothing emits nothing)', ev('cases.scored', 2, { run_id: 'r1', n: 0, passed: 0, score_sum: 0 }), 'data.n: isPositiveCount'],
    ['cases.scored v2: passed above n', ev('cases.scored', 2, { run_id: 'r1', n: 2, passed: 3, score_sum: 1 }), 'data.passed: isCountNotAboveN'],
    ['cases.scored v2: a negative passed', ev('cases.scored', 2, { run_id: 'r1', n: 2, passed: -1, score_sum: 1 }), 'data.passed: isCountNotAboveN'],
    ['cases.scored v2: a sum above n', ev('cases.scored', 2, { run_id: 'r1', n: 2, passed: 1, score_sum: 2.5 }), 'data.score_sum: isSumOfUnitScores'],
    ['cases.scored v2: a negative sum', ev('cases.scored', 2, { run_id: 'r1', n: 2, passed: 1, score_sum: -0.5 }), 'data.score_sum: isSumOfUnitScores'],
    ['cases.scored v2: an infinite sum', ev('cases.scored', 2, { run_id: 'r1', n: 2, passed: 1, score_sum: Infinity }), 'data.score_sum: isSumOfUnitScores'],
    ['cases.scored v2: n wrong is n’s issue only', ev('cases.scored', 2, { run_id: 'r1', n: '2', passed: 5, score_sum: 5 }), 'data.n: isPositiveCount'],
    // run.scored
    ['run.scored: a negative n', ev('run.scored', 1, { ...scored, n: -1, passed: 0, score_sum: 0 }), 'data.n: isCount'],
    ['run.scored: passed above n', ev('run.scored', 1, { ...scored, passed: 9 }), 'data.passed: isCountNotAboveN'],
    ['run.scored: a sum above n', ev('run.scored', 1, { ...scored, score_sum: 8.5 }), 'data.score_sum: inRangeZeroToN'],
    ['run.scored: a NaN sum', ev('run.scored', 1, { ...scored, score_sum: Number.NaN }), 'data.score_sum: inRangeZeroToN'],
    ['run.scored: no missing case ids', ev('run.scored', 1, { ...scored, missing_case_ids: undefined }), 'data.missing_case_ids: isStringArray'],
    ['run.scored: a missing case id not a string', ev('run.scored', 1, { ...scored, missing_case_ids: [1] }), 'data.missing_case_ids: isStringArray'],
    ['run.scored: more missing than n', ev('run.scored', 1, { ...scored, missing_count: 9 }), 'data.missing_count: isCountNotAboveN'],
    ['run.scored: judge usage not an object', ev('run.scored', 1, { ...scored, judge: null }), 'data.judge: isObject'],
    [
      'run.scored: judge usage with wrong fields',
      ev('run.scored', 1, { ...scored, judge: { ...judge, calls: -1, input_tokens: 1.5, cost_usd: Number.NaN, model: 3, prompt_version: undefined } }),
      'data.judge.calls: isCount; data.judge.input_tokens: isCount; data.judge.cost_usd: isNonNegativeNumber; data.judge.model: isStringOrNull; data.judge.prompt_version: isStringOrNull',
    ],
    // run.compared
    ['run.compared: an unknown verdict', ev('run.compared', 1, { ...compared, verdict: CANARY }), 'data.verdict: isRunVerdict'],
    ['run.compared: completeness null', ev('run.compared', 1, { ...compared, completeness: null }), 'data.completeness: isRunCompleteness'],
    ['run.compared: an unsafe baseline id', ev('run.compared', 1, { ...compared, baseline_run_id: `${CANARY}/..` }), 'data.baseline_run_id: isSafeIdOrNull'],
    ['run.compared: an unknown baseline choice', ev('run.compared', 1, { ...compared, chosen_by: CANARY }), 'data.chosen_by: isBaselineChoiceOrNull'],
    ['run.compared: a comparison not an object', ev('run.compared', 1, { ...compared, comparison: CANARY }), 'data.comparison: isObjectOrNull'],
    ['run.compared: a comparison an array', ev('run.compared', 1, { ...compared, comparison: [CANARY] }), 'data.comparison: isObjectOrNull'],
    ['run.compared: a finding id not a UUID', ev('run.compared', 1, { ...compared, finding_id: CANARY }), 'data.finding_id: isUuidOrNull'],
  ])('%s', (_name, raw, reason) => {
    expectRefused(raw, reason);
    expect(JSON.stringify(decodeRunEvent(raw))).not.toContain('CANARY');
  });

  it(`joins at most ${MAX_EVENT_REASON_ISSUES} issues and counts the rest`, () => {
    const decoded = decodeRunEvent(ev('run.opened', 1, {}));
    expect(decoded.ok).toBe(false);
    if (decoded.ok) return;
    expect(decoded.issues).toHaveLength(13);
    expect(decoded.reason).toBe(`${decoded.issues.slice(0, MAX_EVENT_REASON_ISSUES).join('; ')}; and 3 more`);
    expect(joinIssues(['a: x', 'b: y'])).toBe('a: x; b: y');
  });

  it('parseRunEvent, the legacy name, gives the same event or the same reason as {error}', () => {
    const event: RunEvent = { type: 'run.sealed', version: 1, data: { run_id: 'r1', reason: 'expired' } };
    expect(parseRunEvent({ ...event, metadata: {} })).toEqual(event);
    expect(parseRunEvent(ev('cases.scored', 2, { run_id: 'r1', n: 2, passed: 3, score_sum: 9 }))).toEqual({
      error: 'data.passed: isCountNotAboveN; data.score_sum: isSumOfUnitScores',
    });
    expect(parseRunEvent(null)).toEqual({ error: 'event: isObject' });
  });
});

// --- properties ---------------------------------------------------------------------------------------

const safeId = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:@-]{0,30}$/);
const text = fc.string({ maxLength: 12 });
const nonEmpty = fc.string({ minLength: 1, maxLength: 12 });
const unit = fc.double({ min: 0, max: 1, noNaN: true });
const count = fc.nat({ max: 10_000 });
/** n, passed <= n and a sum of n unit scores. */
const counts = (minN: number) =>
  fc.integer({ min: minN, max: 10_000 }).chain((n) => fc.record({ n: fc.constant(n), passed: fc.nat({ max: n }), score_sum: fc.double({ min: 0, max: n, noNaN: true }) }));

const openedEvent = fc
  .record(
    {
      run_id: safeId,
      suite_key: nonEmpty,
      suite_version: fc.integer({ min: 1, max: 1000 }),
      suite_content_hash: text,
      pass_threshold: unit,
      regression_threshold: unit,
      subject_kind: nonEmpty,
      subject_id: nonEmpty,
      variant: fc.option(nonEmpty),
      baseline_run_id: fc.option(nonEmpty),
      source: fc.constantFrom('sandbox', 'ci', 'inline', 'session_sample') as fc.Arbitrary<'sandbox' | 'ci' | 'inline' | 'session_sample'>,
      case_count: count,
      scorer_versions: fc.dictionary(nonEmpty, text, { maxKeys: 4 }),
      sample: fc.option(fc.record({ size: count, seed: text, case_ids: fc.array(safeId, { maxLength: 5 }) })),
      judge_cache: fc.boolean(),
      judge_skip: fc.option(nonEmpty),
      request_hash: text,
    },
    { requiredKeys: ['run_id', 'suite_key', 'suite_version', 'suite_content_hash', 'pass_threshold', 'regression_threshold', 'subject_kind', 'subject_id', 'variant', 'baseline_run_id', 'source', 'case_count', 'scorer_versions'] },
  )
  .map((data): RunEvent => ({ type: 'run.opened', version: 1, data }));

const sealedEvent = fc
  .record({ run_id: safeId, reason: fc.constantFrom('client', 'expired') as fc.Arbitrary<'client' | 'expired'> }, { requiredKeys: ['run_id'] })
  .map((data): RunEvent => ({ type: 'run.sealed', version: 1, data }));

const caseResult = fc.record(
  { case_id: nonEmpty, scorer: text, scorer_version: text, score: unit, passed: fc.boolean(), label: text, judge_model: text, prompt_version: text },
  { requiredKeys: ['case_id', 'scorer', 'scorer_version', 'score', 'passed', 'label'] },
);
const casesV1Event = fc.record({ run_id: safeId, results: fc.array(caseResult, { maxLength: 6 }) }).map((data): RunEvent => ({ type: 'cases.scored', version: 1, data }));
const casesV2Event = fc.tuple(safeId, counts(1)).map(([run_id, c]): RunEvent => ({ type: 'cases.scored', version: 2, data: { run_id, ...c } }));

const judgeUsage = fc.record({
  cases: count,
  calls: count,
  errors: count,
  credential_missing: count,
  not_configured: count,
  skipped: count,
  cache_hits: count,
  cache_misses: count,
  input_tokens: count,
  output_tokens: count,
  cost_usd: fc.double({ min: 0, max: 1000, noNaN: true }),
  model: fc.option(text),
  prompt_version: fc.option(text),
});
const scoredEvent = counts(0)
  .chain((c) =>
    fc.record(
      { run_id: safeId, missing_case_ids: fc.array(text, { maxLength: 4 }), missing_count: fc.nat({ max: c.n }), judge: judgeUsage },
      { requiredKeys: ['run_id', 'missing_case_ids'] },
    ).map((rest) => ({ ...c, ...rest })),
  )
  .map((data): RunEvent => ({ type: 'run.scored', version: 1, data }));

const comparedEvent = fc
  .record(
    {
      run_id: safeId,
      verdict: fc.constantFrom('regressed', 'inconclusive_noise', 'no_regression', 'no_baseline') as fc.Arbitrary<'regressed' | 'inconclusive_noise' | 'no_regression' | 'no_baseline'>,
      completeness: fc.constantFrom('complete', 'incomplete', 'expired') as fc.Arbitrary<'complete' | 'incomplete' | 'expired'>,
      baseline_run_id: fc.option(safeId),
      chosen_by: fc.option(fc.constantFrom('explicit', 'pinned', 'automatic')),
      comparison: fc.option(fc.dictionary(text, fc.jsonValue(), { maxKeys: 3 })),
      finding_id: fc.option(fc.uuid()),
    },
    { requiredKeys: ['run_id', 'verdict'] },
  )
  .map((data): RunEvent => ({ type: 'run.compared', version: 1, data }));

const validEvent: fc.Arbitrary<RunEvent> = fc.oneof(openedEvent, sealedEvent, casesV1Event, casesV2Event, scoredEvent, comparedEvent);

/** A value that carries the canary wherever it can: as itself, inside a string, an array, a key, a value. */
const canaryValue = fc.oneof(
  fc.constant(CANARY),
  text.map((s) => `${s}${CANARY}${s}`),
  fc.constant([CANARY]),
  fc.constant({ [CANARY]: CANARY }),
  fc.constant({ size: CANARY, seed: CANARY, case_ids: [CANARY], case_id: CANARY, model: CANARY }),
  fc.constant([{ case_id: CANARY, score: CANARY, label: CANARY }]),
);

/** Every path to a field of `data`, nested objects and array items included. */
function paths(value: unknown, prefix: ReadonlyArray<string | number> = []): Array<ReadonlyArray<string | number>> {
  if (typeof value !== 'object' || value === null) return [];
  const entries: Array<[string | number, unknown]> = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  return entries.flatMap(([key, v]) => [[...prefix, key], ...paths(v, [...prefix, key])]);
}

function withValueAt(root: unknown, path: ReadonlyArray<string | number>, value: unknown): unknown {
  if (path.length === 0) return value;
  const [key, ...rest] = path;
  const copy: any = Array.isArray(root) ? [...root] : { ...(root as object) };
  copy[key] = withValueAt(copy[key], rest, value);
  return copy;
}

/** `path: constraint`, made of our own field names and constraint names: the shape of a reason with no value in it. */
const ISSUE = /^(event|type|version|data(\.[a-z_]+(\[\])?)*): [A-Za-z]+$/;

const expectNoValue = (decoded: ReturnType<typeof decodeRunEvent>) => {
  if (decoded.ok) return;
  expect(decoded.issues.length).toBeGreaterThan(0);
  for (const issue of decoded.issues) expect(issue).toMatch(ISSUE);
  expect(decoded.reason).not.toContain('CANARY');
};

describe('decodeRunEvent: properties (R7, D1)', () => {
  it('never throws, whatever JSON-like value it is given, and answers ok or a reason', () => {
    const nearEvent = fc.record({
      type: fc.constantFrom('run.opened', 'run.sealed', 'cases.scored', 'run.scored', 'run.compared', CANARY),
      version: fc.constantFrom<unknown>(1, 2, 3, '1', null),
      data: fc.oneof(
        fc.anything(),
        fc.dictionary(fc.constantFrom('run_id', 'n', 'passed', 'score_sum', 'results', 'sample', 'judge', 'verdict', 'reason', 'source', CANARY), fc.anything(), { maxKeys: 8 }),
      ),
    });
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.jsonValue(), nearEvent), (raw) => {
        const decoded = decodeRunEvent(raw);
        expect(decoded.ok || decoded.reason.length > 0).toBe(true);
        expectNoValue(decoded);
      }),
      { numRuns: 2000 },
    );
  });

  it('a valid event, as a generator builds it, always decodes to an equal event', () => {
    fc.assert(
      fc.property(validEvent, (event) => {
        expect(decodeRunEvent(event)).toEqual({ ok: true, event });
        expect(decodeRunEvent(JSON.parse(JSON.stringify(event)))).toEqual({ ok: true, event: JSON.parse(JSON.stringify(event)) });
      }),
      { numRuns: 1000 },
    );
  });

  it('a canary put into any field of a valid event never appears in the reason', () => {
    const mutated = validEvent.chain((event) => {
      const all = [['type'], ['version'], ['data'], ...paths(event.data).map((p) => ['data', ...p])];
      return fc.tuple(fc.constantFrom(...all), canaryValue).map(([path, value]) => withValueAt(event, path, value));
    });
    fc.assert(
      fc.property(mutated, (raw) => expectNoValue(decodeRunEvent(raw))),
      { numRuns: 2000 },
    );
  });
});
