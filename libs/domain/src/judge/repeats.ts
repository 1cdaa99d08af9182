/**
 * Flaky verdicts (issue 13, part 3): an `llm_judge` case with `repeats: k` is judged k times. The case's
 * outcome is the majority of the k outcomes - a tie fails, so a judge that cannot make up its mind never
 * passes a case - and the run reports how often the k outcomes agreed (verdict stability).
 *
 * A repeat's vote is its S3 outcome (`judgeOutcome`): pass iff the verdict is pass and the score reaches
 * `min_score`. A repeat that ended in an error (unparseable, timeout...) votes fail, as an error fails a
 * single-call case (J3): it is the judge's answer for that call, and it did not pass.
 */
import { wilson } from '@evals/stats';
import { judgeOutcome, type JudgeError, type JudgeOutcome, type JudgeVerdict } from './judge.port';

export interface RepeatedOutcome extends JudgeOutcome {
  /** k, the number of judge calls behind the case. */
  readonly repeats: number;
  /** How many of the k repeats passed. */
  readonly pass_votes: number;
  /** All k votes agree (all pass or all fail). */
  readonly stable: boolean;
}

/**
 * The case's outcome from its k results (k >= 1): passed when more than half of the votes pass (a tie
 * fails). The score is the mean score of the side that won, so a passing case's score is at least
 * `min_score` (S3) and a failing one's is what its failing repeats said. The label is `judge_pass`, or the
 * most frequent label among the votes that did not pass (the first, in repeat order, on a tie).
 */
export function majorityOutcome(results: ReadonlyArray<JudgeVerdict | JudgeError>, minScore: number): RepeatedOutcome {
  if (results.length === 0) throw new RangeError('majorityOutcome needs at least one result');
  const outcomes = results.map((r) => judgeOutcome(r, minScore));
  const passing = outcomes.filter((o) => o.passed);
  const k = outcomes.length;
  const passed = passing.length * 2 > k;
  const side = passed ? passing : outcomes.filter((o) => !o.passed);
  const score = side.reduce((s, o) => s + o.score, 0) / side.length;
  return {
    score,
    passed,
    label: passed ? passing[0]!.label : mostFrequentLabel(side),
    repeats: k,
    pass_votes: passing.length,
    stable: passing.length === 0 || passing.length === k,
  };
}

function mostFrequentLabel(outcomes: readonly JudgeOutcome[]): string {
  const counts = new Map<string, number>();
  for (const o of outcomes) counts.set(o.label, (counts.get(o.label) ?? 0) + 1);
  let best = outcomes[0]!.label;
  for (const [label, n] of counts) if (n > counts.get(best)!) best = label;
  return best;
}

/** Calibration accepts `repeats` within the same bounds as the `llm_judge` scorer (2-10). */
export const MAX_JUDGE_REPEATS_FOR_CALIBRATION = 10;

/** The default share of stable cases below which the gate warns `judge_unstable`. */
export const DEFAULT_MIN_JUDGE_STABILITY = 0.9;

export interface VerdictStability {
  /** k of the run's repeated cases (the largest, should a suite mix them). */
  readonly repeats: number;
  /** Cases judged with repeats and a verdict from every repeat's vote. */
  readonly cases: number;
  /** Of them, cases whose k votes agree. */
  readonly stable: number;
  /** stable / cases, or null when no case was judged with repeats. */
  readonly rate: number | null;
  /** Wilson 95% interval of the rate (libs/stats), [0, 1] when there is no case. */
  readonly lower: number;
  readonly upper: number;
  /** The unstable cases by id (the first MAX_LISTED_UNSTABLE, in case order). */
  readonly unstable_case_ids: readonly string[];
}

export const MAX_LISTED_UNSTABLE = 1000;

/** Stability with its Wilson interval from the counts a run records (`run.scored.judge_stability`). */
export function verdictStability(counts: { readonly repeats: number; readonly cases: number; readonly stable: number; readonly unstable_case_ids: readonly string[] }): VerdictStability {
  const w = wilson(counts.stable, counts.cases);
  return {
    repeats: counts.repeats,
    cases: counts.cases,
    stable: counts.stable,
    rate: w.estimate,
    lower: w.lower,
    upper: w.upper,
    unstable_case_ids: counts.unstable_case_ids.slice(0, MAX_LISTED_UNSTABLE),
  };
}

/**
 * Calibration with repeats: the judge's self-agreement - the share of items whose k verdicts agree - with
 * its Wilson interval, reported beside its agreement with the humans. `votes[i]` are item i's k verdicts.
 */
export function selfAgreement(votes: ReadonlyArray<ReadonlyArray<'pass' | 'fail'>>): { readonly items: number; readonly agreeing: number; readonly rate: number | null; readonly lower: number; readonly upper: number } {
  const agreeing = votes.filter((v) => v.length > 0 && v.every((x) => x === v[0])).length;
  const w = wilson(agreeing, votes.length);
  return { items: votes.length, agreeing, rate: w.estimate, lower: w.lower, upper: w.upper };
}

