import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { InlineOutputV1Dto, MAX_INLINE_OUTPUTS, RUN_SOURCES } from '@evals/contracts';
import { ID_PROPERTY, SUITE_KEY_PROPERTY, TOKEN_PROPERTY } from '@evals/platform';

/*
 * The HTTP shapes of a streamed run (docs/pipeline.md, "Streamed runs over HTTP"): opened without outputs,
 * fed in batches, sealed. The opening body is `evals.run.requested` v1 without `outputs`, validated by the
 * same decoder; each output of a batch by the `evals.output.submitted` v1 decoder.
 */

/** `POST /v1/streamed-runs`: a run request whose outputs follow in batches. */
export class StreamedRunOpenBody {
  @ApiProperty({ ...ID_PROPERTY, description: 'The run to open. The same request again is the same run (idempotent); other content under this id is 409 RUN_ID_CONFLICT.' })
  run_id!: string;

  @ApiProperty(SUITE_KEY_PROPERTY) suite_key!: string;
  @ApiPropertyOptional({ type: 'integer', minimum: 1, description: 'Default: the latest version.' }) suite_version?: number;
  @ApiProperty({ ...TOKEN_PROPERTY, description: 'What is evaluated: agent, model, prompt...' }) subject_kind!: string;
  @ApiProperty(ID_PROPERTY) subject_id!: string;
  @ApiPropertyOptional(ID_PROPERTY) variant?: string;
  @ApiPropertyOptional({ ...ID_PROPERTY, description: 'An explicit baseline run (G5).' }) baseline_run_id?: string;
  @ApiPropertyOptional({ type: 'string', enum: [...RUN_SOURCES], description: 'Default: inline.' }) source?: string;
}

/** The opened run: what its batches may contain. */
export class StreamedRunDto {
  @ApiProperty(ID_PROPERTY) run_id!: string;
  @ApiProperty(SUITE_KEY_PROPERTY) suite_key!: string;
  @ApiProperty({ type: 'integer' }) suite_version!: number;
  @ApiProperty({ type: 'integer', description: 'The cases the run scores; a case without an output at the seal is missing_output (R1).' }) case_count!: number;
  @ApiProperty({ description: 'false: the run was open already (the same request again).' }) created!: boolean;
  @ApiProperty({ enum: ['open', 'sealed'], description: 'sealed: it takes no more outputs.' }) phase!: string;
}

/** `POST /v1/streamed-runs/{run_id}/outputs`: one batch. */
export class StreamedOutputsBody {
  @ApiProperty({ type: () => InlineOutputV1Dto, isArray: true, minItems: 1, maxItems: MAX_INLINE_OUTPUTS, description: 'At most one output per case over the whole run; a second, different one is dead-lettered DUPLICATE_OUTPUT by the worker. Sending the same batch again is harmless.' })
  outputs!: InlineOutputV1Dto[];
}

export class StreamedOutputsAcceptedDto {
  @ApiProperty(ID_PROPERTY) run_id!: string;
  @ApiProperty({ type: 'integer', description: 'Outputs of this batch now on the bus for the scoring workers.' }) accepted!: number;
}

/** `POST /v1/streamed-runs/{run_id}/seal`. */
export class StreamedRunSealBody {
  @ApiPropertyOptional({ type: 'boolean', description: 'Default true: answer with the completed run. false: answer 202 RUN_PENDING at once and read the run at GET /v1/runs/{id}.' })
  wait?: boolean;
}
