import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { IsOptional, Matches } from 'class-validator';
import { ID_PATTERN, SUITE_KEY_PATTERN, TOKEN_PATTERN } from '@evals/contracts';
import { busPayloadSchema, CalibrationRateDto, COUNT_PROPERTY, ID_PROPERTY, JudgeCorrectedPassRateDto, SUITE_KEY_PROPERTY, TIMESTAMP_PROPERTY, TOKEN_PROPERTY, ValidateAtEdge } from '@evals/platform';

/*
 * The regression app's HTTP shapes (docs/regression.md, docs/judge.md). The services validate the bodies
 * (every refusal with its code and field); these classes describe what they accept and answer.
 */

const HASH_PROPERTY = { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'Lowercase SHA-256 hex of the UTF-8 text.' } as const;
const UUID_PROPERTY = { type: 'string', format: 'uuid' } as const;
const VERDICT = { enum: ['pass', 'fail'] } as const;
const PAIRWISE_CHOICES = ['first', 'second', 'tie'];
const REPORT_STATUSES = ['certified', 'not_certified', 'not_certifiable', 'insufficient_set'];
const CALIBRATION_REASONS = ['empty_set', 'human_labels_one_class', 'too_few_items', 'too_few_human_passes', 'too_few_human_fails', 'agreement_below_target', 'kappa_undefined', 'kappa_below_target'];

/** Its shape is checked by these rules, at the edge (the global pipe); whether the run may be pinned, by the controller. */
@ValidateAtEdge()
export class BaselinePinBody {
  @ApiProperty(SUITE_KEY_PROPERTY) @Matches(SUITE_KEY_PATTERN) suite_key!: string;
  @ApiProperty(TOKEN_PROPERTY) @Matches(TOKEN_PATTERN) subject_kind!: string;
  @ApiProperty(ID_PROPERTY) @Matches(ID_PATTERN) subject_id!: string;
  @ApiPropertyOptional({ ...ID_PROPERTY, nullable: true }) @IsOptional() @Matches(ID_PATTERN) variant?: string | null;
  @ApiProperty({ ...ID_PROPERTY, description: 'A completed run of that suite and subject.' }) @Matches(ID_PATTERN) run_id!: string;
}

export class BaselinePinDto {
  @ApiProperty() suite_key!: string;
  @ApiProperty() subject_kind!: string;
  @ApiProperty() subject_id!: string;
  @ApiProperty({ type: 'string', nullable: true }) variant!: string | null;
  @ApiProperty() run_id!: string;
  @ApiPropertyOptional(TIMESTAMP_PROPERTY) pinned_at?: string;
}

export class BaselinePinnedDto {
  @ApiProperty({ type: () => BaselinePinDto }) pin!: BaselinePinDto;
}

export class BaselinePinsDto {
  @ApiProperty({ type: () => BaselinePinDto, isArray: true }) pins!: BaselinePinDto[];
}

/** A finding as stored: the data of the bus contract `finding.reported` v1 (spec section 10), its AsyncAPI schema. */
export const FINDING_SCHEMA = busPayloadSchema('FindingReportedV1', 'The data of `finding.reported` v1 (docs/contracts.md; /asyncapi.json).');

export class FindingsDto {
  @ApiProperty({ type: 'array', items: FINDING_SCHEMA }) findings!: Array<Record<string, unknown>>;
}

export class CalibrationItemBody {
  @ApiProperty(ID_PROPERTY) item_id!: string;
  @ApiPropertyOptional({ ...ID_PROPERTY, nullable: true, description: 'The suite case the item is an output of.' }) case_id?: string | null;
  @ApiProperty(HASH_PROPERTY) output_hash!: string;
  @ApiProperty({ enum: ['pass', 'fail'] }) human_verdict!: 'pass' | 'fail';
  @ApiProperty({ type: 'integer', minimum: 0 }) output_chars!: number;
  @ApiPropertyOptional({ type: 'string', description: 'Only in a golden set (D4): the labelled output itself.' }) golden_output?: string;
  @ApiPropertyOptional({ type: 'string', description: 'Only in a golden set (D4): its input.' }) golden_input?: string;
}

