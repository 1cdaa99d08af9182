import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IntervalDto, TIMESTAMP_PROPERTY } from '@evals/platform';
import { BudgetDto } from './budgets.controller';

/*
 * The nested parts of a gate's verdict (GateVerdictDto in ingestion.dto.ts, docs/gate.md), exactly as
 * GateService and GateVerdicts build them: the comparison with the baseline (the regression app's
 * `compareRuns` report, libs/domain), the judge's use and certification, the budget decision, a family's
 * correction and the override audit. Every count is an integer; every rate carries its denominator (GT6).
 */

const VERDICTS = ['pass', 'fail'];
const COUNT = { type: 'integer', minimum: 0 } as const;
const STRINGS = { type: 'string', isArray: true } as const;

// --- The comparison with the baseline (G1-G8) ------------------------------------------------------------

/** A pass-rate difference, the run's minus the baseline's, with its 95% interval. */
export class RateDiffDto extends IntervalDto {
  @ApiProperty({ type: 'number', nullable: true, description: 'Run pass rate minus baseline pass rate: negative is a drop.' }) diff!: number | null;
}

/** G1: the difference of the two pass rates, with Newcombe's hybrid score interval (method 10). */
export class PassRateDiffDto extends RateDiffDto {
  @ApiProperty({ enum: ['newcombe_hybrid_score'] }) method!: string;
}

/** G7: the same difference from the discordant pairs of the cases both runs scored, with Newcombe's paired interval. */
export class PairedDiffDto extends RateDiffDto {
  @ApiProperty({ enum: ['newcombe_paired_10'], description: 'Newcombe 1998 (Stat Med 17:2635), method 10.' }) method!: string;
  @ApiProperty({ ...COUNT, description: 'Cases passed in the baseline only.' }) baseline_only!: number;
  @ApiProperty({ ...COUNT, description: 'Cases passed in the run only.' }) run_only!: number;
  @ApiProperty({ ...COUNT, description: 'Cases scored in both runs.' }) n!: number;
}

/** G3: one side of the comparison, always with its denominator. */
export class ComparisonCountsDto {
  @ApiProperty(COUNT) passed!: number;
  @ApiProperty({ ...COUNT, description: 'The cases this side counted (G7: only scored ones).' }) n!: number;
  @ApiProperty({ type: 'number', nullable: true, description: 'passed / n; null when n is 0.' }) pass_rate!: number | null;
}

/** G8: the cases each run would need for a drop of this size to be resolved (95%, two-sided, 80% power). */
export class CasesNeededDto {
  @ApiProperty({ ...COUNT, description: 'Cases per run needed.' }) per_run!: number;
  @ApiProperty({ ...COUNT, description: 'Cases this comparison had.' }) have!: number;
  @ApiProperty({ enum: ['mcnemar_connor', 'pooled_normal'], description: "McNemar's (Connor 1987) for paired cases; Fleiss' pooled normal otherwise." }) method!: string;
  @ApiProperty() alpha!: number;
  @ApiProperty() power!: number;
}

/** G7: how many cases one side counted, of how many it has. */
export class ComparedCasesCountDto {
  @ApiProperty({ ...COUNT, description: 'Counted.' }) n!: number;
  @ApiProperty({ ...COUNT, description: 'Cases of the run.' }) of!: number;
}

/** G7: the cases the comparison left out, and why. */
export class ComparedCasesLeftOutDto {
  @ApiProperty({ ...COUNT, description: 'Cases of the run left unscored (a skipped judge, a missing output).' }) unscored_in_run!: number;
  @ApiProperty({ ...COUNT, description: 'Cases of the baseline left unscored.' }) unscored_in_baseline!: number;
  @ApiPropertyOptional({ ...COUNT, description: 'One suite version only: cases scored in one run but not the other.' }) scored_in_one_run_only?: number;
}

/** G7: the 2 x 2 of the cases both runs scored (one suite version). */
export class PairedCellsDto {
  @ApiProperty({ ...COUNT, description: 'Passed in both.' }) a!: number;
  @ApiProperty({ ...COUNT, description: 'Passed in the baseline only.' }) b!: number;
  @ApiProperty({ ...COUNT, description: 'Passed in the run only.' }) c!: number;
  @ApiProperty({ ...COUNT, description: 'Passed in neither.' }) d!: number;
}

export class ComparedCasesDto {
  @ApiProperty({ type: () => ComparedCasesCountDto }) run!: ComparedCasesCountDto;
  @ApiProperty({ type: () => ComparedCasesCountDto }) baseline!: ComparedCasesCountDto;
  @ApiProperty({ type: () => ComparedCasesLeftOutDto }) left_out!: ComparedCasesLeftOutDto;
  @ApiPropertyOptional({ type: () => PairedCellsDto, description: 'Only when both runs are of one suite version, so their cases pair up.' }) paired?: PairedCellsDto;
}

/** G4: a value that differs between the baseline and the run. */
export class PinChangeDto {
  @ApiProperty({ type: 'string', nullable: true }) baseline!: string | null;
  @ApiProperty({ type: 'string', nullable: true }) run!: string | null;
}

