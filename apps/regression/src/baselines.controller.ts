import { Body, Controller, Get, HttpCode, Inject, Post, Query } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import { RegressionRepository } from '@evals/persistence';
import { ApiRoute, DATA_SOURCE, ProjectScope, refuse as fail } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { BaselinePinBody, BaselinePinnedDto, BaselinePinsDto } from './regression.dto';

/**
 * Baseline pins (G5): `POST /v1/baselines` pins a completed run as the baseline of a suite, subject and
 * variant; explicit per-run baselines still beat it, and it beats the automatic rule. Issue 30: pins are
 * per project, and only a completed run of the caller's project may be pinned (another project's run is
 * RUN_NOT_FOUND, as a missing one is).
 */
@Controller('v1/baselines')
export class BaselinesController {
  private readonly repo = new RegressionRepository();

  constructor(@Inject(DATA_SOURCE) private readonly db: DataSource) {}

  @ApiRoute({
    tier: 'operator',
    summary: 'Pin a completed run as the baseline of a suite, subject and variant (G5)',
    body: BaselinePinBody,
    ok: { status: 201, type: BaselinePinnedDto, description: 'The pin.' },
    errors: ['INVALID_REQUEST', 'RUN_NOT_FOUND', 'BASELINE_OTHER_SUITE', 'BASELINE_OTHER_SUBJECT'],
  })
  @Post()
  @HttpCode(201)
  async pin(@Body() body: BaselinePinBody, @ProjectScope() project: string): Promise<BaselinePinnedDto> {
    // Shape checked at the edge (BaselinePinBody, @ValidateAtEdge); here, whether this run may be the pin.
    const b = body;
    const run = await this.repo.find(this.db, project, b.run_id);
    if (!run) fail('RUN_NOT_FOUND', `run ${b.run_id} is not a completed run`, 'run_id');
    if (run.suite_key !== b.suite_key) fail('BASELINE_OTHER_SUITE', `run ${run.run_id} is a run of suite ${run.suite_key}, not ${b.suite_key}`, 'run_id');
    if (run.subject_kind !== b.subject_kind || run.subject_id !== b.subject_id) fail('BASELINE_OTHER_SUBJECT', `run ${run.run_id} is a run of ${run.subject_kind}/${run.subject_id}`, 'run_id');
    const pin = { suite_key: b.suite_key, subject_kind: b.subject_kind, subject_id: b.subject_id, variant: b.variant ?? null, run_id: run.run_id };
    await this.repo.pin(this.db, project, pin);
    return { pin };
  }

  @ApiRoute({ tier: 'viewer', summary: 'The baseline pins, optionally of one suite or subject', ok: { status: 200, type: BaselinePinsDto, description: 'The pins.' } })
  @ApiQuery({ name: 'suite_key', required: false, schema: { type: 'string' } })
  @ApiQuery({ name: 'subject_id', required: false, schema: { type: 'string' } })
  @Get()
  async list(@ProjectScope() project: string, @Query('suite_key') suiteKey?: string, @Query('subject_id') subjectId?: string): Promise<BaselinePinsDto> {
    return { pins: (await this.repo.pins(this.db, project, { suite_key: suiteKey, subject_id: subjectId })) as BaselinePinsDto['pins'] };
  }
}