export class CalibrationSetBody {
  @ApiProperty({ type: 'string', minLength: 1, maxLength: 200 }) name!: string;
  @ApiPropertyOptional({ type: 'boolean', description: 'A golden set keeps the labelled text (D4).' }) golden?: boolean;
  @ApiPropertyOptional({ type: 'string', maxLength: 20_000, description: 'The rubric the items were labelled against; or give suite_key.' }) rubric?: string;
  @ApiPropertyOptional(SUITE_KEY_PROPERTY) suite_key?: string;
  @ApiPropertyOptional({ type: 'integer', minimum: 1 }) suite_version?: number;
  @ApiProperty({ type: () => CalibrationItemBody, isArray: true, minItems: 1 }) items!: CalibrationItemBody[];
}

export class CalibrationSetRecordDto {
  @ApiProperty(UUID_PROPERTY) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty() golden!: boolean;
  @ApiProperty({ type: 'string', nullable: true }) rubric!: string | null;
  @ApiProperty({ type: 'string', nullable: true }) suite_key!: string | null;
  @ApiProperty({ type: 'integer', nullable: true }) suite_version!: number | null;
  @ApiProperty({ type: 'integer' }) item_count!: number;
  @ApiPropertyOptional(TIMESTAMP_PROPERTY) created_at?: string;
}

/** What a stored set holds, counted. */
export class CalibrationSetCountsDto {
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Items stored.' }) count!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Items whose labelled output is kept (a golden set, D4).' }) golden_outputs!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Of them, outputs clamped to the stored length.' }) golden_truncated!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Items humans passed.' }) human_pass!: number;
}

export class CalibrationSetCreatedDto {
  @ApiProperty({ type: () => CalibrationSetRecordDto, description: 'The stored set.' }) set!: CalibrationSetRecordDto;
  @ApiProperty({ type: () => CalibrationSetCountsDto }) items!: CalibrationSetCountsDto;
}

/** A labelled item as read back: its hash, length and label; never the golden text. */
export class CalibrationSetItemDto {
  @ApiProperty() item_id!: string;
  @ApiProperty({ type: 'string', nullable: true, description: 'The suite case the item is an output of.' }) case_id!: string | null;
  @ApiProperty(HASH_PROPERTY) output_hash!: string;
  @ApiProperty(VERDICT) human_verdict!: 'pass' | 'fail';
  @ApiProperty(COUNT_PROPERTY) output_chars!: number;
  @ApiProperty({ enum: ['absent', 'complete', 'truncated'], description: 'Whether the labelled output is kept (a golden set, D4), whole or clamped.' }) golden_output!: string;
}

/** A report measured on the set, newest first. */
export class CalibrationSetReportDto {
  @ApiProperty(UUID_PROPERTY) report_id!: string;
  @ApiProperty() judge_model!: string;
  @ApiProperty() prompt_version!: string;
  @ApiProperty({ enum: REPORT_STATUSES }) status!: string;
  @ApiProperty(TIMESTAMP_PROPERTY) created_at!: string;
}

export class CalibrationSetDto {
  @ApiProperty({ type: () => CalibrationSetRecordDto }) set!: CalibrationSetRecordDto;
  @ApiProperty({ type: () => CalibrationSetItemDto, isArray: true, description: 'Hashes, lengths and labels; never the golden text.' }) items!: CalibrationSetItemDto[];
  @ApiProperty({ type: () => CalibrationSetReportDto, isArray: true }) reports!: CalibrationSetReportDto[];
}

export class CalibrationOutputBody {
  @ApiProperty(ID_PROPERTY) item_id!: string;
  @ApiProperty({ type: 'string' }) output!: string;
  @ApiPropertyOptional({ type: 'string', nullable: true }) input?: string | null;
}

/** Targets may be raised, never lowered below the minimums (J4, J7; GET /v1/judges/status lists them). */
export class CalibrationTargetsBody {
  @ApiPropertyOptional({ type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 1 }) agreement?: number;
  @ApiPropertyOptional({ type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 1 }) kappa?: number;
  @ApiPropertyOptional({ type: 'integer', minimum: 1, description: 'J7: the fewest items a set needs to certify.' }) min_items?: number;
  @ApiPropertyOptional({ type: 'integer', minimum: 1, description: 'J7: the fewest items of each human class.' }) min_per_class?: number;
  @ApiPropertyOptional({ enum: ['estimate', 'lower_bound'], description: "Compare agreement by its point estimate or its interval's lower bound." }) agreement_basis?: 'estimate' | 'lower_bound';
}

