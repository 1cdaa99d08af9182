/**
 * Pairwise A/B comparison (J5, opt-in). Each shared case is judged twice, once with A shown first (`ab`)
 * and once with B shown first (`ba`). A winner is declared only when both orders name the same answer;
 * when they disagree the case is a tie counted as position-inconsistent. The report gives the measured
 * position-consistency rate with its denominator and 95% Wilson interval (GT6).
 */
import { wilson } from '@evals/stats';
import type { JudgeErrorCode } from './judge.port';
import type { PairwiseChoice } from './judge-parser';

export type PairwiseWinner = 'a' | 'b' | 'tie';

export interface PairwiseDecision {
  readonly winner: PairwiseWinner;
  /** True when both orders gave the same answer (the same winner, or both a tie). */
  readonly position_consistent: boolean;
}

/** One compared case: a decision, or the error of either of its two calls (then it is not counted). */
export type PairwiseCaseResult = PairwiseDecision | { readonly error: JudgeErrorCode };

function fromAb(choice: PairwiseChoice): PairwiseWinner {
  return choice === 'first' ? 'a' : choice === 'second' ? 'b' : 'tie';
}

function fromBa(choice: PairwiseChoice): PairwiseWinner {
  return choice === 'first' ? 'b' : choice === 'second' ? 'a' : 'tie';
}

/**
 * Decides one case from the judge's two answers: `ab` is its choice when A was shown first, `ba` when B
 * was shown first (`first`/`second` are positions, not answers). A judge that always prefers the first
 * answer names A in one order and B in the other: a tie, position-inconsistent.
 */
export function decidePairwise(ab: PairwiseChoice, ba: PairwiseChoice): PairwiseDecision {
  const x = fromAb(ab);
  const y = fromBa(ba);
  if (x === y) return { winner: x, position_consistent: true };
  return { winner: 'tie', position_consistent: false };
}

export interface PositionConsistency {
  /** consistent / n, or null when no case was decided. */
  readonly rate: number | null;
  readonly consistent: number;
  /** Decided cases (errors excluded). */
  readonly n: number;
  readonly lower: number;
  readonly upper: number;
}

export interface PairwiseReport {
  /** Cases A won (both orders agree on A). */
  readonly wins: number;
  /** Cases B won (both orders agree on B). */
  readonly losses: number;
  /** Ties: both orders said tie, or the orders disagreed. */
  readonly ties: number;
  /** Of the ties, those where the orders disagreed (position-inconsistent). */
  readonly inconsistent_ties: number;
  /** Cases with no decision (a call of either order failed); not in any denominator. */
  readonly errors: number;
  /** Decided cases: wins + losses + ties. */
  readonly n: number;
  readonly position_consistency: PositionConsistency;
}

export function pairwiseReport(results: readonly PairwiseCaseResult[]): PairwiseReport {
  let wins = 0;
  let losses = 0;
  let ties = 0;
  let inconsistent = 0;
  let errors = 0;
  for (const r of results) {
    if ('error' in r) {
      errors++;
      continue;
    }
    if (r.winner === 'a') wins++;
    else if (r.winner === 'b') losses++;
    else ties++;
    if (!r.position_consistent) inconsistent++;
  }
  const n = wins + losses + ties;
  const consistent = n - inconsistent;
  const interval = wilson(consistent, n);
  return {
    wins,
    losses,
    ties,
    inconsistent_ties: inconsistent,
    errors,
    n,
    position_consistency: { rate: interval.estimate, consistent, n, lower: interval.lower, upper: interval.upper },
  };
}
