import { Allow, IsBoolean, ValidateIf } from 'class-validator';
import { defineMessage } from '../message-definition';
import { SUBJECTS } from '../subjects';
import {
  IsCount,
  IsNumberInRange,
  IsSafeId,
  IsSuiteKey,
  IsTimestamp,
  IsToken,
} from '../validation/constraints';
import type { FieldIssue } from '../validation/dto-validation';
import { checkIntervalContains, checkMetrics, close, type EvalMetricsV1 } from './metrics';
import { MAX_SUITE_VERSION } from './run-requested.v1.message';

/**
 * `evals.result.recorded` v1: one EvalResult (R3), the canonical artifact that compliance and the UI read
 * without knowing this module's tables. Published for every completed run (R4).
 */
export interface ResultRecordedV1 {
  readonly suite: string;
  readonly suite_version: number;
  readonly subject_kind: string;
  readonly subject_id: string;
  /** Always present; `null` when the run has no variant, so consumers see one shape. */
  readonly variant: string | null;
  readonly run_id: string;
  /** Mean case score, in [0, 1]. */
  readonly score: number;
  /** pass_rate >= the suite's pass_threshold (R2). */
  readonly passed: boolean;
  readonly occurred_at: string;
  readonly metrics: EvalMetricsV1;
}

export class ResultRecordedV1Dto implements Omit<ResultRecordedV1, 'metrics'> {
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

  @IsSafeId()
  run_id!: string;

  @IsNumberInRange(0, 1)
  score!: number;

  @IsBoolean()
  passed!: boolean;

  @IsTimestamp()
  occurred_at!: string;

  // Free-form beyond its core, so validated by checkMetrics rather than a nested DTO (which would refuse
  // or strip the extra keys).
  @Allow()
  metrics!: EvalMetricsV1;
}

/** A valid payload: the docs show it and tests (here and in other teams' code) start from it. */
export const RESULT_RECORDED_V1_EXAMPLE: ResultRecordedV1 = {
  suite: 'support-triage',
  suite_version: 3,
  subject_kind: 'agent',
  subject_id: 'support-bot',
  variant: 'prompt-v7',
  run_id: 'ci-4711-support-triage',
  score: 0.875,
  passed: true,
  occurred_at: '2025-03-01T12:00:05.120Z',
  metrics: {
    pass_rate: 0.875,
    passed: 7,
    n: 8,
    pass_rate_ci: { lower: 0.52911, upper: 0.97758, level: 0.95 },
    missing_outputs: 0,
  },
};

export const RESULT_RECORDED_V1 = defineMessage({
  type: SUBJECTS.RESULT_RECORDED,
  version: 1,
  direction: 'outbound',
  dto: ResultRecordedV1Dto,
  extraChecks: (data) => checkMetrics(data['metrics'], 'metrics'),
  invariants: (data: ResultRecordedV1): FieldIssue[] => {
    const m = data.metrics;
    const issues: FieldIssue[] = [];
    if (m.passed > m.n) issues.push({ field: 'metrics.passed', constraint: 'notAboveN' });
    else if (!close(m.pass_rate, m.passed / m.n)) issues.push({ field: 'metrics.pass_rate', constraint: 'equalsPassedOverN' });
    issues.push(...checkIntervalContains(m.pass_rate_ci, m.pass_rate, 'metrics.pass_rate_ci'));
    return issues;
  },
  example: RESULT_RECORDED_V1_EXAMPLE,
});