export class CalibrationRunBody {
  @ApiProperty(UUID_PROPERTY) set_id!: string;
  @ApiPropertyOptional({ type: () => CalibrationOutputBody, isArray: true, description: 'The outputs of a set that is not golden (D4).' }) outputs?: CalibrationOutputBody[];
  @ApiPropertyOptional({ type: () => CalibrationTargetsBody, nullable: true, description: 'May raise the targets, never lower them (J4).' }) targets?: CalibrationTargetsBody | null;
}

/** J4/J7: the targets a calibration is measured against (the minimums, or a run's raised ones). */
export class CalibrationTargetsDto {
  @ApiProperty({ description: 'The least agreement that certifies.' }) agreement!: number;
  @ApiProperty({ description: "The least Cohen's kappa that certifies." }) kappa!: number;
  // The three below are optional: a report recorded before the set-size rule (J7) is answered as stored.
  @ApiPropertyOptional({ ...COUNT_PROPERTY, description: 'J7: the fewest items a set needs to certify.' }) min_items?: number;
  @ApiPropertyOptional({ ...COUNT_PROPERTY, description: 'J7: the fewest items of each human class.' }) min_per_class?: number;
  @ApiPropertyOptional({ enum: ['estimate', 'lower_bound'], description: "Agreement compared by its point estimate or its interval's lower bound." }) agreement_basis?: string;
}

/** J4: the set's size against the size targets, from the human labels alone. */
export class CalibrationSetCheckDto {
  @ApiProperty(COUNT_PROPERTY) n!: number;
  @ApiProperty(COUNT_PROPERTY) human_pass!: number;
  @ApiProperty(COUNT_PROPERTY) human_fail!: number;
  @ApiProperty(COUNT_PROPERTY) min_items!: number;
  @ApiProperty(COUNT_PROPERTY) min_per_class!: number;
  @ApiProperty({ description: 'Whether the set may certify (it may still miss the agreement and kappa targets).' }) sufficient!: boolean;
  @ApiProperty({ enum: CALIBRATION_REASONS, isArray: true, description: 'Every shortfall; empty when sufficient.' }) reasons!: string[];
}

/** The confusion counts, the human label the reference and pass the positive class. */
export class ConfusionCountsDto {
  @ApiProperty(COUNT_PROPERTY) tp!: number;
  @ApiProperty(COUNT_PROPERTY) fp!: number;
  @ApiProperty(COUNT_PROPERTY) tn!: number;
  @ApiProperty(COUNT_PROPERTY) fn!: number;
}

export class KappaDto {
  @ApiProperty({ type: 'number', nullable: true, description: "Cohen's kappa; null (see reason) when undefined." }) value!: number | null;
  @ApiProperty({ type: 'number', nullable: true, description: 'Observed agreement p_o.' }) observed!: number | null;
  @ApiProperty({ type: 'number', nullable: true, description: 'Chance agreement p_e.' }) expected!: number | null;
  @ApiPropertyOptional({ enum: ['empty', 'expected_agreement_is_one'] }) reason?: string;
}

/** A point-biserial correlation with output length. */
export class LengthCorrelationDto {
  @ApiProperty({ type: 'number', nullable: true, description: 'In [-1, 1]; null (see reason) when undefined.' }) r!: number | null;
  @ApiProperty(COUNT_PROPERTY) n!: number;
  @ApiPropertyOptional({ enum: ['empty', 'insufficient_data', 'constant_input'] }) reason?: string;
}

/** J4: how much the verdicts follow output length, the judge's beside the humans'. */
export class VerbosityBiasDto {
  @ApiProperty({ type: () => LengthCorrelationDto }) judge!: LengthCorrelationDto;
  @ApiProperty({ type: () => LengthCorrelationDto }) human!: LengthCorrelationDto;
  @ApiProperty({ type: 'number', nullable: true, description: 'judge.r - human.r; null when either is.' }) excess!: number | null;
}

/** What measuring the judge cost: nothing for a refused set. */
export class CalibrationJudgeSpendDto {
  @ApiProperty() model!: string;
  @ApiProperty() prompt_version!: string;
  @ApiProperty(COUNT_PROPERTY) calls!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'J3: verdicts that could not be parsed, counted as judge fails.' }) unparseable!: number;
  @ApiProperty(COUNT_PROPERTY) input_tokens!: number;
  @ApiProperty(COUNT_PROPERTY) output_tokens!: number;
  @ApiProperty({ type: 'number', minimum: 0, description: 'US dollars.' }) cost_usd!: number;
}

