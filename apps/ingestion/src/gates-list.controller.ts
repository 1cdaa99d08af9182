import { Controller, Get, Inject, Query } from '@nestjs/common';
import { isSafeId } from '@evals/contracts';
import { ApiProperty } from '@nestjs/swagger';
import { GateListQueries, type GateListItem, type Page } from '@evals/persistence';
import { ApiError, ApiRoute, DATA_SOURCE, ID_PROPERTY, ProjectScope, TIMESTAMP_PROPERTY } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { pageParams } from './page-params';

export class GateListItemDto {
  @ApiProperty() gate_id!: string;
  @ApiProperty(ID_PROPERTY) run_id!: string;
  @ApiProperty({ enum: ['suite', 'family'] }) kind!: string;
  @ApiProperty({ type: 'string', nullable: true }) suite_key!: string | null;
  @ApiProperty({ type: 'string', nullable: true }) subject_id!: string | null;
  @ApiProperty({ enum: ['pass', 'fail'] }) recorded_verdict!: 'pass' | 'fail';
  @ApiProperty({ enum: ['pass', 'fail'], description: 'After the overrides (GT5).' }) effective_verdict!: 'pass' | 'fail';
  @ApiProperty({ type: 'string', isArray: true, description: 'Reason codes.' }) reasons!: string[];
  @ApiProperty({ type: 'string', isArray: true, description: 'Warning codes.' }) warnings!: string[];
  @ApiProperty({ type: 'integer' }) overrides!: number;
  @ApiProperty(TIMESTAMP_PROPERTY) recorded_at!: string;
}

export class GateListPageDto {
  @ApiProperty({ type: () => GateListItemDto, isArray: true }) items!: GateListItemDto[];
  @ApiProperty({ type: 'integer' }) total!: number;
  @ApiProperty({ type: 'integer' }) offset!: number;
  @ApiProperty({ type: 'integer' }) limit!: number;
}

/**
 * `GET /v1/gates` (GT5, issue 17): the recorded gates, newest first, each with its recorded and effective
 * verdict, its reason and warning codes and how many overrides it had - the dashboard's gates page and the
 * runs list's gate column. `run_id` (comma-separated, at most 200) narrows it to those runs. The full report
 * and the override audit of one gate stay at `GET /v1/gate/:id`.
 */
@Controller('v1/gates')
export class GatesListController {
  private readonly gates = new GateListQueries();

  constructor(@Inject(DATA_SOURCE) private readonly db: DataSource) {}

  @ApiRoute({ tier: 'viewer', summary: 'Recorded gates, newest first, with both verdicts (GT5)', ok: { status: 200, type: GateListPageDto, description: 'One page of gates.' }, errors: ['INVALID_REQUEST'] })
  @Get()
  async list(@ProjectScope() project: string, @Query('run_id') runIds?: string, @Query('offset') offset?: string, @Query('limit') limit?: string): Promise<Page<GateListItem>> {
    const ids = runIds === undefined || runIds === '' ? undefined : runIds.split(',');
    if (ids && (ids.length > 200 || !ids.every(isSafeId))) throw new ApiError('INVALID_REQUEST', 'run_id must be up to 200 comma-separated run ids', 'run_id');
    const page = pageParams(offset, limit);
    // Issue 30: only the request's project's gates, also when run ids of another project are named.
    return this.gates.list(this.db, project, { run_id: ids }, page.offset, page.limit);
  }
}
