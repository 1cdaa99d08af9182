import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { DATA_SOURCE, RequireTier } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { CalibrationService } from './calibration.service';

/**
 * Calibration sets (J4): `POST /v1/calibration-sets` stores human labels (hashes and lengths; text only in a
 * golden set, D4); `GET /v1/calibration-sets/:id` reads one back (never its text).
 */
@Controller('v1/calibration-sets')
export class CalibrationSetsController {
  constructor(
    private readonly calibration: CalibrationService,
    @Inject(DATA_SOURCE) private readonly db: DataSource,
  ) {}

  @Post()
  @HttpCode(201)
  @RequireTier('operator')
  async create(@Body() body: unknown) {
    return this.db.transaction((tx) => this.calibration.createSet(tx, body));
  }

  @Get(':id')
  @RequireTier('viewer')
  async get(@Param('id') id: string) {
    return this.calibration.getSet(this.db, id);
  }
}

/**
 * Calibration runs (J4): `POST /v1/calibrations` judges a set's items against their human labels and answers
 * the stored (append-only) report; `GET /v1/calibrations/:id` reads a report back.
 */
@Controller('v1/calibrations')
export class CalibrationsController {
  constructor(
    private readonly calibration: CalibrationService,
    @Inject(DATA_SOURCE) private readonly db: DataSource,
  ) {}

  @Post()
  @HttpCode(201)
  @RequireTier('operator')
  async run(@Body() body: unknown) {
    return this.calibration.calibrate(this.db, body);
  }

  @Get(':id')
  @RequireTier('viewer')
  async get(@Param('id') id: string) {
    return this.calibration.report(this.db, id);
  }
}

/**
 * `GET /v1/judges/status?model=&prompt_version=` (GT1): a judge pin's latest calibration - `certified`,
 * `not_certified`, `not_certifiable` or `uncalibrated` - for the gate. With `apparent_pass_rate` and a
 * certified pin, also the Rogan-Gladen corrected pass rate.
 */
@Controller('v1/judges')
export class JudgesController {
  constructor(
    private readonly calibration: CalibrationService,
    @Inject(DATA_SOURCE) private readonly db: DataSource,
  ) {}

  @Get('status')
  @RequireTier('viewer')
  async status(@Query('model') model?: string, @Query('prompt_version') promptVersion?: string, @Query('apparent_pass_rate') apparent?: string) {
    return this.calibration.judgeStatus(this.db, { model, prompt_version: promptVersion, apparent_pass_rate: apparent });
  }
}