/** A scorer whose version differs; a null version: that run does not use the scorer. */
export class ScorerVersionChangeDto extends PinChangeDto {
  @ApiProperty() scorer!: string;
}

export class SuiteVersionChangeDto {
  @ApiProperty({ type: 'integer' }) baseline!: number;
  @ApiProperty({ type: 'integer' }) run!: number;
}

/** G4: what differs between the two runs, so a drop can be attributed; a null entry did not change. */
export class RunChangesDto {
  @ApiProperty({ type: () => SuiteVersionChangeDto, nullable: true }) suite_version!: SuiteVersionChangeDto | null;
  @ApiProperty({ type: () => ScorerVersionChangeDto, isArray: true, description: 'Only the scorers whose version differs.' }) scorer_versions!: ScorerVersionChangeDto[];
  @ApiProperty({ type: () => PinChangeDto, nullable: true, description: 'The judge model pin that graded the llm_judge cases.' }) judge_model!: PinChangeDto | null;
  @ApiProperty({ type: () => PinChangeDto, nullable: true }) prompt_version!: PinChangeDto | null;
  @ApiProperty() anything_changed!: boolean;
}

export class ComparisonErrorDto {
  @ApiProperty({
    enum: ['BASELINE_NOT_FOUND', 'BASELINE_OTHER_SUITE', 'BASELINE_IS_RUN', 'NO_COMPARED_CASES'],
    description: 'The explicit baseline is no completed run, of another suite or the run itself (G5); or no case was scored in both runs (G7).',
  })
  code!: string;
  @ApiProperty() message!: string;
}

/**
 * The run's regression decision against its baseline (G1-G8, docs/EVAL-METHODOLOGY.md): the verdict and the
 * baseline always; the statistics when a comparison was made; `error` when none could be.
 */
export class GateComparisonDto {
  @ApiProperty({ enum: ['regressed', 'inconclusive_noise', 'no_regression', 'no_baseline'], description: 'G2: regressed only when the score dropped by more than the threshold and the interval that decided excludes zero.' })
  verdict!: string;
  @ApiProperty({ type: 'string', nullable: true, description: 'The baseline run; null when there is none.' }) baseline_run_id!: string | null;
  @ApiProperty({ type: 'string', nullable: true, enum: ['explicit', 'pinned', 'automatic', null], description: 'G5: how the baseline was chosen.' }) chosen_by!: string | null;
  @ApiPropertyOptional({ description: 'The gated run.' }) run_id?: string;
  @ApiPropertyOptional({ description: 'G1: baseline score minus run score; positive is worse.' }) score_drop?: number;
  @ApiPropertyOptional({ description: "The suite's regression threshold the drop is weighed against." }) regression_threshold?: number;
  @ApiPropertyOptional({ type: () => PassRateDiffDto }) pass_rate_diff?: PassRateDiffDto;
  @ApiPropertyOptional({ type: () => ComparisonCountsDto, description: 'G3: the run side.' }) run?: ComparisonCountsDto;
  @ApiPropertyOptional({ type: () => ComparisonCountsDto, description: 'G3: the baseline side.' }) baseline?: ComparisonCountsDto;
  @ApiPropertyOptional({ enum: ['paired', 'independent'], description: 'G7: paired when both runs scored the same cases (one suite version).' }) decided_by?: string;
  @ApiPropertyOptional({ type: () => PairedDiffDto, description: 'G7: present whenever the comparison is paired; then it decides.' }) paired_diff?: PairedDiffDto;
  @ApiPropertyOptional({ type: () => CasesNeededDto, nullable: true, description: 'G8: an inconclusive_noise drop only; null when the observed rates give no drop to power.' }) cases_needed?: CasesNeededDto | null;
  @ApiPropertyOptional({ description: 'G4: whether the baseline may be an automatic baseline.' }) baseline_eligible?: boolean;
  @ApiPropertyOptional({ enum: ['not_scored', 'expired', 'incomplete', 'regressed', 'inconclusive_noise', 'no_verdict'], description: 'G4: why the baseline is not eligible.' }) baseline_ineligible_reason?: string;
  @ApiPropertyOptional({ type: () => ComparedCasesDto, description: 'G7: the cases each side counted and those left out.' }) compared_cases?: ComparedCasesDto;
  @ApiPropertyOptional({ type: () => RunChangesDto }) changes?: RunChangesDto;
  @ApiPropertyOptional({ type: () => ComparisonErrorDto, description: 'Why no comparison was made (the verdict is then no_baseline).' }) error?: ComparisonErrorDto;
}

// --- The judge (GT1, GT2, GT6, J4, J6, issue 13) ---------------------------------------------------------

