import fc from 'fast-check';
import { caseOutcomeOf, caseOutcomesOf, casesScoredCounts, encodeCaseOutcomes, MAX_CASES_PER_EVENT, type CaseOutcome } from './case-outcomes';
import type { CaseEvidence } from './case-scoring';
import { decodeRunEvent } from './run-event.codec';
import type { CasesScoredV3 } from './run-events';

/*
 * cases.scored v3 (issue 27): the per-case results of a batch, columnar. Round trip through JSON and the
 * codec, every malformed column refused with the field and the constraint named (never a value, D1), no
 * output ever in an event, and the size per case against v2 and v1.
 */

const CANARY = 'CANARY-OUTPUT-7f3a: the candidate said something secret';
const AT = '2026-12-03T10:00:00.000Z';

const outcome = (i: number, over: Partial<CaseOutcome> = {}): CaseOutcome => ({
  case_id: `case-${String(i).padStart(5, '0')}`,
  scorer: 'exact',
  scorer_version: '1.0.0',
  score: i % 4 === 0 ? 0 : 1,
  passed: i % 4 !== 0,
  label: i % 4 === 0 ? 'mismatch' : 'match',
  judge_model: null,
  prompt_version: null,
  scored_at: AT,
  ...over,
});

/** The event through JSON (as the log and the bus carry it) and the codec, then decoded. */
function roundTrip(data: CasesScoredV3): CaseOutcome[] {
  const decoded = decodeRunEvent({ type: 'cases.scored', version: 3, data: JSON.parse(JSON.stringify(data)) });
  if (!decoded.ok) throw new Error(decoded.reason);
  if (decoded.event.type !== 'cases.scored') throw new Error(decoded.event.type);
  return caseOutcomesOf(decoded.event, '2000-01-01T00:00:00.000Z');
}

const v3 = (data: object) => ({ type: 'cases.scored', version: 3, data });
const refusal = (raw: unknown) => {
  const d = decodeRunEvent(raw);
  return d.ok ? 'accepted' : d.reason;
};

describe('cases.scored v3: encode and decode', () => {
  const arbitraryOutcome = fc.record({
    scorer: fc.constantFrom(['exact', '1.0.0'], ['regex', '2.1.0'], ['llm_judge', '1.0.0']),
    score: fc.oneof(fc.constant(0), fc.constant(1), fc.double({ min: 0, max: 1, noNaN: true })),
    passed: fc.boolean(),
    label: fc.constantFrom('match', 'mismatch', 'missing_output', 'judge_timeout', 'pass', ''),
    judge: fc.constantFrom(null, ['gpt-4o-2024-08-06', 'judge-v1'], ['claude-3-5', 'judge-v2']),
    at: fc.constantFrom(AT, '2026-12-03T10:00:01.000Z'),
  });

  it('gives back every result, in order, through JSON and the codec, whatever the mix (property)', () => {
    fc.assert(
      fc.property(fc.array(arbitraryOutcome, { maxLength: 200 }), fc.integer({ min: 1, max: 64 }), (drawn, maxCases) => {
        const outcomes = drawn.map((d, i): CaseOutcome => ({
          case_id: `c${i}`,
          scorer: d.scorer[0],
          scorer_version: d.scorer[1],
          score: d.score,
          passed: d.passed,
          label: d.label,
          judge_model: d.judge?.[0] ?? null,
          prompt_version: d.judge?.[1] ?? null,
          scored_at: d.at,
        }));
        const events = encodeCaseOutcomes('run-1', outcomes, { maxCases });
        expect(events).toHaveLength(Math.ceil(outcomes.length / maxCases));
        expect(events.flatMap(roundTrip)).toEqual(outcomes);
        // The counts are those of the results: the run model folds them as v2's.
        for (const data of events) {
          const counts = casesScoredCounts({ type: 'cases.scored', version: 3, data });
          expect(counts?.n).toBe(data.case_ids.length);
        }
        expect(events.reduce((s, e) => s + e.passed, 0)).toBe(outcomes.filter((o) => o.passed).length);
      }),
      { numRuns: 300, seed: 2703 },
    );
  });

  it(`splits a large batch into events of at most ${MAX_CASES_PER_EVENT} cases, not one per case`, () => {
    const outcomes = Array.from({ length: 12_345 }, (_, i) => outcome(i));
    const events = encodeCaseOutcomes('run-1', outcomes);
    expect(events.map((e) => e.n)).toEqual([2000, 2000, 2000, 2000, 2000, 2000, 345]);
    expect(events.flatMap(roundTrip)).toEqual(outcomes);
  });

  it('leaves out the columns every case shares: one scorer, one time, no judge, scores that are their verdict', () => {
    const [data] = encodeCaseOutcomes('run-1', [outcome(1), outcome(4)]);
    expect(data).toEqual({
      run_id: 'run-1',
      n: 2,
      passed: 1,
      score_sum: 1,
      case_ids: ['case-00001', 'case-00004'],
      passed_bits: 'AQ==',
      score_at: [],
      score_values: [],
      labels: ['match', 'mismatch'],
      label_of: [0, 1],
      scorers: [['exact', '1.0.0']],
      scored_at: [AT],
    });
  });

  it('marks a backfill, whose counts the run model and the run projection do not fold again', () => {
    const [data] = encodeCaseOutcomes('run-1', [outcome(1)], { backfill: true });
    expect(data.backfill).toBe(true);
    expect(casesScoredCounts({ type: 'cases.scored', version: 3, data })).toBeNull();
    expect(roundTrip(data)).toEqual([outcome(1)]);
    expect(refusal(v3({ ...data, backfill: false as unknown as true }))).toBe('data.backfill: isTrueOrAbsent');
  });

  it('reads v1 results in full and v2 as no results (counts only)', () => {
    const v1 = { type: 'cases.scored' as const, version: 1 as const, data: { run_id: 'r', results: [{ case_id: 'a', scorer: 'llm_judge', scorer_version: '1', score: 0.5, passed: true, label: 'pass', judge_model: 'm', prompt_version: 'p' }] } };
    expect(caseOutcomesOf(v1, AT)).toEqual([{ case_id: 'a', scorer: 'llm_judge', scorer_version: '1', score: 0.5, passed: true, label: 'pass', judge_model: 'm', prompt_version: 'p', scored_at: AT }]);
    expect(caseOutcomesOf({ type: 'cases.scored', version: 2, data: { run_id: 'r', n: 3, passed: 1, score_sum: 1 } }, AT)).toEqual([]);
  });
});

