import { Body, Controller, Get, HttpCode, HttpException, Inject, Post, Query } from '@nestjs/common';
import { isSafeId, isSuiteKey, isToken } from '@evals/contracts';
import { RegressionRepository } from '@evals/persistence';
import { DATA_SOURCE, RequireTier } from '@evals/platform';
import type { DataSource } from 'typeorm';

function fail(status: number, code: string, message: string, field?: string): never {
  throw new HttpException({ code, message, ...(field ? { field } : {}) }, status);
}

/**
 * Baseline pins (G5): `POST /v1/baselines` pins a completed run as the baseline of a suite, subject and
 * variant; explicit per-run baselines still beat it, and it beats the automatic rule.
 */
@Controller('v1/baselines')
export class BaselinesController {
  private readonly repo = new RegressionRepository();

  constructor(@Inject(DATA_SOURCE) private readonly db: DataSource) {}

  @RequireTier('operator')
  @Post()
  @HttpCode(201)
  async pin(@Body() body: Record<string, unknown>) {
    const b = body ?? {};
    if (!isSuiteKey(b.suite_key)) fail(400, 'INVALID_REQUEST', 'suite_key must be a suite key', 'suite_key');
    if (!isToken(b.subject_kind)) fail(400, 'INVALID_REQUEST', 'subject_kind must be a lowercase token', 'subject_kind');
    if (!isSafeId(b.subject_id)) fail(400, 'INVALID_REQUEST', 'subject_id must be an id', 'subject_id');
    if (b.variant !== undefined && b.variant !== null && !isSafeId(b.variant)) fail(400, 'INVALID_REQUEST', 'variant must be an id', 'variant');
    if (!isSafeId(b.run_id)) fail(400, 'INVALID_REQUEST', 'run_id must be an id', 'run_id');
    const run = await this.repo.find(this.db, b.run_id as string);
    if (!run) fail(404, 'RUN_NOT_FOUND', `run ${b.run_id} is not a completed run`, 'run_id');
    if (run.suite_key !== b.suite_key) fail(422, 'BASELINE_OTHER_SUITE', `run ${run.run_id} is a run of suite ${run.suite_key}, not ${b.suite_key}`, 'run_id');
    if (run.subject_kind !== b.subject_kind || run.subject_id !== b.subject_id) fail(422, 'BASELINE_OTHER_SUBJECT', `run ${run.run_id} is a run of ${run.subject_kind}/${run.subject_id}`, 'run_id');
    const pin = { suite_key: b.suite_key as string, subject_kind: b.subject_kind as string, subject_id: b.subject_id as string, variant: (b.variant as string | undefined) ?? null, run_id: run.run_id };
    await this.repo.pin(this.db, pin);
    return { pin };
  }

  @RequireTier('viewer')
  @Get()
  async list(@Query('suite_key') suiteKey?: string, @Query('subject_id') subjectId?: string) {
    return { pins: await this.repo.pins(this.db, { suite_key: suiteKey, subject_id: subjectId }) };
  }
}
