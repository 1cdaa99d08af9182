import { Body, Controller, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { DATA_SOURCE, RequireTier } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { ComparisonService } from './comparison.service';

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

  @Post()
  @HttpCode(201)
  @RequireTier('operator')
  async create(@Body() body: unknown) {
    return this.comparisons.compare(this.db, body);
  }

  @Get(':id')
  @RequireTier('viewer')
  async get(@Param('id') id: string) {
    return this.comparisons.find(this.db, id);
  }
}
