import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { COUNT_PROPERTY, IntervalDto } from './api-schemas';

/*
 * The regression app's comparison of a run with its baseline (`compareRuns` of libs/domain, completed by the
 * regression service with the baseline's choice, the compared cases and what changed) and the judge-corrected
 * pass rates (J4, J9, GT6): answered by the read model (RunViewDto, ScorecardDto) and by the gate
 * (GateVerdictDto), with the calibration rates the gate and the regression app's judge answers share; so the
 * classes live with the edge the apps share. Every count is an integer; every rate carries its denominator
 * (GT6).
 */


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
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Cases passed in the baseline only.' }) baseline_only!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Cases passed in the run only.' }) run_only!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Cases scored in both runs.' }) n!: number;
}

/** G3: one side of the comparison, always with its denominator. */
export class ComparisonCountsDto {
  @ApiProperty(COUNT_PROPERTY) passed!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'The cases this side counted (G7: only scored ones).' }) n!: number;
  @ApiProperty({ type: 'number', nullable: true, description: 'passed / n; null when n is 0.' }) pass_rate!: number | null;
}

/** G8: the cases each run would need for a drop of this size to be resolved (95%, two-sided, 80% power). */
export class CasesNeededDto {
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Cases per run needed.' }) per_run!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Cases this comparison had.' }) have!: number;
  @ApiProperty({ enum: ['mcnemar_connor', 'pooled_normal'], description: "McNemar's (Connor 1987) for paired cases; Fleiss' pooled normal otherwise." }) method!: string;
  @ApiProperty() alpha!: number;
  @ApiProperty() power!: number;
}

/** G7: how many cases one side counted, of how many it has. */
export class ComparedCasesCountDto {
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Counted.' }) n!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Cases of the run.' }) of!: number;
}

/** G7: the cases the comparison left out, and why. */
export class ComparedCasesLeftOutDto {
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Cases of the run left unscored (a skipped judge, a missing output).' }) unscored_in_run!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Cases of the baseline left unscored.' }) unscored_in_baseline!: number;
  @ApiPropertyOptional({ ...COUNT_PROPERTY, description: 'One suite version only: cases scored in one run but not the other.' }) scored_in_one_run_only?: number;
}

/** G7: the 2 x 2 of the cases both runs scored (one suite version). */
export class PairedCellsDto {
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Passed in both.' }) a!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Passed in the baseline only.' }) b!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Passed in the run only.' }) c!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Passed in neither.' }) d!: number;
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
 * The run's comparison with its baseline as the regression app recorded it (`run.compared`, G1-G8,
 * docs/EVAL-METHODOLOGY.md): the statistics, the baseline's choice and eligibility, the compared cases and
 * what changed when a comparison was made; only `error` when the baseline was refused; `error` with the
 * baseline, its choice and the compared cases when no case was scored on both sides.
 */
export class RunComparisonDto {
  @ApiPropertyOptional({ enum: ['regressed', 'inconclusive_noise', 'no_regression'], description: 'G2: regressed only when the score dropped by more than the threshold and the interval that decided excludes zero.' })
  verdict?: string;
  @ApiPropertyOptional({ type: 'string', description: 'The baseline run compared with.' }) baseline_run_id?: string | null;
  @ApiPropertyOptional({ enum: ['explicit', 'pinned', 'automatic'], description: 'G5: how the baseline was chosen.' }) chosen_by?: string | null;
  @ApiPropertyOptional({ description: 'The compared run.' }) run_id?: string;
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

// --- The judge's calibration and its corrected pass rate (J4, J9, GT6) ----------------------------------

/** A rate of a calibration report (J4) with its Wilson 95% interval. */
export class CalibrationRateDto {
  @ApiProperty({ type: 'number', nullable: true, description: 'numerator / denominator; null when the denominator is 0.' }) value!: number | null;
  @ApiProperty(COUNT_PROPERTY) numerator!: number;
  @ApiProperty(COUNT_PROPERTY) denominator!: number;
  @ApiProperty() lower!: number;
  @ApiProperty() upper!: number;
  @ApiPropertyOptional({ enum: ['empty'], description: 'Only when value is null.' }) reason?: string;
}

export class ApparentPassRateDto {
  @ApiProperty(COUNT_PROPERTY) passed!: number;
  @ApiProperty(COUNT_PROPERTY) n!: number;
  @ApiProperty({ type: 'number', nullable: true }) rate!: number | null;
}

export class CalibrationCountsDto {
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Of n.' }) x!: number;
  @ApiProperty(COUNT_PROPERTY) n!: number;
}

/**
 * J4/J9 (GT6): a judge-corrected pass rate (Rogan-Gladen, Lang-Reiczigel 95% interval): what humans would
 * pass of the judged cases, from the judge's apparent passes and its calibration's sensitivity and specificity.
 */
export class JudgeCorrectedPassRateDto extends IntervalDto {
  @ApiProperty({ type: () => ApparentPassRateDto, description: 'Judge cases passed of judge cases judged, as the judge saw them.' }) apparent!: ApparentPassRateDto;
  @ApiProperty({ type: () => CalibrationCountsDto }) sensitivity!: CalibrationCountsDto;
  @ApiProperty({ type: () => CalibrationCountsDto }) specificity!: CalibrationCountsDto;
  @ApiProperty({ type: 'number', nullable: true, description: 'What humans would pass; null (see reason) with the interval [0, 1].' }) rate!: number | null;
  @ApiProperty({ enum: ['rogan_gladen_lang_reiczigel_2014'] }) method!: string;
  @ApiPropertyOptional({ enum: ['empty', 'youden_not_positive'] }) reason?: string;
}

/** J4/J9 (GT6): the judge-corrected pass rate of the judged cases of one certified scope. */
export class CorrectedPassRateDto extends JudgeCorrectedPassRateDto {
  @ApiProperty({ description: 'The certified scope whose sensitivity and specificity corrected these cases.' }) scope!: string;
}

/** J4/J9: a run's judge-corrected pass rate under one certified scope of the judge pin that judged its cases (read at query time). */
export class RunCorrectedPassRateDto extends CorrectedPassRateDto {
  @ApiProperty({ description: 'The judge model pin that judged the cases.' }) judge_model!: string;
  @ApiProperty({ description: 'The judge prompt version that judged the cases.' }) prompt_version!: string;
}
