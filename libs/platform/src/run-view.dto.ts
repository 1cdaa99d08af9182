import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ID_PROPERTY, IntervalDto, TIMESTAMP_PROPERTY } from './api-schemas';
import { RunComparisonDto, RunCorrectedPassRateDto } from './comparison.dto';

/*
 * The run as the read model answers it (RunView of @evals/persistence, docs/read-model.md): answered by
 * GET /v1/runs/:id (read model) and by POST /v1/runs (ingestion waits for it), so the class lives with the
 * edge both apps share.
 */

type Interval = { lower: number; upper: number; level: number };

export class RunSummaryDto {
  @ApiProperty({ type: 'integer' }) n!: number;
  @ApiProperty({ type: 'integer' }) passed!: number;
  @ApiProperty({ type: 'number', nullable: true, description: 'Mean case score; null before any case is scored.' }) score!: number | null;
  @ApiProperty({ type: 'number', nullable: true }) pass_rate!: number | null;
  @ApiProperty({ type: () => IntervalDto, description: '95% Wilson interval of the pass rate.' }) pass_rate_ci!: Interval;
  @ApiProperty({ type: 'boolean', nullable: true, description: 'R2: pass_rate >= pass_threshold; null until completed.' }) run_passed!: boolean | null;
}

export class RunDocDto {
  @ApiProperty(ID_PROPERTY) run_id!: string;
  @ApiPropertyOptional({ description: "Issue 30: the run's project, from its run.opened; absent for a run of `default`." }) project?: string;
  @ApiProperty() suite_key!: string;
  @ApiProperty({ type: 'integer' }) suite_version!: number;
  @ApiProperty() suite_content_hash!: string;
  @ApiProperty() pass_threshold!: number;
  @ApiProperty() regression_threshold!: number;
  @ApiProperty() subject_kind!: string;
  @ApiProperty() subject_id!: string;
  @ApiProperty({ type: 'string', nullable: true }) variant!: string | null;
  @ApiProperty({ type: 'string', nullable: true }) baseline_run_id!: string | null;
  @ApiProperty({ type: 'string', enum: ['sandbox', 'ci', 'inline', 'session_sample'] }) source!: string;
  @ApiProperty({ type: 'integer' }) case_count!: number;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, description: 'Scorer name -> version.' }) scorer_versions!: Record<string, string>;
  @ApiProperty({ enum: ['open', 'sealed', 'completed'] }) status!: 'open' | 'sealed' | 'completed';
  @ApiProperty({ type: 'integer' }) scored!: number;
  @ApiProperty({ type: 'integer' }) passed!: number;
  @ApiProperty() score_sum!: number;
  @ApiProperty({ type: 'integer' }) missing_outputs!: number;
  @ApiProperty(TIMESTAMP_PROPERTY) opened_at!: string;
  @ApiProperty({ ...TIMESTAMP_PROPERTY, nullable: true }) completed_at!: string | null;
  @ApiPropertyOptional({ type: 'boolean', enum: [true], description: 'R7: nobody sealed the run; the system did after its time.' }) expired?: true;
  @ApiProperty({ type: () => RunSummaryDto }) summary!: RunSummaryDto;
}

export class EvalMetricsDto {
  @ApiProperty() pass_rate!: number;
  @ApiProperty({ type: 'integer' }) passed!: number;
  @ApiProperty({ type: 'integer' }) n!: number;
  @ApiProperty({ type: () => IntervalDto }) pass_rate_ci!: Interval;
  @ApiProperty({ type: 'integer' }) missing_outputs!: number;
  @ApiProperty() pass_threshold!: number;
  @ApiProperty() source!: string;
  @ApiPropertyOptional({ type: 'boolean', enum: [true] }) expired?: true;
}

/** The EvalResult (R3), the payload of `evals.result.recorded` v1. */
export class EvalResultDto {
  @ApiProperty() suite!: string;
  @ApiProperty({ type: 'integer' }) suite_version!: number;
  @ApiProperty() subject_kind!: string;
  @ApiProperty() subject_id!: string;
  @ApiProperty({ type: 'string', nullable: true }) variant!: string | null;
  @ApiProperty() run_id!: string;
  @ApiProperty() score!: number;
  @ApiProperty() passed!: boolean;
  @ApiProperty(TIMESTAMP_PROPERTY) occurred_at!: string;
  @ApiProperty({ type: () => EvalMetricsDto }) metrics!: EvalMetricsDto;
}

/** The regression decision (G1-G5) once the regression app has compared the run. */
export class RegressionViewDto {
  @ApiProperty({ description: 'no_baseline, no_regression, regression, inconclusive_noise, ...' }) verdict!: string;
  @ApiProperty({ type: 'string', nullable: true }) baseline_run_id!: string | null;
  @ApiProperty({ type: 'string', nullable: true, enum: ['explicit', 'pinned', 'automatic', null] }) chosen_by!: string | null;
  @ApiProperty({ type: () => RunComparisonDto, nullable: true, description: 'Score drop, Newcombe interval, pass counts, what changed (docs/regression.md); null without a baseline.' })
  comparison!: RunComparisonDto | null;
  @ApiProperty({ enum: ['complete', 'incomplete', 'expired'] }) completeness!: string;
  @ApiProperty() baseline_eligible!: boolean;
  @ApiPropertyOptional() baseline_ineligible_reason?: string;
}

export class CaseResultDto {
  @ApiProperty() case_id!: string;
  @ApiProperty() scorer!: string;
  @ApiProperty() scorer_version!: string;
  @ApiProperty() score!: number;
  @ApiProperty() passed!: boolean;
  @ApiProperty() label!: string;
  @ApiProperty(TIMESTAMP_PROPERTY) scored_at!: string;
}

export class RunViewDto {
  @ApiProperty({ type: () => RunDocDto }) run!: RunDocDto;
  @ApiProperty({ type: () => EvalResultDto, nullable: true }) eval_result!: EvalResultDto | null;
  @ApiProperty({ type: () => RegressionViewDto, nullable: true }) regression!: RegressionViewDto | null;
  @ApiPropertyOptional({ type: () => CaseResultDto, isArray: true, description: '`?include=cases`: per case, by case id.' }) cases?: CaseResultDto[];
  @ApiPropertyOptional({
    type: () => RunCorrectedPassRateDto,
    isArray: true,
    description:
      'J4/J9: the judge-corrected pass rate of the judged llm_judge cases per certified scope of the pin that judged them (Rogan-Gladen, 95% Lang-Reiczigel interval), read at query time; absent when none applies (docs/calibration.md).',
  })
  judge_corrected_pass_rates?: RunCorrectedPassRateDto[];
}