describe('cases.scored v3: hostile and malformed events are refused with the field named (D1)', () => {
  const [good] = encodeCaseOutcomes('run-1', [outcome(1), outcome(2, { score: 0.7 }), outcome(4), outcome(5, { scorer: 'llm_judge', judge_model: 'm', prompt_version: 'p', scored_at: '2026-12-03T10:00:01.000Z' })]);

  it('accepts the good one', () => {
    expect(refusal(v3(good))).toBe('accepted');
    expect(good.scorer_of).toEqual([0, 0, 0, 1]);
    expect(good.judge_of).toEqual([-1, -1, -1, 0]);
    expect(good.scored_at_of).toEqual([0, 0, 0, 1]);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['case ids not strings', { case_ids: [CANARY, 2, 3, 4] }, 'data.case_ids: isNonEmptyStringArray'],
    ['an empty case id', { case_ids: ['', 'b', 'c', 'd'] }, 'data.case_ids: isNonEmptyStringArray'],
    ['a case twice', { case_ids: ['a', 'a', 'c', 'd'] }, 'data.case_ids: isUnique'],
    ['n not the number of cases', { n: 3 }, 'data.n: equalsCaseCount'],
    ['a label index out of its dictionary', { label_of: [0, 0, 9, 0] }, 'data.label_of: indexesOfCaseCount'],
    ['a label column too short', { label_of: [0, 0, 1] }, 'data.label_of: indexesOfCaseCount'],
    ['a negative label index', { label_of: [0, 0, -1, 0] }, 'data.label_of: indexesOfCaseCount'],
    ['a label longer than a label may be (an output smuggled in)', { labels: ['match', CANARY.repeat(10)] }, 'data.labels: isLabelArray'],
    ['a label not a string', { labels: ['match', { output: CANARY }] }, 'data.labels: isLabelArray'],
    ['no scorers', { scorers: [], scorer_of: undefined }, 'data.scorers: isPairArray'],
    ['a scorer not a pair', { scorers: [['exact'], ['llm_judge', '1']] }, 'data.scorers: isPairArray'],
    ['several scorers and no scorer column', { scorer_of: undefined }, 'data.scorer_of: requiredWithSeveralScorers'],
    ['a judge index out of its pins', { judge_of: [-1, -1, -1, 3] }, 'data.judge_of: indexesOfCaseCount'],
    ['a judge column without its pins', { judges: undefined }, 'data.judges: isPairArray'],
    ['a time that is no time', { scored_at: [AT, CANARY] }, 'data.scored_at: isTimestampArray'],
    ['several times and no time column', { scored_at_of: undefined }, 'data.scored_at_of: requiredWithSeveralTimes'],
    ['a bitmap that is not base64', { passed_bits: `${CANARY}!` }, 'data.passed_bits: isBitmapOfCaseCount'],
    ['a bitmap of the wrong length', { passed_bits: 'AQE=' }, 'data.passed_bits: isBitmapOfCaseCount'],
    ['a bitmap with bits past the last case', { passed_bits: '8w==' }, 'data.passed_bits: isBitmapOfCaseCount'],
    ['passed not the bitmap count', { passed: 2 }, 'data.passed: equalsPassedBits'],
    ['score indexes not ascending', { score_at: [1, 0], score_values: [0.7, 0.2] }, 'data.score_at: isAscendingCaseIndexes'],
    ['a score index past the cases', { score_at: [9], score_values: [0.7] }, 'data.score_at: isAscendingCaseIndexes'],
    ['a score above 1', { score_values: [1.7] }, 'data.score_values: unitScoresOfScoreAt'],
    ['scores without their indexes', { score_values: [0.7, 0.1] }, 'data.score_values: unitScoresOfScoreAt'],
    ['a score sum the columns do not give', { score_sum: 2 }, 'data.score_sum: equalsDecodedScores'],
  ])('%s', (_name, change, reason) => {
    const raw = v3({ ...good, ...change });
    expect(refusal(raw)).toBe(reason);
    // D1: a refusal names the field and the constraint, never a value.
    expect(refusal(raw)).not.toContain('CANARY');
  });

  it('refuses an empty batch (a batch that inserted nothing emits nothing)', () => {
    expect(refusal(v3({ ...good, n: 0, passed: 0, score_sum: 0, case_ids: [], label_of: [], passed_bits: '', score_at: [], score_values: [], scorer_of: [], judge_of: [], scored_at_of: [] }))).toBe('data.n: isPositiveCount');
  });
});

