import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { CalibrationRateDto, CorrectedPassRateDto, COUNT_PROPERTY, RunComparisonDto, TIMESTAMP_PROPERTY } from '@evals/platform';
import { BudgetDto } from './budgets.controller';

/*
 * The nested parts of a gate's verdict (GateVerdictDto in ingestion.dto.ts, docs/gate.md), exactly as
 * GateService and GateVerdicts build them: the comparison with the baseline (the regression app's
 * `compareRuns` report, libs/domain; its parts are RunComparisonDto's of @evals/platform), the judge's use
 * and certification, the budget decision, a family's correction and the override audit. Every count is an integer; every rate carries its denominator (GT6).
 */

const VERDICTS = ['pass', 'fail'];
const STRINGS = { type: 'string', isArray: true } as const;

// --- The comparison with the baseline (G1-G8) ------------------------------------------------------------

/**
 * The run's regression decision against its baseline (G1-G8, docs/EVAL-METHODOLOGY.md): the regression app's
 * comparison report with the verdict and the baseline always (from the run's projected decision); the
 * statistics when a comparison was made; `error` when none could be.
 */
export class GateComparisonDto extends RunComparisonDto {}
ApiProperty({
  required: true,
  enum: ['regressed', 'inconclusive_noise', 'no_regression', 'no_baseline'],
  description: 'G2: regressed only when the score dropped by more than the threshold and the interval that decided excludes zero.',
})(GateComparisonDto.prototype, 'verdict');
ApiProperty({ required: true, type: 'string', nullable: true, description: 'The baseline run; null when there is none.' })(GateComparisonDto.prototype, 'baseline_run_id');
ApiProperty({ required: true, type: 'string', nullable: true, enum: ['explicit', 'pinned', 'automatic', null], description: 'G5: how the baseline was chosen.' })(GateComparisonDto.prototype, 'chosen_by');
ApiProperty({ description: 'The gated run.' })(GateComparisonDto.prototype, 'run_id');

// --- The judge (GT1, GT2, GT6, J4, J6, issue 13) ---------------------------------------------------------

/** What the judge did for the run (J1, J6, GT2, GT4): counts, tokens and money. */
export class JudgeUsageDto {
  @ApiProperty({ ...COUNT_PROPERTY, description: 'llm_judge cases with an output.' }) cases!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Judge calls made (neither cached nor refused before a call).' }) calls!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Cases whose judge call ended in an error label.' }) errors!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Cases failed judge_credential_missing (GT2).' }) credential_missing!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Cases failed judge_not_configured.' }) not_configured!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Cases failed without a call because the gate said so (budget, calibration: GT4, J4).' }) skipped!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'J6: recorded verdicts reused.' }) cache_hits!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'J6: lookups that missed and called the judge.' }) cache_misses!: number;
  @ApiProperty(COUNT_PROPERTY) input_tokens!: number;
  @ApiProperty(COUNT_PROPERTY) output_tokens!: number;
  @ApiProperty({ type: 'number', minimum: 0, description: 'US dollars.' }) cost_usd!: number;
  @ApiProperty({ type: 'string', nullable: true, description: 'The model pin that graded the cases; null when none was called.' }) model!: string | null;
  @ApiProperty({ type: 'string', nullable: true }) prompt_version!: string | null;
}

/** Issue 13: how often the judge agreed with itself on the cases judged with `repeats`, with its Wilson 95% interval. */
export class JudgeStabilityDto {
  @ApiProperty({ ...COUNT_PROPERTY, description: 'k: the votes per case.' }) repeats!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Cases judged with repeats.' }) cases!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Of them, cases whose k votes agree.' }) stable!: number;
  @ApiProperty({ type: 'number', nullable: true, description: 'stable / cases; null when no case was judged with repeats.' }) rate!: number | null;
  @ApiProperty() lower!: number;
  @ApiProperty() upper!: number;
  @ApiProperty({ ...STRINGS, description: 'The unstable cases, in case order (at most 1000).' }) unstable_case_ids!: string[];
  @ApiProperty({ description: 'The least stability the gate accepts (GATE_JUDGE_MIN_STABILITY).' }) min!: number;
}

/** J4: a certified scope that covers the gated cases, with the sensitivity and specificity the correction uses. */
export class CertifiedScopeDto {
  @ApiProperty({ description: '`suite:<key>` or `rubric:<sha256>`.' }) scope!: string;
  @ApiProperty({ type: 'string', nullable: true, description: 'The calibration report that certified it.' }) report_id!: string | null;
  @ApiProperty({ type: () => CalibrationRateDto, description: 'Of the items humans passed, the share the judge passed.' }) sensitivity!: CalibrationRateDto;
  @ApiProperty({ type: () => CalibrationRateDto, description: 'Of the items humans failed, the share the judge failed.' }) specificity!: CalibrationRateDto;
}

/** J4: the certification scopes the gated cases need, those the judge pin lacks, and the certified ones. */
export class JudgeScopesDto {
  @ApiProperty({ ...STRINGS, description: "The suite's own `suite:<key>`, or `rubric:<sha256>` per rubric of the gated cases." }) needed!: string[];
  @ApiProperty({ ...STRINGS, description: 'Needed scopes not certified for the pin: the gate fails judge_uncalibrated.' }) uncovered!: string[];
  @ApiProperty({ type: () => CertifiedScopeDto, isArray: true }) certified!: CertifiedScopeDto[];
}

