import { Controller, Get, HttpException, Inject, Param, Query } from '@nestjs/common';
import { isSafeId, isSuiteKey } from '@evals/contracts';
import { RegressionRepository } from '@evals/persistence';
import { DATA_SOURCE, RequireTier } from '@evals/platform';
import type { DataSource } from 'typeorm';

/**
 * Findings (G6) as stored, for people and tools that do not consume `finding.reported`: the same payload
 * as the bus event (spec section 10), newest first.
 */
@Controller('v1/findings')
export class FindingsController {
  private readonly repo = new RegressionRepository();

  constructor(@Inject(DATA_SOURCE) private readonly db: DataSource) {}

  @RequireTier('viewer')
  @Get()
  async list(@Query('suite_key') suiteKey?: string, @Query('subject_id') subjectId?: string, @Query('limit') limit?: string) {
    if (suiteKey !== undefined && !isSuiteKey(suiteKey)) throw new HttpException({ code: 'INVALID_REQUEST', message: 'suite_key must be a suite key', field: 'suite_key' }, 400);
    if (subjectId !== undefined && !isSafeId(subjectId)) throw new HttpException({ code: 'INVALID_REQUEST', message: 'subject_id must be an id', field: 'subject_id' }, 400);
    const n = limit === undefined ? 20 : Number(limit);
    if (!Number.isInteger(n) || n < 1 || n > 500) throw new HttpException({ code: 'INVALID_REQUEST', message: 'limit must be a whole number from 1 to 500', field: 'limit' }, 400);
    return { findings: await this.repo.findings(this.db, { suite_key: suiteKey, subject_id: subjectId, limit: n }) };
  }

  @RequireTier('viewer')
  @Get(':id')
  async forRun(@Param('id') runId: string) {
    if (!isSafeId(runId)) throw new HttpException({ code: 'INVALID_REQUEST', message: 'run id must be an id', field: 'run_id' }, 400);
    const finding = await this.repo.findingFor(this.db, runId);
    if (!finding) throw new HttpException({ code: 'FINDING_NOT_FOUND', message: `run ${runId} has no finding (it did not regress, or is not compared yet)`, field: 'run_id' }, 404);
    return finding.payload;
  }
}