describe('cases.scored v3 carries no output (D1)', () => {
  it('takes from an evidence row its result only, never the output hash or length, whatever else the row holds', () => {
    const evidence = {
      run_id: 'run-1',
      case_id: 'c1',
      scorer: 'llm_judge',
      scorer_version: '1.0.0',
      score: 0.5,
      passed: true,
      label: 'pass',
      detail_hash: `hmac:${CANARY}`,
      output_chars: 4711,
      scored_at: AT,
      judge: { judge_model: 'm', prompt_version: 'p', judge_cost_usd: 0.01, judge_input_tokens: 10, judge_output_tokens: 5, judge_cached: null },
      output: CANARY,
    } as CaseEvidence & { output: string };
    const events = encodeCaseOutcomes('run-1', [caseOutcomeOf(evidence)]);
    const wire = JSON.stringify(events);
    expect(wire).not.toContain('CANARY');
    expect(wire).not.toContain('4711');
    expect(roundTrip(events[0])).toEqual([{ case_id: 'c1', scorer: 'llm_judge', scorer_version: '1.0.0', score: 0.5, passed: true, label: 'pass', judge_model: 'm', prompt_version: 'p', scored_at: AT }]);
  });
});

describe('cases.scored v3: bytes per case (docs/benchmarks.md)', () => {
  it('costs a small multiple of its case ids, against v1 in full and v2 counts only', () => {
    const batch = 500;
    const outcomes = Array.from({ length: batch }, (_, i) => outcome(i));
    const v1 = JSON.stringify({ run_id: 'run-1', results: outcomes.map(({ judge_model: _j, prompt_version: _p, scored_at: _s, ...r }) => r) });
    const v2 = JSON.stringify({ run_id: 'run-1', n: batch, passed: outcomes.filter((o) => o.passed).length, score_sum: 375 });
    const v3 = JSON.stringify(encodeCaseOutcomes('run-1', outcomes)[0]);
    const ids = JSON.stringify(outcomes.map((o) => o.case_id));
    const perCase = (text: string) => (text.length / batch).toFixed(2);
    // A printed figure, for docs/benchmarks.md: a deterministic batch of 500 cases with ids of 10 characters.
    console.log(`cases.scored data bytes per case, batch of ${batch}: v1 ${perCase(v1)}, v2 ${perCase(v2)}, v3 ${perCase(v3)} (the case ids alone ${perCase(ids)})`);
    expect(v3.length).toBeLessThan(v1.length / 4);
    expect(v3.length).toBeLessThan(ids.length * 1.4);
  });
});
