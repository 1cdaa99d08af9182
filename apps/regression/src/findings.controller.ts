import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { ApiParam, ApiQuery } from '@nestjs/swagger';
import { isSafeId, isSuiteKey } from '@evals/contracts';
import { RegressionRepository } from '@evals/persistence';
import { ApiRoute, DATA_SOURCE, ProjectScope, refuse } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { FINDING_SCHEMA, FindingsDto } from './regression.dto';

/**
 * Findings (G6) as stored, for people and tools that do not consume `finding.reported`: the same payload
 * as the bus event (spec section 10), newest first. Issue 30: of the caller's project only; another
 * project's finding answers FINDING_NOT_FOUND, as a missing one does.
 */
@Controller('v1/findings')
export class FindingsController {
  private readonly repo = new RegressionRepository();

  constructor(@Inject(DATA_SOURCE) private readonly db: DataSource) {}

  @ApiRoute({ tier: 'viewer', summary: 'Findings (G6), newest first', ok: { status: 200, type: FindingsDto, description: 'The findings.' }, errors: ['INVALID_REQUEST'] })
  @ApiQuery({ name: 'suite_key', required: false, schema: { type: 'string' } })
  @ApiQuery({ name: 'subject_id', required: false, schema: { type: 'string' } })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: 500, default: 20 } })
  @Get()
  async list(@ProjectScope() project: string, @Query('suite_key') suiteKey?: string, @Query('subject_id') subjectId?: string, @Query('limit') limit?: string): Promise<FindingsDto> {
    if (suiteKey !== undefined && !isSuiteKey(suiteKey)) refuse('INVALID_REQUEST', 'suite_key must be a suite key', 'suite_key');
    if (subjectId !== undefined && !isSafeId(subjectId)) refuse('INVALID_REQUEST', 'subject_id must be an id', 'subject_id');
    const n = limit === undefined ? 20 : Number(limit);
    if (!Number.isInteger(n) || n < 1 || n > 500) refuse('INVALID_REQUEST', 'limit must be a whole number from 1 to 500', 'limit');
    return { findings: (await this.repo.findings(this.db, project, { suite_key: suiteKey, subject_id: subjectId, limit: n })) as FindingsDto['findings'] };
  }

  @ApiRoute({ tier: 'viewer', summary: "A run's finding: the payload of finding.reported", ok: { status: 200, schema: FINDING_SCHEMA, description: 'The finding.' }, errors: ['INVALID_REQUEST', 'FINDING_NOT_FOUND'] })
  @ApiParam({ name: 'id', description: 'The run id.' })
  @Get(':id')
  async forRun(@Param('id') runId: string, @ProjectScope() project: string): Promise<Record<string, unknown>> {
    if (!isSafeId(runId)) refuse('INVALID_REQUEST', 'run id must be an id', 'run_id');
    const finding = await this.repo.findingFor(this.db, project, runId);
    if (!finding) refuse('FINDING_NOT_FOUND', `run ${runId} has no finding (it did not regress, or is not compared yet)`, 'run_id');
    return finding.payload as Record<string, unknown>;
  }
}
