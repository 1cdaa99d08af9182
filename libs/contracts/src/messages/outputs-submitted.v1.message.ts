// class-transformer's @Type reads design-time metadata, so the polyfill must load before the classes.
import 'reflect-metadata';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, ValidateNested } from 'class-validator';
import { MAX_BATCH_OUTPUTS } from '../limits';
import { defineMessage } from '../message-definition';
import { SUBJECTS } from '../subjects';
import { IsSafeId } from '../validation/constraints';
import { InlineOutputV1Dto, type InlineOutputV1 } from './run-requested.v1.message';

/**
 * `evals.outputs.submitted` v1 (issue 28): many candidate outputs of one open run in one message - what
 * `evals.output.submitted` carries, up to MAX_BATCH_OUTPUTS at a time. Each output keeps its own identity,
 * its case id: a redelivered or partly repeated batch records each case once, exactly as repeated single
 * messages do. An invalid output does not refuse the batch: the decoder takes it out and reports it
 * (`DecodeSuccess.refused`), and the consumer dead-letters it with its code and case id while the batch's
 * valid outputs go on. Two outputs of one case, in one batch or across batches, are what two single
 * messages are (the same output again is a no-op; another one is DUPLICATE_OUTPUT).
 */
export interface OutputsSubmittedV1 {
  readonly run_id: string;
  /** Each candidate output: scored in memory and never persisted, logged or echoed (D1). */
  readonly outputs: readonly InlineOutputV1[];
}

export class OutputsSubmittedV1Dto implements OutputsSubmittedV1 {
  @IsSafeId()
  run_id!: string;

  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_BATCH_OUTPUTS)
  @ValidateNested({ each: true })
  @Type(() => InlineOutputV1Dto)
  outputs!: InlineOutputV1Dto[];
}

/** A valid payload: the docs show it and tests (here and in other teams' code) start from it. */
export const OUTPUTS_SUBMITTED_V1_EXAMPLE: OutputsSubmittedV1 = {
  run_id: 'sandbox-run-0192',
  outputs: [
    { case_id: 'route-app-crash', output: 'technical' },
    { case_id: 'route-double-charge', output: 'billing' },
  ],
};

export const OUTPUTS_SUBMITTED_V1 = defineMessage({
  type: SUBJECTS.OUTPUTS_SUBMITTED,
  version: 1,
  direction: 'inbound',
  dto: OutputsSubmittedV1Dto,
  itemised: 'outputs',
  example: OUTPUTS_SUBMITTED_V1_EXAMPLE,
});
