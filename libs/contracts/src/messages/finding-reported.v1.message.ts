// class-transformer's @Type reads design-time metadata, so the polyfill must load before the classes.
import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsIn, IsObject, IsOptional, ValidateIf, ValidateNested } from 'class-validator';
import { defineMessage } from '../message-definition';
import { SUBJECTS } from '../subjects';
import {
  IsConfidenceLevel,
  IsCount,
  IsNumberInRange,
  IsSafeId,
  IsSuiteKey,
  IsTimestamp,
  IsToken,
} from '../validation/constraints';
import type { FieldIssue } from '../validation/dto-validation';
import { close } from './metrics';
import { MAX_SUITE_VERSION } from './run-requested.v1.message';

export const FINDING_KINDS = ['eval_regression'] as const;
export type FindingKind = (typeof FINDING_KINDS)[number];

/**
 * Which interval decided the regression (G7): Newcombe's hybrid score for two samples of cases (method 10 of
 * Newcombe 1998a), or Newcombe's paired method 10 (1998b) when both runs scored the same cases - then `run`
 * and `baseline` count those same cases.
 */
export const DIFF_METHODS = ['newcombe_hybrid_score', 'newcombe_paired_10'] as const;
export type DiffMethod = (typeof DIFF_METHODS)[number];

/** Pass-rate difference `run - baseline` with its interval (G1): Newcombe 1998, method 10. */
export interface PassRateDiffV1 {
  readonly diff: number;
  readonly lower: number;
  readonly upper: number;
  readonly level: number;
  readonly method: DiffMethod;
}

/**
 * G7, added to v1 as optional fields (an additive change, docs/contracts.md): the paired difference from the
 * discordant pairs of the cases both runs scored - `baseline_only` (b) passed in the baseline only,
 * `run_only` (c) in the run only, of `n` cases - with Newcombe's paired interval (1998b, method 10).
 */
export interface PairedDiffV1 {
  readonly diff: number;
  readonly lower: number;
  readonly upper: number;
  readonly level: number;
  readonly method: 'newcombe_paired_10';
  readonly baseline_only: number;
  readonly run_only: number;
  readonly n: number;
}

export const DECIDED_BY = ['paired', 'independent'] as const;
export type DecidedBy = (typeof DECIDED_BY)[number];

export interface PassCountsV1 {
  readonly passed: number;
  readonly n: number;
}

/**
 * `finding.reported` v1: one central Finding for a regression (G2), published best-effort (G6). Both
 * denominators always travel with the difference (G3).
 */
export interface FindingReportedV1 {
  readonly kind: FindingKind;
  readonly finding_id: string;
  readonly run_id: string;
  readonly baseline_run_id: string;
  readonly suite: string;
  readonly suite_version: number;
  readonly subject_kind: string;
  readonly subject_id: string;
  /** Always present; `null` when the run has no variant. */
  readonly variant: string | null;
  /** baseline.score - run.score; above the suite's regression_threshold, so > 0. */
  readonly score_drop: number;
  readonly pass_rate_diff: PassRateDiffV1;
  readonly run: PassCountsV1;
  readonly baseline: PassCountsV1;
  /** G7 (optional, additive): which interval decided; `pass_rate_diff` is that interval. */
  readonly decided_by?: DecidedBy;
  /** G7 (optional, additive): the independent-samples interval (Newcombe 1998a, method 10), always computed. */
  readonly independent_diff?: PassRateDiffV1;
  /** G7 (optional, additive): the paired interval with b, c and n; present when the comparison was paired. */
  readonly paired_diff?: PairedDiffV1;
  readonly occurred_at: string;
}

export class PassRateDiffV1Dto implements PassRateDiffV1 {
  @IsNumberInRange(-1, 1)
  diff!: number;

  @IsNumberInRange(-1, 1)
  lower!: number;

  @IsNumberInRange(-1, 1)
  upper!: number;

  @IsConfidenceLevel()
  level!: number;

  @IsIn(DIFF_METHODS)
  method!: DiffMethod;
}

export class PairedDiffV1Dto implements PairedDiffV1 {
  @IsNumberInRange(-1, 1)
  diff!: number;

  @IsNumberInRange(-1, 1)
  lower!: number;

  @IsNumberInRange(-1, 1)
  upper!: number;

  @IsConfidenceLevel()
  level!: number;

  @IsIn(['newcombe_paired_10'])
  method!: 'newcombe_paired_10';

  @IsCount()
  baseline_only!: number;

  @IsCount()
  run_only!: number;

  @IsCount(1)
  n!: number;
}

export class PassCountsV1Dto implements PassCountsV1 {
  @IsCount()
  passed!: number;

  @IsCount(1)
  n!: number;
}

export class FindingReportedV1Dto implements FindingReportedV1 {
  @IsIn(FINDING_KINDS)
  kind!: FindingKind;

  @IsSafeId()
  finding_id!: string;

  @IsSafeId()
  run_id!: string;

  @IsSafeId()
  baseline_run_id!: string;

  @IsSuiteKey()
  suite!: string;

  @IsCount(1, MAX_SUITE_VERSION)
  suite_version!: number;

  @IsToken()
  subject_kind!: string;

  @IsSafeId()
  subject_id!: string;

  @ValidateIf((o: { variant?: unknown }) => o.variant !== null)
  @IsSafeId()
  variant!: string | null;

