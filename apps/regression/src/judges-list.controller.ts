import { Controller, Get, Inject } from '@nestjs/common';
import type { LangChainJudge } from '@evals/judge';
import { ApiProperty } from '@nestjs/swagger';
import { JudgePinQueries, type JudgePinStatus } from '@evals/persistence';
import { ApiRoute, DATA_SOURCE, OBJECT_PROPERTY } from '@evals/platform';
import { MIN_CALIBRATION_TARGETS } from '@evals/domain';
import type { DataSource } from 'typeorm';
import { REGRESSION_JUDGE } from './calibration.judge';

export class JudgePinDto {
  @ApiProperty() judge_model!: string;
  @ApiProperty() prompt_version!: string;
}

export class JudgesListDto {
  @ApiProperty({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    description: "Each pin's status as GET /v1/judges/status answers it (status, reasons, n, agreement, kappa, sensitivity, specificity with numerator and denominator and 95% interval, targets), plus verbosity_bias.",
  })
  judges!: JudgePinStatus[];
  @ApiProperty({ type: () => JudgePinDto, nullable: true, description: 'The judge configured on this app, if any.' }) configured!: JudgePinDto | null;
  @ApiProperty({ ...OBJECT_PROPERTY, description: 'The J4/J7 minimum targets.' }) minimum_targets!: unknown;
}

/**
 * `GET /v1/judges` (J4, issue 17): every judge pin (model and prompt version) that has a calibration report,
 * and the judge configured here even when it has none (`uncalibrated`), each with the status of its latest
 * report - agreement with its interval, kappa, sensitivity and specificity with their denominators, the
 * targets and the reasons. One pin's status with the corrected pass rate stays at `GET /v1/judges/status`.
 */
@Controller('v1/judges')
export class JudgesListController {
  private readonly pins = new JudgePinQueries();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(REGRESSION_JUDGE) private readonly judge: LangChainJudge | null,
  ) {}

  @ApiRoute({ tier: 'viewer', summary: 'Every judge pin with its calibration status (J4)', ok: { status: 200, type: JudgesListDto, description: 'The pins.' } })
  @Get()
  async list(): Promise<JudgesListDto> {
    const configured = this.judge ? { judge_model: this.judge.model, prompt_version: this.judge.promptVersion } : null;
    return { judges: await this.pins.list(this.db, configured ? [configured] : []), configured, minimum_targets: MIN_CALIBRATION_TARGETS };
  }
}
