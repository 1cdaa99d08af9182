import { correctedPassRate } from '@evals/stats';

/**
 * The judge-corrected pass rate the CLI specs show (report-judge-correction.spec.ts,
 * scorecard-judge-correction.spec.ts): Example 4 (first test) of Lang & Reiczigel (2014), 259 of 509 judged,
 * Se 84/127, Sp 96/109 -> 95% CI 0.58 to 0.87.
 */
export const published = correctedPassRate({ x: 259, n: 509, se: { x: 84, n: 127 }, sp: { x: 96, n: 109 } });

/** One entry of `judge_corrected_pass_rates` as the server sends it, for `scope`. */
export function correctedEntry(scope: string) {
  return {
    scope,
    judge_model: 'gpt-4o-2024-08-06',
    prompt_version: 'judge-v1',
    apparent: { passed: 259, n: 509, rate: 259 / 509 },
    sensitivity: { x: 84, n: 127 },
    specificity: { x: 96, n: 109 },
    rate: published.point,
    lower: published.lower,
    upper: published.upper,
    level: 0.95,
    method: 'rogan_gladen_lang_reiczigel_2014',
  };
}

/** The figures of the printed line: the corrected rate, its interval and every denominator. */
export const printedFigures = `${(published.point! * 100).toFixed(1)}% (95% CI ${(published.lower * 100).toFixed(1)}-${(published.upper * 100).toFixed(1)}%) - judge passed 259/509, Se 84/127, Sp 96/109`;
