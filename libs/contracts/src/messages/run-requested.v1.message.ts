// class-transformer's @Type reads design-time metadata, so the polyfill must load before the classes.
import 'reflect-metadata';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsOptional, IsString, ValidateNested } from 'class-validator';
import { MAX_INLINE_OUTPUTS, MAX_OUTPUT_BYTES } from '../limits';
import { defineMessage } from '../message-definition';
import { SUBJECTS } from '../subjects';
import { IsCount, IsSafeId, IsSuiteKey, IsToken, MaxUtf8Bytes } from '../validation/constraints';
import type { FieldIssue } from '../validation/dto-validation';

/** Where the candidate outputs of a run come from (M2). */
export const RUN_SOURCES = ['sandbox', 'ci', 'inline', 'session_sample'] as const;
export type RunSource = (typeof RUN_SOURCES)[number];

/** Suite versions are stored as a PostgreSQL `integer`. */
export const MAX_SUITE_VERSION = 2_147_483_647;

export interface InlineOutputV1 {
  readonly case_id: string;
  /** The candidate output. Scored in memory and never persisted, logged or echoed (D1). */
  readonly output: string;
}

/** `evals.run.requested` v1: open a run (sandbox, CI). */
export interface RunRequestedV1 {
  /** The caller's id; a second request with the same run_id is the same run (idempotent). */
  readonly run_id: string;
  readonly suite_key: string;
  /** Absent: the suite's latest version. */
  readonly suite_version?: number;
  readonly subject_kind: string;
  readonly subject_id: string;
  readonly variant?: string;
  /** An explicit baseline (G5). */
  readonly baseline_run_id?: string;
  readonly source: RunSource;
  /** Inline outputs; more may follow on `evals.output.submitted` until `evals.run.sealed`. */
  readonly outputs?: readonly InlineOutputV1[];
}

export class InlineOutputV1Dto implements InlineOutputV1 {
  @IsSafeId()
  case_id!: string;

  @IsString()
  @MaxUtf8Bytes(MAX_OUTPUT_BYTES)
  output!: string;
}

export class RunRequestedV1Dto implements RunRequestedV1 {
  @IsSafeId()
  run_id!: string;

  @IsSuiteKey()
  suite_key!: string;

  @IsOptional()
  @IsCount(1, MAX_SUITE_VERSION)
  suite_version?: number;

  @IsToken()
  subject_kind!: string;

  @IsSafeId()
  subject_id!: string;

  @IsOptional()
  @IsSafeId()
  variant?: string;

  @IsOptional()
  @IsSafeId()
  baseline_run_id?: string;

  @IsIn(RUN_SOURCES)
  source!: RunSource;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_INLINE_OUTPUTS)
  @ValidateNested({ each: true })
  @Type(() => InlineOutputV1Dto)
  outputs?: InlineOutputV1Dto[];
}

/** A valid payload: the docs show it and tests (here and in other teams' code) start from it. */
export const RUN_REQUESTED_V1_EXAMPLE: RunRequestedV1 = {
  run_id: 'ci-4711-support-triage',
  suite_key: 'support-triage',
  suite_version: 3,
  subject_kind: 'agent',
  subject_id: 'support-bot',
  variant: 'prompt-v7',
  source: 'ci',
  outputs: [
    { case_id: 'route-double-charge', output: 'billing' },
    { case_id: 'reply-refund-mentions-refund', output: 'Hi Sam, the refund for your order was issued today.' },
  ],
};

export const RUN_REQUESTED_V1 = defineMessage({
  type: SUBJECTS.RUN_REQUESTED,
  version: 1,
  direction: 'inbound',
  dto: RunRequestedV1Dto,
  invariants: (data: RunRequestedV1): FieldIssue[] => {
    const issues: FieldIssue[] = [];
    if (data.baseline_run_id !== undefined && data.baseline_run_id === data.run_id) {
      issues.push({ field: 'baseline_run_id', constraint: 'notRunId' });
    }
    // Two outputs for one case would make the score depend on arrival order.
    const seen = new Set<string>();
    data.outputs?.forEach((o, i) => {
      if (seen.has(o.case_id)) issues.push({ field: `outputs[${i}].case_id`, constraint: 'uniqueCaseId' });
      seen.add(o.case_id);
    });
    return issues;
  },
  example: RUN_REQUESTED_V1_EXAMPLE,
});