  @IsNumberInRange(-1, 1)
  score_drop!: number;

  @IsObject()
  @ValidateNested()
  @Type(() => PassRateDiffV1Dto)
  pass_rate_diff!: PassRateDiffV1Dto;

  @IsObject()
  @ValidateNested()
  @Type(() => PassCountsV1Dto)
  run!: PassCountsV1Dto;

  @IsObject()
  @ValidateNested()
  @Type(() => PassCountsV1Dto)
  baseline!: PassCountsV1Dto;

  @IsOptional()
  @IsIn(DECIDED_BY)
  decided_by?: DecidedBy;

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => PassRateDiffV1Dto)
  independent_diff?: PassRateDiffV1Dto;

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => PairedDiffV1Dto)
  paired_diff?: PairedDiffV1Dto;

  @IsTimestamp()
  occurred_at!: string;
}

/** The optional G7 fields agree with each other and with the deciding interval. */
function comparisonIssues(data: FindingReportedV1): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const d = data.pass_rate_diff;
  const same = (x: { diff: number; lower: number; upper: number }): boolean => close(x.diff, d.diff) && close(x.lower, d.lower) && close(x.upper, d.upper);
  const p = data.paired_diff;
  if (p) {
    if (p.baseline_only + p.run_only > p.n) issues.push({ field: 'paired_diff.n', constraint: 'notBelowDiscordant' });
    else if (!close(p.diff, (p.run_only - p.baseline_only) / p.n)) issues.push({ field: 'paired_diff.diff', constraint: 'equalsRunOnlyMinusBaselineOnly' });
    if (p.lower > p.upper || p.diff < p.lower - 1e-9 || p.diff > p.upper + 1e-9) issues.push({ field: 'paired_diff', constraint: 'containsEstimate' });
  }
  const i = data.independent_diff;
  if (i && i.method !== 'newcombe_hybrid_score') issues.push({ field: 'independent_diff.method', constraint: 'independentMethod' });
  if (data.decided_by === 'paired') {
    if (!p) issues.push({ field: 'paired_diff', constraint: 'presentWhenPaired' });
    else if (d.method !== 'newcombe_paired_10' || !same(p)) issues.push({ field: 'pass_rate_diff', constraint: 'equalsDecidingInterval' });
  } else if (data.decided_by === 'independent') {
    if (d.method !== 'newcombe_hybrid_score' || (i && !same(i))) issues.push({ field: 'pass_rate_diff', constraint: 'equalsDecidingInterval' });
  }
  return issues;
}

/** A valid payload: the docs show it and tests (here and in other teams' code) start from it. */
export const FINDING_REPORTED_V1_EXAMPLE: FindingReportedV1 = {
  kind: 'eval_regression',
  finding_id: 'fnd-01HZX4ABCD',
  run_id: 'ci-4712-support-triage',
  baseline_run_id: 'ci-4711-support-triage',
  suite: 'support-triage',
  suite_version: 3,
  subject_kind: 'agent',
  subject_id: 'support-bot',
  variant: 'prompt-v7',
  score_drop: 0.6,
  pass_rate_diff: {
    diff: -0.6,
    lower: -0.76878,
    upper: -0.29451,
    level: 0.95,
    method: 'newcombe_hybrid_score',
  },
  run: { passed: 4, n: 20 },
  baseline: { passed: 16, n: 20 },
  occurred_at: '2025-03-02T09:30:00.000Z',
};

export const FINDING_REPORTED_V1 = defineMessage({
  type: SUBJECTS.FINDING_REPORTED,
  version: 1,
  direction: 'outbound',
  dto: FindingReportedV1Dto,
  invariants: (data: FindingReportedV1): FieldIssue[] => {
    const issues: FieldIssue[] = [];
    if (data.baseline_run_id === data.run_id) issues.push({ field: 'baseline_run_id', constraint: 'notRunId' });
    if (!(data.score_drop > 0)) issues.push({ field: 'score_drop', constraint: 'positive' });
    const counts: Array<[PassCountsV1, string]> = [
      [data.run, 'run'],
      [data.baseline, 'baseline'],
    ];
    for (const [c, path] of counts) {
      if (c.passed > c.n) issues.push({ field: `${path}.passed`, constraint: 'notAboveN' });
    }
    if (issues.length > 0) return issues;
    const d = data.pass_rate_diff;
    if (!close(d.diff, data.run.passed / data.run.n - data.baseline.passed / data.baseline.n)) {
      issues.push({ field: 'pass_rate_diff.diff', constraint: 'equalsRunMinusBaseline' });
    }
    if (d.lower > d.upper) issues.push({ field: 'pass_rate_diff', constraint: 'lowerNotAboveUpper' });
    else if (d.diff < d.lower - 1e-9 || d.diff > d.upper + 1e-9) {
      issues.push({ field: 'pass_rate_diff', constraint: 'containsEstimate' });
    } else if (d.lower <= 0 && d.upper >= 0) {
      // G2: an interval containing zero is inconclusive_noise, never a finding.
      issues.push({ field: 'pass_rate_diff', constraint: 'excludesZero' });
    }
    issues.push(...comparisonIssues(data));
    return issues;
  },
  example: FINDING_REPORTED_V1_EXAMPLE,
});