/** One item's verdicts (no text). */
export class CalibrationItemVerdictDto {
  @ApiProperty() item_id!: string;
  @ApiProperty(VERDICT) human!: string;
  @ApiProperty(VERDICT) judge!: string;
  @ApiProperty({ description: 'judge_pass, judge_fail, judge_below_min_score or the judge error (judge_unparseable).' }) label!: string;
}

/** Issue 13: with `repeats`, how often the judge agreed with itself on the items, with its Wilson 95% interval. */
export class CalibrationSelfAgreementDto {
  @ApiProperty(COUNT_PROPERTY) repeats!: number;
  @ApiProperty(COUNT_PROPERTY) items!: number;
  @ApiProperty(COUNT_PROPERTY) agreeing!: number;
  @ApiProperty({ type: 'number', nullable: true }) rate!: number | null;
  @ApiProperty() lower!: number;
  @ApiProperty() upper!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: "The extra calls (the first ones are in the report's judge)." }) extra_calls!: number;
  @ApiProperty(COUNT_PROPERTY) input_tokens!: number;
  @ApiProperty(COUNT_PROPERTY) output_tokens!: number;
  @ApiProperty({ type: 'number', minimum: 0, description: 'US dollars.' }) cost_usd!: number;
}

/**
 * J4: a stored calibration report. A measured set has the metrics; a set refused for its size
 * (`insufficient_set`) only its counts, targets and reasons, no judge call and no items.
 */
export class CalibrationReportBodyDto {
  @ApiProperty({ enum: REPORT_STATUSES }) status!: string;
  @ApiProperty(COUNT_PROPERTY) n!: number;
  @ApiPropertyOptional({ type: () => CalibrationSetCheckDto, description: 'Absent from a report recorded before the set-size rule (J7), which is answered as stored.' }) set?: CalibrationSetCheckDto;
  @ApiProperty({ type: () => CalibrationTargetsDto }) targets!: CalibrationTargetsDto;
  @ApiProperty({ enum: CALIBRATION_REASONS, isArray: true, description: 'Why the judge is not certified; empty when certified.' }) reasons!: string[];
  @ApiProperty(UUID_PROPERTY) set_id!: string;
  @ApiProperty({ description: '`rubric:<sha256>` or `suite:<key>`.' }) scope!: string;
  @ApiProperty({ type: () => CalibrationJudgeSpendDto }) judge!: CalibrationJudgeSpendDto;
  @ApiProperty({ type: () => CalibrationItemVerdictDto, isArray: true, description: 'Empty for a refused set.' }) items!: CalibrationItemVerdictDto[];
  @ApiPropertyOptional({ type: () => ConfusionCountsDto, description: 'Measured sets only (so every field below).' }) counts?: ConfusionCountsDto;
  @ApiPropertyOptional({ type: () => CalibrationRateDto }) agreement?: CalibrationRateDto;
  @ApiPropertyOptional({ type: () => KappaDto }) kappa?: KappaDto;
  @ApiPropertyOptional({ type: () => CalibrationRateDto, description: 'Of the items humans passed, the share the judge passed.' }) sensitivity?: CalibrationRateDto;
  @ApiPropertyOptional({ type: () => CalibrationRateDto, description: 'Of the items humans failed, the share the judge failed.' }) specificity?: CalibrationRateDto;
  @ApiPropertyOptional({ type: () => CalibrationRateDto }) human_pass_rate?: CalibrationRateDto;
  @ApiPropertyOptional({ type: () => CalibrationRateDto }) judge_pass_rate?: CalibrationRateDto;
  @ApiPropertyOptional({ type: () => VerbosityBiasDto }) verbosity_bias?: VerbosityBiasDto;
  @ApiPropertyOptional({ type: () => CalibrationSelfAgreementDto, description: 'Issue 13: only with `repeats`.' }) self_agreement?: CalibrationSelfAgreementDto;
}

export class CalibrationReportDto {
  @ApiProperty(UUID_PROPERTY) report_id!: string;
  @ApiProperty(UUID_PROPERTY) set_id!: string;
  @ApiProperty({ description: 'certified, not_certified, not_certifiable or insufficient_set.' }) status!: string;
  @ApiProperty() judge_model!: string;
  @ApiProperty() prompt_version!: string;
  @ApiProperty({ description: 'What the report certifies: `rubric:<sha256>` or `suite:<key>`.' }) scope!: string;
  @ApiPropertyOptional(TIMESTAMP_PROPERTY) created_at?: string;
  @ApiProperty({ type: () => CalibrationReportBodyDto, description: 'Agreement, kappa, intervals, confusion counts, reasons (docs/judge.md).' }) report!: CalibrationReportBodyDto;
}