/** What the judge did for the run (J1, J6, GT2, GT4): counts, tokens and money. */
export class JudgeUsageDto {
  @ApiProperty({ ...COUNT, description: 'llm_judge cases with an output.' }) cases!: number;
  @ApiProperty({ ...COUNT, description: 'Judge calls made (neither cached nor refused before a call).' }) calls!: number;
  @ApiProperty({ ...COUNT, description: 'Cases whose judge call ended in an error label.' }) errors!: number;
  @ApiProperty({ ...COUNT, description: 'Cases failed judge_credential_missing (GT2).' }) credential_missing!: number;
  @ApiProperty({ ...COUNT, description: 'Cases failed judge_not_configured.' }) not_configured!: number;
  @ApiProperty({ ...COUNT, description: 'Cases failed without a call because the gate said so (budget, calibration: GT4, J4).' }) skipped!: number;
  @ApiProperty({ ...COUNT, description: 'J6: recorded verdicts reused.' }) cache_hits!: number;
  @ApiProperty({ ...COUNT, description: 'J6: lookups that missed and called the judge.' }) cache_misses!: number;
  @ApiProperty(COUNT) input_tokens!: number;
  @ApiProperty(COUNT) output_tokens!: number;
  @ApiProperty({ type: 'number', minimum: 0, description: 'US dollars.' }) cost_usd!: number;
  @ApiProperty({ type: 'string', nullable: true, description: 'The model pin that graded the cases; null when none was called.' }) model!: string | null;
  @ApiProperty({ type: 'string', nullable: true }) prompt_version!: string | null;
}

/** Issue 13: how often the judge agreed with itself on the cases judged with `repeats`, with its Wilson 95% interval. */
export class JudgeStabilityDto {
  @ApiProperty({ ...COUNT, description: 'k: the votes per case.' }) repeats!: number;
  @ApiProperty({ ...COUNT, description: 'Cases judged with repeats.' }) cases!: number;
  @ApiProperty({ ...COUNT, description: 'Of them, cases whose k votes agree.' }) stable!: number;
  @ApiProperty({ type: 'number', nullable: true, description: 'stable / cases; null when no case was judged with repeats.' }) rate!: number | null;
  @ApiProperty() lower!: number;
  @ApiProperty() upper!: number;
  @ApiProperty({ ...STRINGS, description: 'The unstable cases, in case order (at most 1000).' }) unstable_case_ids!: string[];
  @ApiProperty({ description: 'The least stability the gate accepts (GATE_JUDGE_MIN_STABILITY).' }) min!: number;
}

/** A rate of a calibration report (J4) with its Wilson 95% interval. */
export class CalibrationRateDto {
  @ApiProperty({ type: 'number', nullable: true, description: 'numerator / denominator; null when the denominator is 0.' }) value!: number | null;
  @ApiProperty(COUNT) numerator!: number;
  @ApiProperty(COUNT) denominator!: number;
  @ApiProperty() lower!: number;
  @ApiProperty() upper!: number;
  @ApiPropertyOptional({ enum: ['empty'], description: 'Only when value is null.' }) reason?: string;
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

export class ApparentPassRateDto {
  @ApiProperty(COUNT) passed!: number;
  @ApiProperty(COUNT) n!: number;
  @ApiProperty({ type: 'number', nullable: true }) rate!: number | null;
}

export class CalibrationCountsDto {
  @ApiProperty({ ...COUNT, description: 'Of n.' }) x!: number;
  @ApiProperty(COUNT) n!: number;
}

/** J4/J9 (GT6): the judge-corrected pass rate of the judged cases of one certified scope (Rogan-Gladen, Lang-Reiczigel 95% interval). */
export class CorrectedPassRateDto extends IntervalDto {
  @ApiProperty({ description: 'The certified scope whose sensitivity and specificity corrected these cases.' }) scope!: string;
  @ApiProperty({ type: () => ApparentPassRateDto, description: 'Judge cases passed of judge cases judged, as the judge saw them.' }) apparent!: ApparentPassRateDto;
  @ApiProperty({ type: () => CalibrationCountsDto }) sensitivity!: CalibrationCountsDto;
  @ApiProperty({ type: () => CalibrationCountsDto }) specificity!: CalibrationCountsDto;
  @ApiProperty({ type: 'number', nullable: true, description: 'What humans would pass; null (see reason) with the interval [0, 1].' }) rate!: number | null;
  @ApiProperty({ enum: ['rogan_gladen_lang_reiczigel_2014'] }) method!: string;
  @ApiPropertyOptional({ enum: ['empty', 'youden_not_positive'] }) reason?: string;
}

/** The judge of the gated cases: whether it was used, its calibration (J4), what it did and cost. */
export class GateJudgeDto {
  @ApiProperty({ description: 'Whether the gated cases (the sample\'s, GT3) include llm_judge ones.' }) used!: boolean;
  @ApiProperty({ type: 'string', nullable: true, enum: ['certified', 'not_certified', 'not_certifiable', 'uncalibrated', null], description: 'J4: the pin\'s calibration for the scopes needed; null when the judge is not used.' })
  status!: string | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'The configured judge model pin, whether or not it was used.' }) model!: string | null;
  @ApiProperty({ type: 'string', nullable: true }) prompt_version!: string | null;
  @ApiProperty({ ...COUNT, description: 'GT2: judge cases not scored, counted as failed.' }) cases_not_scored!: number;
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
  @ApiProperty({ ...COUNT, description: 'Suites with a regression test (a drop above their threshold).' }) tests!: number;
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
