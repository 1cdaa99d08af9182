import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, Matches } from 'class-validator';
import { ID_PATTERN, SUITE_KEY_PATTERN, TOKEN_PATTERN } from '@evals/contracts';
import { ID_PROPERTY, OBJECT_PROPERTY, SUITE_KEY_PROPERTY, TIMESTAMP_PROPERTY, TOKEN_PROPERTY, ValidateAtEdge } from '@evals/platform';

/*
 * The regression app's HTTP shapes (docs/regression.md, docs/judge.md). The services validate the bodies
 * (every refusal with its code and field); these classes describe what they accept and answer.
 */

const HASH_PROPERTY = { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'Lowercase SHA-256 hex of the UTF-8 text.' } as const;
const UUID_PROPERTY = { type: 'string', format: 'uuid' } as const;

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

/** A finding as stored: the payload of the bus contract `finding.reported` v1 (spec section 10), described by the AsyncAPI document. */
export const FINDING_SCHEMA = { type: 'object', additionalProperties: true, description: 'The payload of `finding.reported` v1 (docs/contracts.md; /asyncapi.json).' } as const;

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

export class CalibrationSetCreatedDto {
  @ApiProperty({ type: () => CalibrationSetRecordDto, description: 'The stored set.' }) set!: CalibrationSetRecordDto;
  @ApiProperty({ ...OBJECT_PROPERTY, description: '{count, golden_outputs, golden_truncated, human_pass}' }) items!: Record<string, unknown>;
}

export class CalibrationSetDto {
  @ApiProperty({ type: () => CalibrationSetRecordDto }) set!: CalibrationSetRecordDto;
  @ApiProperty({ type: 'array', items: OBJECT_PROPERTY, description: 'Hashes, lengths and labels; never the golden text.' }) items!: Array<Record<string, unknown>>;
  @ApiProperty({ type: 'array', items: OBJECT_PROPERTY }) reports!: Array<Record<string, unknown>>;
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

export class CalibrationReportDto {
  @ApiProperty(UUID_PROPERTY) report_id!: string;
  @ApiProperty(UUID_PROPERTY) set_id!: string;
  @ApiProperty({ description: 'certified, not_certified, not_certifiable or insufficient_set.' }) status!: string;
  @ApiProperty() judge_model!: string;
  @ApiProperty() prompt_version!: string;
  @ApiProperty({ description: 'What the report certifies: `rubric:<sha256>` or `suite:<key>`.' }) scope!: string;
  @ApiPropertyOptional(TIMESTAMP_PROPERTY) created_at?: string;
  @ApiProperty({ ...OBJECT_PROPERTY, description: 'Agreement, kappa, intervals, confusion counts, reasons (docs/judge.md).' }) report!: Record<string, unknown>;
}

export class JudgeStatusDto {
  @ApiPropertyOptional() judge_model?: string;
  @ApiPropertyOptional() prompt_version?: string;
  @ApiProperty({ description: 'certified, not_certified, not_certifiable or uncalibrated.' }) status!: string;
  @ApiPropertyOptional({ type: 'array', items: { type: 'string' } }) certified_scopes?: string[];
  @ApiPropertyOptional({ type: 'array', items: OBJECT_PROPERTY }) scopes?: Array<Record<string, unknown>>;
  @ApiProperty({ ...OBJECT_PROPERTY, description: 'The minimum agreement and kappa targets (J4).' }) minimum_targets!: Record<string, unknown>;
  @ApiPropertyOptional({ ...OBJECT_PROPERTY, nullable: true, description: 'With scope, passed and n: the Rogan-Gladen corrected pass rate and its interval; null unless the scope is certified.' }) corrected_pass_rate?: Record<string, unknown> | null;
}

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

export class ComparisonDto {
  @ApiProperty(UUID_PROPERTY) comparison_id!: string;
  @ApiProperty() run_a!: string;
  @ApiProperty() run_b!: string;
  @ApiProperty() judge_model!: string;
  @ApiProperty() prompt_version!: string;
  @ApiPropertyOptional(TIMESTAMP_PROPERTY) created_at?: string;
  @ApiPropertyOptional({ ...OBJECT_PROPERTY, description: 'Wins, ties, position consistency and its interval (docs/judge.md, J5).' }) report?: Record<string, unknown>;
  @ApiPropertyOptional({ type: 'array', items: OBJECT_PROPERTY, description: 'Per shared case: winner, position_consistent, ab, ba.' }) cases?: Array<Record<string, unknown>>;
}