/** GT1/J4: one scope of a judge pin by its latest measured report, or `uncalibrated` (every measurement null). */
export class JudgeScopeStatusDto {
  @ApiProperty({ enum: ['certified', 'not_certified', 'not_certifiable', 'uncalibrated'] }) status!: string;
  @ApiProperty() judge_model!: string;
  @ApiProperty() prompt_version!: string;
  @ApiProperty({ type: 'string', nullable: true, description: '`rubric:<sha256>` or `suite:<key>`; null for a pin never measured in any scope.' }) scope!: string | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'The latest measured report; null when never measured.' }) report_id!: string | null;
  @ApiProperty({ type: 'string', nullable: true }) set_id!: string | null;
  @ApiProperty({ ...TIMESTAMP_PROPERTY, nullable: true }) calibrated_at!: string | null;
  @ApiProperty({ ...COUNT_PROPERTY, nullable: true }) n!: number | null;
  @ApiProperty({ type: () => CalibrationRateDto, nullable: true }) agreement!: CalibrationRateDto | null;
  @ApiProperty({ type: 'number', nullable: true, description: "Cohen's kappa; null when undefined or never measured." }) kappa!: number | null;
  @ApiProperty({ type: () => CalibrationRateDto, nullable: true }) sensitivity!: CalibrationRateDto | null;
  @ApiProperty({ type: () => CalibrationRateDto, nullable: true }) specificity!: CalibrationRateDto | null;
  @ApiProperty({ type: () => CalibrationTargetsDto, nullable: true }) targets!: CalibrationTargetsDto | null;
  @ApiProperty({ type: 'string', isArray: true, description: "The report's reasons; never_calibrated when there is none." }) reasons!: string[];
}

/** GET /v1/judges: a scope's row, with the name of the set its report measured and that report's verbosity bias. */
export class JudgePinStatusDto extends JudgeScopeStatusDto {
  @ApiProperty({ type: 'string', nullable: true }) set_name!: string | null;
  @ApiProperty({ type: () => VerbosityBiasDto, nullable: true }) verbosity_bias!: VerbosityBiasDto | null;
}

/** `GET /v1/judges/status` without `scope`: the pin's summary over every scope it was measured in (GT1). */
export class JudgePinSummaryDto {
  @ApiProperty() judge_model!: string;
  @ApiProperty() prompt_version!: string;
  @ApiProperty({ enum: ['certified', 'not_certified', 'uncalibrated'], description: 'certified in some scope (the gate still checks the scope its cases use), measured but certified in none, or never measured.' })
  status!: string;
  @ApiProperty({ type: 'string', isArray: true }) certified_scopes!: string[];
  @ApiProperty({ type: () => JudgeScopeStatusDto, isArray: true, description: 'Every measured scope of the pin.' }) scopes!: JudgeScopeStatusDto[];
  @ApiProperty({ type: () => CalibrationTargetsDto, description: 'The minimum targets (J4, J7).' }) minimum_targets!: CalibrationTargetsDto;
}

/** `GET /v1/judges/status?scope=`: that scope's standing, and with `passed` and `n` the corrected pass rate (J4). */
export class JudgeScopeAnswerDto extends JudgeScopeStatusDto {
  @ApiProperty({ type: () => CalibrationTargetsDto, description: 'The minimum targets (J4, J7).' }) minimum_targets!: CalibrationTargetsDto;
  @ApiPropertyOptional({ type: () => JudgeCorrectedPassRateDto, nullable: true, description: 'With passed and n: the Rogan-Gladen corrected pass rate and its interval; null unless the scope is certified.' })
  corrected_pass_rate?: JudgeCorrectedPassRateDto | null;
}

/** The answer of `GET /v1/judges/status`: the summary, or with `scope` that scope's answer. */
export type JudgeStatusAnswer = JudgePinSummaryDto | JudgeScopeAnswerDto;
export const JUDGE_STATUS_SCHEMA = { oneOf: [{ $ref: getSchemaPath(JudgePinSummaryDto) }, { $ref: getSchemaPath(JudgeScopeAnswerDto) }] };
export const JudgeStatusModels = ApiExtraModels(JudgePinSummaryDto, JudgeScopeAnswerDto);

