import { Body, Controller, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { ApiParam } from '@nestjs/swagger';
import { ApiRoute, DATA_SOURCE, ProjectScope } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { ComparisonService } from './comparison.service';
import { ComparisonBody, ComparisonDto } from './regression.dto';

/**
 * Pairwise A/B (J5): `POST /v1/comparisons` `{run_a, run_b, outputs_a, outputs_b, rubric?}` judges every
 * shared case in both orders and answers the stored report; `GET /v1/comparisons/:id` reads it back.
 */
@Controller('v1/comparisons')
export class ComparisonsController {
  constructor(
    private readonly comparisons: ComparisonService,
    @Inject(DATA_SOURCE) private readonly db: DataSource,
  ) {}

  @ApiRoute({
    tier: 'operator',
    summary: 'Pairwise A/B (J5): judge every shared case in both orders; store and answer the report',
    body: ComparisonBody,
    ok: { status: 201, type: ComparisonDto, description: 'The stored report.' },
    errors: ['INVALID_REQUEST', 'SAME_RUN', 'RUN_NOT_FOUND', 'RUNS_OTHER_SUITE', 'NO_SHARED_CASES', 'UNKNOWN_CASE', 'DUPLICATE_CASE', 'RUBRIC_REQUIRED', 'SUITE_NOT_FOUND', 'JUDGE_NOT_CONFIGURED', 'JUDGE_CREDENTIAL_MISSING', 'JUDGE_CALL_FAILED'],
  })
  @Post()
  @HttpCode(201)
  async create(@Body() body: ComparisonBody, @ProjectScope() project: string): Promise<ComparisonDto> {
    return (await this.comparisons.compare(this.db, project, body)) as unknown as ComparisonDto;
  }

  @ApiRoute({ tier: 'viewer', summary: 'A stored pairwise comparison', ok: { status: 200, type: ComparisonDto, description: 'The report.' }, errors: ['COMPARISON_NOT_FOUND'] })
  @ApiParam({ name: 'id', description: 'The comparison id.' })
  @Get(':id')
  async get(@Param('id') id: string, @ProjectScope() project: string): Promise<ComparisonDto> {
    return (await this.comparisons.find(this.db, project, id)) as unknown as ComparisonDto;
  }
}
