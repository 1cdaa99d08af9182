import { ApiProperty } from '@nestjs/swagger';
import { CaseResultDto, ID_PROPERTY, RunSummaryDto, TIMESTAMP_PROPERTY } from '@evals/platform';

/** One run of `GET /v1/run-list` (docs/dashboard.md): its summary and its regression verdict once decided. */
export class RunListItemDto {
  @ApiProperty(ID_PROPERTY) run_id!: string;
  @ApiProperty() suite_key!: string;
  @ApiProperty({ type: 'integer' }) suite_version!: number;
  @ApiProperty() subject_kind!: string;
  @ApiProperty() subject_id!: string;
  @ApiProperty({ type: 'string', nullable: true }) variant!: string | null;
  @ApiProperty({ enum: ['open', 'sealed', 'completed'] }) status!: 'open' | 'sealed' | 'completed';
  @ApiProperty({ type: 'integer' }) case_count!: number;
  @ApiProperty(TIMESTAMP_PROPERTY) opened_at!: string;
  @ApiProperty({ ...TIMESTAMP_PROPERTY, nullable: true }) completed_at!: string | null;
  @ApiProperty({ type: () => RunSummaryDto, description: 'R2, GT6: pass rate with its denominator and 95% Wilson interval.' }) summary!: RunSummaryDto;
  @ApiProperty({ type: 'string', nullable: true, enum: ['regressed', 'inconclusive_noise', 'no_regression', 'no_baseline', null], description: 'null until the regression app has decided.' }) verdict!: string | null;
  @ApiProperty({ type: 'string', nullable: true }) baseline_run_id!: string | null;
  @ApiProperty({ type: 'string', nullable: true, enum: ['complete', 'incomplete', 'expired', null] }) completeness!: string | null;
}

export class RunListPageDto {
  @ApiProperty({ type: () => RunListItemDto, isArray: true }) items!: RunListItemDto[];
  @ApiProperty({ type: 'integer', description: 'Runs matching the filters, over all pages.' }) total!: number;
  @ApiProperty({ type: 'integer' }) offset!: number;
  @ApiProperty({ type: 'integer' }) limit!: number;
}

export class CasePageDto {
  @ApiProperty({ type: () => CaseResultDto, isArray: true, description: 'By case id; labels and scores, never an output (D1).' }) items!: CaseResultDto[];
  @ApiProperty({ type: 'integer' }) total!: number;
  @ApiProperty({ type: 'integer' }) offset!: number;
  @ApiProperty({ type: 'integer' }) limit!: number;
}

export class WhoAmIDto {
  @ApiProperty({ description: "The key's name (`auth-disabled` when access control is off)." }) name!: string;
  @ApiProperty({ enum: ['viewer', 'operator', 'admin'] }) tier!: string;
  @ApiProperty() auth_disabled!: boolean;
  @ApiProperty({ description: 'Issue 30: the project the request acts in - a project key\'s own, or the one a platform key named in X-Evals-Project (`default` when none).' }) project!: string;
  @ApiProperty({ description: 'True for a platform key (one of no project, that may act in any).' }) platform!: boolean;
}
