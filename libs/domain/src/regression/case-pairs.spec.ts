import fc from 'fast-check';
import { JUDGE_ERROR_CODES } from '../judge/judge.port';
import { encodeCaseOutcomes, caseOutcomesOf, type CaseOutcome } from '../runs/case-outcomes';
import { JUDGE_NOT_CONFIGURED, MISSING_OUTPUT } from '../runs/case-scoring';
import { decodeRunEvent } from '../runs/run-event.codec';
import { pairCases, runOutcomes, type ComparedCases } from './case-pairs';

/*
 * G7: the paired comparison of two runs' results, against an oracle written out case by case, on random
 * results (seeded): cases in one run only, missing outputs, judge cases skipped (no judge model), failed
 * (an error label) or judged. The same definition the SQL over the evidence table had (issue 27 moved it
 * here: the regression app pairs the results its cases.scored events carry), the same oracle.
 */

type Kind = 'absent' | 'missing' | 'plain' | 'judge_skipped' | 'judge_error' | 'judged';
const KINDS: Kind[] = ['absent', 'missing', 'plain', 'plain', 'plain', 'judge_skipped', 'judge_error', 'judged', 'judged'];

interface Row {
  readonly case_id: string;
  readonly kind: Exclude<Kind, 'absent'>;
  readonly passed: boolean;
  readonly score: number;
}

/** Evidence of one run: a case per position, or none ('absent'); scores on a grid of eighths (exact sums). */
const evidence = fc
  .array(fc.record({ kind: fc.constantFrom(...KINDS), eighths: fc.integer({ min: 0, max: 8 }) }), { maxLength: 300 })
  .map((cases) =>
    cases.flatMap(({ kind, eighths }, i): Row[] => {
      if (kind === 'absent') return [];
      const score = kind === 'missing' ? 0 : eighths / 8;
      return [{ case_id: `c${i}`, kind, passed: kind !== 'missing' && score >= 0.5, score }];
    }),
  );

function toOutcome(r: Row): CaseOutcome {
  const judge = r.kind === 'judged' || r.kind === 'judge_error' || r.kind === 'judge_skipped';
  const label = r.kind === 'missing' ? MISSING_OUTPUT : r.kind === 'judge_error' ? JUDGE_ERROR_CODES[0] : r.kind === 'judge_skipped' ? JUDGE_NOT_CONFIGURED : r.passed ? 'pass' : 'fail';
  const pinned = judge && r.kind !== 'judge_skipped';
  return {
    case_id: r.case_id,
    scorer: judge ? 'llm_judge' : 'exact',
    scorer_version: '1.0.0',
    score: r.score,
    passed: r.passed,
    label,
    judge_model: pinned ? 'gpt-4o-2024-08-06' : null,
    prompt_version: pinned ? 'judge-v1' : null,
    scored_at: '2026-12-02T04:00:00.000Z',
  };
}

/** The oracle: G7's definition, case by case. */
function oracle(run: Row[], baseline: Row[]): ComparedCases {
  const scored = (r: Row) => r.kind === 'plain' || r.kind === 'judged';
  const rs = new Map(run.filter(scored).map((r) => [r.case_id, r]));
  const bs = new Map(baseline.filter(scored).map((r) => [r.case_id, r]));
  const pairs = [...rs.values()].filter((r) => bs.has(r.case_id)).map((r) => [r, bs.get(r.case_id)!] as const);
  const sum = (xs: Row[]) => xs.reduce((s, x) => s + x.score, 0);
  return {
    compared: pairs.length,
    a: pairs.filter(([r, b]) => r.passed && b.passed).length,
    b: pairs.filter(([r, b]) => b.passed && !r.passed).length,
    c: pairs.filter(([r, b]) => r.passed && !b.passed).length,
    d: pairs.filter(([r, b]) => !r.passed && !b.passed).length,
    run_score_sum: sum(pairs.map(([r]) => r)),
    baseline_score_sum: sum(pairs.map(([, b]) => b)),
    run_cases: run.length,
    run_scored: rs.size,
    baseline_cases: baseline.length,
    baseline_scored: bs.size,
    run_scored_passed: [...rs.values()].filter((r) => r.passed).length,
    run_scored_score_sum: sum([...rs.values()]),
    baseline_scored_passed: [...bs.values()].filter((r) => r.passed).length,
    baseline_scored_score_sum: sum([...bs.values()]),
  };
}

/** Through the wire and back: encoded in small events (several per run), validated by the codec, decoded. */
function throughEvents(rows: Row[]): CaseOutcome[] {
  return encodeCaseOutcomes('run-1', rows.map(toOutcome), { maxCases: 37 }).flatMap((data) => {
    const decoded = decodeRunEvent({ type: 'cases.scored', version: 3, data: JSON.parse(JSON.stringify(data)) });
    if (!decoded.ok || decoded.event.type !== 'cases.scored') throw new Error(decoded.ok ? 'not cases.scored' : decoded.reason);
    return caseOutcomesOf(decoded.event, '2026-12-02T04:00:00.000Z');
  });
}

describe('the paired comparison of two runs (G7)', () => {
  it('equals the case-by-case definition on random results, carried by cases.scored v3 events', () => {
    fc.assert(
      fc.property(evidence, evidence, (runRows, baselineRows) => {
        expect(pairCases(runOutcomes(throughEvents(runRows)), runOutcomes(throughEvents(baselineRows)))).toEqual(oracle(runRows, baselineRows));
      }),
      { numRuns: 200, seed: 27 },
    );
  });

  it('answers zeros for runs with no results', () => {
    expect(pairCases(runOutcomes([]), runOutcomes([]))).toEqual(oracle([], []));
  });

  it('pairs by case id whatever order the results came in', () => {
    const rows: Row[] = [
      { case_id: 'b', kind: 'plain', passed: true, score: 1 },
      { case_id: 'a', kind: 'plain', passed: false, score: 0 },
      { case_id: 'c', kind: 'plain', passed: true, score: 0.75 },
    ];
    const got = pairCases(runOutcomes(rows.map(toOutcome)), runOutcomes([...rows].reverse().map(toOutcome)));
    expect(got).toMatchObject({ compared: 3, a: 2, b: 0, c: 0, d: 1, run_score_sum: 1.75, baseline_score_sum: 1.75 });
  });

  it('names the least judge pin that graded a run (G4), none when no case reached the judge', () => {
    const judged = (case_id: string, judge_model: string | null, prompt_version: string | null): CaseOutcome => ({ ...toOutcome({ case_id, kind: 'judged', passed: true, score: 1 }), judge_model, prompt_version });
    expect(runOutcomes([judged('a', 'm-2', 'p1'), judged('b', 'm-1', 'p2'), judged('c', 'm-1', 'p1')]).judge).toEqual({ judge_model: 'm-1', prompt_version: 'p1' });
    expect(runOutcomes([toOutcome({ case_id: 'a', kind: 'plain', passed: true, score: 1 }), judged('b', null, null)]).judge).toEqual({ judge_model: null, prompt_version: null });
  });
});
