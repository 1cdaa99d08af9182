import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { ApiParam, ApiQuery } from '@nestjs/swagger';
import { ApiRoute, DATA_SOURCE, ProjectScope, refuseUnstorableText } from '@evals/platform';
import type { DataSource } from 'typeorm';
import { CalibrationService } from './calibration.service';
import { CalibrationReportDto, CalibrationRunBody, CalibrationSetBody, CalibrationSetCreatedDto, CalibrationSetDto, JUDGE_STATUS_SCHEMA, JudgeStatusModels, type JudgeStatusAnswer } from './regression.dto';

const JUDGE_ERRORS = ['JUDGE_NOT_CONFIGURED', 'JUDGE_CREDENTIAL_MISSING', 'JUDGE_CALL_FAILED'] as const;

/** The texts of a calibration set that are stored: its name and rubric, and a golden set's texts (D4). */
function storedTextOf(body: unknown): Array<readonly [string, unknown]> {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const items = Array.isArray(b.items) ? (b.items as unknown[]) : [];
  return [
    ['name', b.name],
    ['rubric', b.rubric],
    ...items.flatMap((item, i) => {
      const it = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
      return [[`items[${i}].golden_output`, it.golden_output] as const, [`items[${i}].golden_input`, it.golden_input] as const];
    }),
  ];
}

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

  @ApiRoute({
    tier: 'operator',
    summary: 'Store a calibration set of human labels (J4): hashes and lengths; text only in a golden set (D4)',
    body: CalibrationSetBody,
    ok: { status: 201, type: CalibrationSetCreatedDto, description: 'The stored set.' },
    errors: ['INVALID_REQUEST', 'RUBRIC_REQUIRED', 'SUITE_NOT_FOUND', 'DUPLICATE_ITEM', 'UNKNOWN_CASE', 'GOLDEN_NOT_AUTHORISED', 'OUTPUT_HASH_MISMATCH', 'OUTPUT_CHARS_MISMATCH'],
  })
  @Post()
  @HttpCode(201)
  async create(@Body() body: CalibrationSetBody, @ProjectScope() project: string): Promise<CalibrationSetCreatedDto> {
    refuseUnstorableText(storedTextOf(body));
    return (await this.db.transaction((tx) => this.calibration.createSet(tx, project, body))) as unknown as CalibrationSetCreatedDto;
  }

  @ApiRoute({ tier: 'viewer', summary: 'A calibration set: its labels and reports, never its text', ok: { status: 200, type: CalibrationSetDto, description: 'The set.' }, errors: ['SET_NOT_FOUND'] })
  @ApiParam({ name: 'id', description: 'The set id.', schema: { type: 'string', format: 'uuid' } })
  @Get(':id')
  async get(@Param('id') id: string, @ProjectScope() project: string): Promise<CalibrationSetDto> {
    return (await this.calibration.getSet(this.db, project, id)) as unknown as CalibrationSetDto;
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

  @ApiRoute({
    tier: 'operator',
    summary: "Judge a set's items against their human labels (J4); store and answer the report",
    body: CalibrationRunBody,
    ok: { status: 201, type: CalibrationReportDto, description: 'The stored (append-only) report.' },
    errors: ['INVALID_REQUEST', 'TARGET_INVALID', 'TARGET_BELOW_MINIMUM', 'SET_NOT_FOUND', 'SUITE_NOT_FOUND', 'UNKNOWN_ITEM', 'DUPLICATE_ITEM', 'OUTPUT_HASH_MISMATCH', 'OUTPUTS_MISSING', ...JUDGE_ERRORS],
  })
  @Post()
  @HttpCode(201)
  async run(@Body() body: CalibrationRunBody, @ProjectScope() project: string): Promise<CalibrationReportDto> {
    return (await this.calibration.calibrate(this.db, project, body)) as unknown as CalibrationReportDto;
  }

  @ApiRoute({ tier: 'viewer', summary: 'A stored calibration report', ok: { status: 200, type: CalibrationReportDto, description: 'The report.' }, errors: ['REPORT_NOT_FOUND'] })
  @ApiParam({ name: 'id', description: 'The report id.', schema: { type: 'string', format: 'uuid' } })
  @Get(':id')
  async get(@Param('id') id: string, @ProjectScope() project: string): Promise<CalibrationReportDto> {
    return (await this.calibration.report(this.db, project, id)) as unknown as CalibrationReportDto;
  }
}

/**
 * `GET /v1/judges/status?model=&prompt_version=` (GT1, J4): a judge pin's certification scopes - each
 * `rubric:<sha256>` or `suite:<key>` with the standing of its latest measured report. With `scope=` that
 * scope alone, and with `passed=&n=` under a certified scope also the corrected pass rate of `passed` of `n`
 * judged cases with its 95% interval (Rogan-Gladen, Lang & Reiczigel 2014). Issue 30: the standing in the
 * caller's project, from that project's calibration reports only.
 */
@Controller('v1/judges')
@JudgeStatusModels
export class JudgesController {
  constructor(
    private readonly calibration: CalibrationService,
    @Inject(DATA_SOURCE) private readonly db: DataSource,
  ) {}

  @ApiRoute({
    tier: 'viewer',
    summary: "A judge pin's certification, and a corrected pass rate (GT1, J4)",
    ok: { status: 200, schema: JUDGE_STATUS_SCHEMA, description: 'Without scope: the pin over every scope it was measured in (JudgePinSummaryDto). With scope: that scope (JudgeScopeAnswerDto).' },
    errors: ['INVALID_REQUEST'],
  })
  @ApiQuery({ name: 'model', required: false, schema: { type: 'string', maxLength: 200 } })
  @ApiQuery({ name: 'prompt_version', required: false, schema: { type: 'string', maxLength: 100 } })
  @ApiQuery({ name: 'scope', required: false, description: '`rubric:<sha256>` or `suite:<key>`.', schema: { type: 'string' } })
  @ApiQuery({ name: 'passed', required: false, schema: { type: 'integer', minimum: 0 } })
  @ApiQuery({ name: 'n', required: false, schema: { type: 'integer', minimum: 1 } })
  @Get('status')
  async status(
    @ProjectScope() project: string,
    @Query('model') model?: string,
    @Query('prompt_version') promptVersion?: string,
    @Query('scope') scope?: string,
    @Query('passed') passed?: string,
    @Query('n') n?: string,
  ): Promise<JudgeStatusAnswer> {
    return (await this.calibration.judgeStatus(this.db, project, { model, prompt_version: promptVersion, scope, passed, n })) as unknown as JudgeStatusAnswer;
  }
}