export class ComparisonOutputBody {
  @ApiProperty(ID_PROPERTY) case_id!: string;
  @ApiProperty({ type: 'string' }) output!: string;
}

export class ComparisonBody {
  @ApiProperty(ID_PROPERTY) run_a!: string;
  @ApiProperty(ID_PROPERTY) run_b!: string;
  @ApiProperty({ type: () => ComparisonOutputBody, isArray: true }) outputs_a!: ComparisonOutputBody[];
  @ApiProperty({ type: () => ComparisonOutputBody, isArray: true }) outputs_b!: ComparisonOutputBody[];
  @ApiPropertyOptional({ type: 'string', nullable: true, description: 'For cases that are not llm_judge cases.' }) rubric?: string | null;
}

/** J5: how often the two orders agreed on the decided cases, with its Wilson 95% interval. */
export class PositionConsistencyDto {
  @ApiProperty({ type: 'number', nullable: true, description: 'consistent / n; null when no case was decided.' }) rate!: number | null;
  @ApiProperty(COUNT_PROPERTY) consistent!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Decided cases (errors excluded).' }) n!: number;
  @ApiProperty() lower!: number;
  @ApiProperty() upper!: number;
}

/** One shared case: its decision from both orders, or the judge error that left it undecided. */
export class PairwiseCaseDto {
  @ApiProperty() case_id!: string;
  @ApiPropertyOptional({ enum: ['a', 'b', 'tie'], description: 'Decided cases only (so the next three).' }) winner?: string;
  @ApiPropertyOptional({ description: 'Whether both orders named the same winner.' }) position_consistent?: boolean;
  @ApiPropertyOptional({ enum: PAIRWISE_CHOICES, description: "The judge's choice with A shown first." }) ab?: string;
  @ApiPropertyOptional({ enum: PAIRWISE_CHOICES, description: "The judge's choice with B shown first." }) ba?: string;
  @ApiPropertyOptional({ description: 'Undecided cases only: the judge error.' }) error?: string;
}

export class PairwiseUsageDto {
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Two per shared case.' }) calls!: number;
  @ApiProperty(COUNT_PROPERTY) input_tokens!: number;
  @ApiProperty(COUNT_PROPERTY) output_tokens!: number;
  @ApiProperty({ type: 'number', minimum: 0, description: 'US dollars.' }) cost_usd!: number;
}

/** J5: a stored pairwise comparison - wins, ties, position consistency and its interval (docs/judge.md), per case. */
export class ComparisonDto {
  @ApiProperty(UUID_PROPERTY) comparison_id!: string;
  @ApiProperty() run_a!: string;
  @ApiProperty() run_b!: string;
  @ApiProperty() judge_model!: string;
  @ApiProperty() prompt_version!: string;
  @ApiPropertyOptional(TIMESTAMP_PROPERTY) created_at?: string;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Cases A won (both orders agree on A).' }) wins!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Cases B won (both orders agree on B).' }) losses!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Both orders said tie, or the orders disagreed.' }) ties!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Of the ties, those where the orders disagreed.' }) inconsistent_ties!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Cases with no decision (a call failed); in no denominator.' }) errors!: number;
  @ApiProperty({ ...COUNT_PROPERTY, description: 'Decided cases: wins + losses + ties.' }) n!: number;
  @ApiProperty({ type: () => PositionConsistencyDto }) position_consistency!: PositionConsistencyDto;
  // shared, only_a, only_b and usage are optional: a comparison recorded before they were is answered as stored.
  @ApiPropertyOptional({ ...COUNT_PROPERTY, description: 'Cases in both output lists (judged).' }) shared?: number;
  @ApiPropertyOptional({ ...COUNT_PROPERTY, description: "Cases only in run A's outputs (not judged)." }) only_a?: number;
  @ApiPropertyOptional({ ...COUNT_PROPERTY, description: "Cases only in run B's outputs (not judged)." }) only_b?: number;
  @ApiProperty({ type: () => PairwiseCaseDto, isArray: true, description: 'Per shared case.' }) cases!: PairwiseCaseDto[];
  @ApiPropertyOptional({ type: () => PairwiseUsageDto }) usage?: PairwiseUsageDto;
}
