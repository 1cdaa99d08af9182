import { ApiProperty } from '@nestjs/swagger';
import { RunCorrectedPassRateDto, SUITE_KEY_PROPERTY, TIMESTAMP_PROPERTY } from '@evals/platform';

/* The read model's HTTP shapes (docs/read-model.md, docs/scorecards.md); the run itself is RunViewDto. */

export class RateWithIntervalDto {
  @ApiProperty() rate!: number;
  @ApiProperty({ type: 'integer' }) passed!: number;
  @ApiProperty({ type: 'integer' }) n!: number;
  @ApiProperty() lower!: number;
  @ApiProperty() upper!: number;
  @ApiProperty() level!: number;
}

export class ScorecardTrendDto {
  @ApiProperty({ type: 'number', nullable: true, description: 'Least-squares slope of the pass rate per run.' }) slope_per_run!: number | null;
  @ApiProperty({ enum: ['improving', 'declining', 'flat', 'insufficient_data'] }) direction!: 'improving' | 'declining' | 'flat' | 'insufficient_data';
  @ApiProperty({ type: 'integer' }) runs!: number;
  @ApiProperty({ type: 'integer' }) window!: number;
  @ApiProperty() flat_epsilon!: number;
  @ApiProperty({ type: 'string', nullable: true }) first_run_id!: string | null;
  @ApiProperty({ type: 'string', nullable: true }) last_run_id!: string | null;
}

/** One scorecard per suite and subject (SC1); columns: docs/scorecards.md. */
export class ScorecardDto {
  @ApiProperty(SUITE_KEY_PROPERTY) suite_key!: string;
  @ApiProperty() subject_kind!: string;
  @ApiProperty() subject_id!: string;
  @ApiProperty({ type: 'integer' }) runs!: number;
  @ApiProperty({ type: 'integer' }) runs_incomplete!: number;
  @ApiProperty() latest_run_id!: string;
  @ApiProperty(TIMESTAMP_PROPERTY) latest_completed_at!: string;
  @ApiProperty({ type: 'integer' }) latest_suite_version!: number;
  @ApiProperty({ type: () => RateWithIntervalDto }) latest_pass_rate!: RateWithIntervalDto;
  @ApiProperty({ type: () => RateWithIntervalDto }) overall_pass_rate!: RateWithIntervalDto;
  @ApiProperty() mean_score!: number;
  @ApiProperty({ type: () => ScorecardTrendDto }) trend!: ScorecardTrendDto;
  @ApiProperty() latest_verdict!: string;
  @ApiProperty({ enum: ['complete', 'incomplete', 'expired'] }) latest_completeness!: string;
  @ApiProperty({ type: 'integer', nullable: true }) latest_cases_needed!: number | null;
  @ApiProperty({
    type: () => RunCorrectedPassRateDto,
    isArray: true,
    description: "J9: the latest run's judge-corrected pass rate per certified scope, with its interval and denominators (docs/scorecards.md); empty when none applies.",
  })
  latest_judge_corrected_pass_rates!: RunCorrectedPassRateDto[];
}

export class ScorecardsDto {
  @ApiProperty({ type: () => ScorecardDto, isArray: true }) scorecards!: ScorecardDto[];
}

/** The data of the SSE frames of GET /v1/runs/:id/events, for reference (`event: case` / `event: summary`). */
export const RUN_EVENTS_SCHEMA = {
  type: 'string',
  description:
    'text/event-stream: one `case` frame per scored case ({case_id, scorer, scorer_version, score, passed, label}), then one `summary` frame ' +
    '(the run summary with run_id, status, suite, suite_version, case_count, missing_outputs, frames), then the stream ends.',
} as const;
