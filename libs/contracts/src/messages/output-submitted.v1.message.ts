import { IsString } from 'class-validator';
import { MAX_OUTPUT_BYTES } from '../limits';
import { defineMessage } from '../message-definition';
import { SUBJECTS } from '../subjects';
import { IsSafeId, MaxUtf8Bytes } from '../validation/constraints';

/** `evals.output.submitted` v1: one candidate output for one case of an open run. */
export interface OutputSubmittedV1 {
  readonly run_id: string;
  readonly case_id: string;
  /** The candidate output. Scored in memory and never persisted, logged or echoed (D1). */
  readonly output: string;
}

export class OutputSubmittedV1Dto implements OutputSubmittedV1 {
  @IsSafeId()
  run_id!: string;

  @IsSafeId()
  case_id!: string;

  @IsString()
  @MaxUtf8Bytes(MAX_OUTPUT_BYTES)
  output!: string;
}

/** A valid payload: the docs show it and tests (here and in other teams' code) start from it. */
export const OUTPUT_SUBMITTED_V1_EXAMPLE: OutputSubmittedV1 = {
  run_id: 'sandbox-run-0192',
  case_id: 'route-app-crash',
  output: 'technical',
};

export const OUTPUT_SUBMITTED_V1 = defineMessage({
  type: SUBJECTS.OUTPUT_SUBMITTED,
  version: 1,
  direction: 'inbound',
  dto: OutputSubmittedV1Dto,
  example: OUTPUT_SUBMITTED_V1_EXAMPLE,
});
