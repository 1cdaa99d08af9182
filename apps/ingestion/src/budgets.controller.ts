import { Controller, Get } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ApiRoute, ProjectScope, TIMESTAMP_PROPERTY } from '@evals/platform';
import { GateBudget } from './gate-budget';

/** One judge budget (GT4, issue 13): its limit, what its current window has spent (from the ledger) and what is left. */
export class BudgetDto {
  @ApiProperty({ type: 'string', example: 'judge:gpt-4o-2024-08-06', description: '`judge` (all judge spend), `judge:<model>` (one pin) or `suite:<key>`.' }) scope!: string;
  @ApiProperty({ enum: ['allow', 'throttle', 'block'], description: 'What the gate does when its judge spend estimate does not fit in what is left.' }) mode!: string;
  @ApiProperty({ enum: ['day', 'month', 'total'], description: 'The window (UTC calendar day or month, or all time) whose spend counts.' }) period!: string;
  @ApiPropertyOptional({ ...TIMESTAMP_PROPERTY, nullable: true, description: 'Start of the current window; null for `total`.' }) window_start!: string | null;
  @ApiProperty({ type: 'number', minimum: 0, description: 'US dollars.' }) limit_usd!: number;
  @ApiProperty({ type: 'number', minimum: 0, description: 'US dollars spent in the window: the sum of the judge spend ledger over the scope.' }) spent_usd!: number;
  @ApiProperty({ type: 'number', minimum: 0, description: 'US dollars held by gates whose judge spend is estimated but not yet in the ledger (GT4: two gates at once cannot both fit the same remaining budget).' }) reserved_usd!: number;
  @ApiProperty({ type: 'number', minimum: 0, description: 'limit - spent - reserved, never below 0: what the next gate can spend.' }) left_usd!: number;
  @ApiProperty(TIMESTAMP_PROPERTY) updated_at!: string;
}

export class BudgetListDto {
  @ApiProperty({ type: () => BudgetDto, isArray: true }) budgets!: BudgetDto[];
  @ApiProperty({ ...TIMESTAMP_PROPERTY, description: 'The time the windows were computed at.' }) as_of!: string;
}

/** `GET /v1/budgets` (GT4, issue 13): every judge budget with its limit, spent and left. */
@Controller('v1/budgets')
export class BudgetsController {
  constructor(private readonly budgets: GateBudget) {}

  @ApiRoute({
    tier: 'viewer',
    summary: 'Judge budgets (GT4): limit, spent in the current window (from the spend ledger) and left, per scope',
    ok: { status: 200, type: BudgetListDto, description: 'Every budget, by scope.' },
    errors: ['INTERNAL'],
  })
  @Get()
  list(@ProjectScope() project: string): Promise<BudgetListDto> {
    // Issue 30: the project's budgets only; another project's budget of the same scope is not listed.
    return this.budgets.list(project);
  }
}
