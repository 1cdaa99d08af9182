import { JUDGE_ERROR_CODES } from '../judge/judge.port';
import { JUDGE_NOT_CONFIGURED, MISSING_OUTPUT } from '../runs/case-scoring';
import type { CaseOutcome } from '../runs/case-outcomes';

/**
 * G7: the cases two runs both scored, paired. A case counts only when both runs have a result for it with a
 * real score: not `missing_output`, and for `llm_judge` a verdict the judge gave (not skipped, refused,
 * unconfigured or failed). `b` = passed in the baseline only, `c` = passed in the run only (Newcombe's
 * paired cells f and g).
 */
export interface ComparedCases {
  readonly compared: number;
  /** Passed in both, baseline only, run only, neither. */
  readonly a: number;
  readonly b: number;
  readonly c: number;
  readonly d: number;
  readonly run_score_sum: number;
  readonly baseline_score_sum: number;
  /** Results of each run, and how many of them had a real score. */
  readonly run_cases: number;
  readonly run_scored: number;
  readonly baseline_cases: number;
  readonly baseline_scored: number;
  /** Each run over its own scored cases (two suite versions: independent samples, not pairs). */
  readonly run_scored_passed: number;
  readonly run_scored_score_sum: number;
  readonly baseline_scored_passed: number;
  readonly baseline_scored_score_sum: number;
}

/** Labels of results that carry no real score (R1, GT2, GT4, J3). */
const UNSCORED_JUDGE_LABELS = new Set<string>([...JUDGE_ERROR_CODES, JUDGE_NOT_CONFIGURED]);

/** Whether a result carries a real score (G7): what a comparison counts. */
export function isScoredOutcome(o: Pick<CaseOutcome, 'label' | 'scorer' | 'judge_model'>): boolean {
  if (o.label === MISSING_OUTPUT) return false;
  return !(o.scorer === 'llm_judge' && (o.judge_model === null || UNSCORED_JUDGE_LABELS.has(o.label)));
}

/**
 * What a comparison needs of one run's results, compact: the case ids sorted, and per case whether it was
 * scored, whether it passed and its score - so a 100 000-case baseline can stay in memory between the runs
 * compared with it. Plus the judge pin that graded it (G4).
 */
export interface RunOutcomes {
  readonly case_ids: readonly string[];
  /** Bit 0: scored (isScoredOutcome); bit 1: passed. */
  readonly flags: Uint8Array;
  readonly scores: Float64Array;
  readonly judge: { readonly judge_model: string | null; readonly prompt_version: string | null };
}

const SCORED = 1;
const PASSED = 2;

/** One run's results (each case once) as RunOutcomes. */
export function runOutcomes(outcomes: readonly CaseOutcome[]): RunOutcomes {
  const sorted = [...outcomes].sort((x, y) => compareIds(x.case_id, y.case_id));
  const flags = new Uint8Array(sorted.length);
  const scores = new Float64Array(sorted.length);
  let pin: { judge_model: string; prompt_version: string } | null = null;
  sorted.forEach((o, i) => {
    flags[i] = (isScoredOutcome(o) ? SCORED : 0) | (o.passed ? PASSED : 0);
    scores[i] = o.score;
    // The least pin, as the evidence query ordered them: a run is normally graded by one.
    if (o.judge_model !== null) {
      const candidate = { judge_model: o.judge_model, prompt_version: o.prompt_version ?? '' };
      if (pin === null || compareIds(candidate.judge_model, pin.judge_model) < 0 || (candidate.judge_model === pin.judge_model && compareIds(candidate.prompt_version, pin.prompt_version) < 0)) pin = candidate;
    }
  });
  return { case_ids: sorted.map((o) => o.case_id), flags, scores, judge: pin ?? { judge_model: null, prompt_version: null } };
}

/**
 * G7: the two runs paired on the cases both scored, with each run's own scored counts beside (for two suite
 * versions). One merge over both sorted id lists: linear whatever the sizes.
 */
export function pairCases(run: RunOutcomes, baseline: RunOutcomes): ComparedCases {
  const side = (o: RunOutcomes) => {
    let scored = 0;
    let passed = 0;
    let sum = 0;
    for (let i = 0; i < o.flags.length; i++) {
      if ((o.flags[i] & SCORED) === 0) continue;
      scored++;
      if (o.flags[i] & PASSED) passed++;
      sum += o.scores[i];
    }
    return { scored, passed, sum };
  };
  const cells = [0, 0, 0, 0];
  const sums = { run: 0, baseline: 0 };
  for (let i = 0, j = 0; i < run.case_ids.length && j < baseline.case_ids.length; ) {
    const order = compareIds(run.case_ids[i], baseline.case_ids[j]);
    if (order === 0 && (run.flags[i] & SCORED) !== 0 && (baseline.flags[j] & SCORED) !== 0) {
      // 0: passed in both (a); 1: failed in the run only (b); 2: failed in the baseline only (c); 3: neither (d).
      cells[(run.flags[i] & PASSED ? 0 : 1) + (baseline.flags[j] & PASSED ? 0 : 2)]++;
      sums.run += run.scores[i];
      sums.baseline += baseline.scores[j];
    }
    if (order <= 0) i++;
    if (order >= 0) j++;
  }
  const r = side(run);
  const s = side(baseline);
  const [a, b, c, d] = cells;
  return {
    compared: a + b + c + d,
    a,
    b,
    c,
    d,
    run_score_sum: sums.run,
    baseline_score_sum: sums.baseline,
    run_cases: run.case_ids.length,
    run_scored: r.scored,
    baseline_cases: baseline.case_ids.length,
    baseline_scored: s.scored,
    run_scored_passed: r.passed,
    run_scored_score_sum: r.sum,
    baseline_scored_passed: s.passed,
    baseline_scored_score_sum: s.sum,
  };
}

function compareIds(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}
