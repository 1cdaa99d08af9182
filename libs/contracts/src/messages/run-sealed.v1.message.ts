import { defineMessage } from '../message-definition';
import { SUBJECTS } from '../subjects';
import { IsSafeId } from '../validation/constraints';

/** `evals.run.sealed` v1: no more outputs for `run_id`; cases still without one fail as `missing_output` (R1). */
export interface RunSealedV1 {
  readonly run_id: string;
}

export class RunSealedV1Dto implements RunSealedV1 {
  @IsSafeId()
  run_id!: string;
}

/** A valid payload: the docs show it and tests (here and in other teams' code) start from it. */
export const RUN_SEALED_V1_EXAMPLE: RunSealedV1 = { run_id: 'sandbox-run-0192' };

export const RUN_SEALED_V1 = defineMessage({
  type: SUBJECTS.RUN_SEALED,
  version: 1,
  direction: 'inbound',
  dto: RunSealedV1Dto,
  example: RUN_SEALED_V1_EXAMPLE,
});
