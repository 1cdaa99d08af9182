import { Controller, Get, Inject } from '@nestjs/common';
import type { LangChainJudge } from '@evals/judge';
import { ApiProperty } from '@nestjs/swagger';
import { JudgePinQueries, type JudgePinStatus } from '@evals/persistence';
import { ApiRoute, DATA_SOURCE, ProjectScope } from '@evals/platform';
import { MIN_CALIBRATION_TARGETS } from '@evals/domain';
import type { DataSource } from 'typeorm';
import { REGRESSION_JUDGE } from './calibration.judge';
import { CalibrationTargetsDto, JudgePinStatusDto } from './regression.dto';

export class JudgePinDto {
  @ApiProperty() judge_model!: string;
  @ApiProperty() prompt_version!: string;
}

export class JudgesListDto {
  @ApiProperty({
    type: () => JudgePinStatusDto,
    isArray: true,
    description:
      "One row per calibrated scope (judge model pin + prompt version + scope `rubric:<sha256>` or `suite:<key>`), each by that scope's latest measured report as the gate reads it: status, reasons, scope, set_name, n, agreement, kappa, sensitivity, specificity with numerator, denominator and 95% interval, targets, verbosity_bias. A pin with no measured scope (and the configured judge before any calibration) is one row with status `uncalibrated` and scope null.",
  })
  judges!: JudgePinStatus[];
  @ApiProperty({ type: () => JudgePinDto, nullable: true, description: 'The judge configured on this app, if any.' }) configured!: JudgePinDto | null;
  @ApiProperty({ type: () => CalibrationTargetsDto, description: 'The J4/J7 minimum targets.' }) minimum_targets!: CalibrationTargetsDto;
}

/**
 * `GET /v1/judges` (J4, issues 13 and 17): every calibrated scope of every judge pin - a certification is per
 * model pin + prompt version + rubric (by hash) or suite, and the gate trusts only the scope its cases use, so
 * the list is per scope, not per pin. The judge configured here appears even when it has no measured scope
 * (`uncalibrated`). Each row: agreement with its interval, kappa, sensitivity and specificity with their
 * denominators, the targets and the reasons. One scope with the corrected pass rate: `GET /v1/judges/status`.
 * Issue 30: the scopes of the caller's project - its reports, its standing.
 */
@Controller('v1/judges')
export class JudgesListController {
  private readonly pins = new JudgePinQueries();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(REGRESSION_JUDGE) private readonly judge: LangChainJudge | null,
  ) {}

  @ApiRoute({ tier: 'viewer', summary: 'Every calibrated judge scope with its status (J4)', ok: { status: 200, type: JudgesListDto, description: 'The scopes.' } })
  @Get()
  async list(@ProjectScope() project: string): Promise<JudgesListDto> {
    const configured = this.judge ? { judge_model: this.judge.model, prompt_version: this.judge.promptVersion } : null;
    return { judges: await this.pins.list(this.db, project, configured ? [configured] : []), configured, minimum_targets: MIN_CALIBRATION_TARGETS };
  }
}