/** The judge of the gated cases: whether it was used, its calibration (J4), what it did and cost. */
export class GateJudgeDto {
  @ApiProperty({ description: 'Whether the gated cases (the sample\'s, GT3) include llm_judge ones.' }) used!: boolean;
  @ApiProperty({ type: 'string', nullable: true, enum: ['certified', 'not_certified', 'not_certifiable', 'uncalibrated', null], description: 'J4: the pin\'s calibration for the scopes needed; null when the judge is not used.' })
  status!: string | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'The configured judge model pin, whether or not it was used.' }) model!: string | null;
  @ApiProperty({ type: 'string', nullable: true }) prompt_version!: string | null;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'GT2: judge cases not scored, counted as failed.' }) cases_not_scored!: number;
  @ApiProperty({
    type: 'string',
    nullable: true,
    enum: ['budget_blocked', 'judge_not_configured', 'judge_credential_missing', 'judge_uncalibrated', null],
    description: 'The label the judge cases got instead of a call (GT2, GT4, J4); null: the judge could be called.',
  })
  skipped!: string | null;
  @ApiProperty({ type: () => JudgeUsageDto, nullable: true, description: 'Null when the judge is not used, or the run has no judge case with an output.' }) usage!: JudgeUsageDto | null;
  @ApiProperty({ type: () => JudgeStabilityDto, nullable: true, description: 'Issue 13: null when the judge is not used or no case was judged with repeats.' }) stability!: JudgeStabilityDto | null;
  @ApiProperty({ type: () => JudgeScopesDto, nullable: true, description: 'J4: null when the judge is not used, none is configured, or the calibration store could not be read.' }) scopes!: JudgeScopesDto | null;
  @ApiProperty({ type: () => CorrectedPassRateDto, isArray: true, description: 'GT6: per certified scope; empty when nothing certified was judged.' }) corrected_pass_rates!: CorrectedPassRateDto[];
}

// --- The budget (GT4, issue 13) --------------------------------------------------------------------------

/** A budget covering the judge spend, as the gate weighed it (the fields of GET /v1/budgets; spent_usd counts the holds). */
export class GateBudgetStandingDto extends BudgetDto {
  @ApiProperty({ type: 'number', minimum: 0, description: 'US dollars: the judge spend ledger alone, in the window.' }) ledger_spent_usd!: number;
}
ApiProperty({ type: 'number', minimum: 0, description: 'US dollars: ledger_spent_usd plus reserved_usd, what the estimate was weighed against.' })(GateBudgetStandingDto.prototype, 'spent_usd');
ApiProperty({ type: 'number', minimum: 0, description: 'limit_usd - spent_usd, never below 0.' })(GateBudgetStandingDto.prototype, 'left_usd');

/**
 * GT4: the budget decision before any judge spend. Only `decision` when the judge is not used or the store
 * could not be read; otherwise also the estimate weighed and every budget covering it.
 */
export class GateBudgetDto {
  @ApiProperty({ enum: ['allowed', 'blocked', 'throttled', 'store_unreadable', 'not_needed'] }) decision!: string;
  @ApiPropertyOptional({ type: 'number', minimum: 0, description: 'US dollars: the estimated judge spend of the run.' }) estimate_usd?: number;
  @ApiPropertyOptional({ type: 'number', nullable: true, description: 'The least left over the applicable budgets; null when none applies.' }) left_usd?: number | null;
  @ApiPropertyOptional({ type: 'string', nullable: true, description: 'The budget that decided a block or a throttle.' }) scope?: string | null;
  @ApiPropertyOptional({ ...STRINGS, nullable: true, description: 'Throttled: the cases that fit, in order; null otherwise.' }) judged_case_ids?: string[] | null;
  @ApiPropertyOptional({ ...STRINGS, description: '`allow` budgets the estimate does not fit in (warning budget_over_limit).' }) over_limit_scopes?: string[];
  @ApiPropertyOptional({ type: () => GateBudgetStandingDto, isArray: true }) budgets?: GateBudgetStandingDto[];
}

// --- A family of suites (GT7) and the override audit (GT5) -----------------------------------------------

export class GateFamilyDto {
  @ApiProperty({ enum: ['holm'], description: "Holm's step-down adjustment of the suites' regression p-values." }) method!: string;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Suites with a regression test (a drop above their threshold).' }) tests!: number;
  @ApiProperty({ description: 'The family-wise error rate, 0.05.' }) alpha!: number;
}

export class GateRegressionPDto {
  @ApiProperty({ description: "The p-value of the suite's own regression test (the interval that decided it)." }) raw!: number;
  @ApiProperty({ description: 'Holm-adjusted over the family; regressed stands only below 0.05.' }) adjusted!: number;
}

export class GateSubjectDto {
  @ApiProperty() kind!: string;
  @ApiProperty() id!: string;
  @ApiProperty({ type: 'string', nullable: true }) variant!: string | null;
}

/** GT5: one audited override, append-only. */
export class GateOverrideDto {
  @ApiProperty({ description: 'The API key that overrode.' }) actor_key_id!: string;
  @ApiProperty() actor_name!: string;
  @ApiProperty({ description: 'Why the failed gate was accepted.' }) reason!: string;
  @ApiProperty({ enum: VERDICTS, description: 'The effective verdict before.' }) before!: string;
  @ApiProperty({ enum: VERDICTS, description: 'The effective verdict after.' }) after!: string;
  @ApiProperty(TIMESTAMP_PROPERTY) at!: string;
}
