import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { MAX_OVERRIDE_REASON_CHARS, MIN_OVERRIDE_REASON_CHARS } from '@evals/domain';
import { InlineOutputV1Dto, MAX_INLINE_OUTPUTS, MAX_OUTPUT_BYTES, RUN_SOURCES, RunRequestedV1Dto } from '@evals/contracts';
import { documentProperties, ID_PROPERTY, IntervalDto, JSON_VALUE_PROPERTY, SCORER_SPEC_PROPERTY, SUITE_KEY_PROPERTY, TIMESTAMP_PROPERTY, TOKEN_PROPERTY } from '@evals/platform';
import { GateBudgetDto, GateComparisonDto, GateFamilyDto, GateJudgeDto, GateOverrideDto, GateRegressionPDto, GateSubjectDto } from './gate-verdict.dto';

/*
 * The ingestion app's HTTP shapes (docs/http-api.md). The run request IS the bus contract
 * `evals.run.requested` v1 (libs/contracts): the same class, validated by the same decoder, described here
 * for OpenAPI. Suites and gates are validated by the domain (validateSuite, the gate's parser), which
 * report every problem with its code and field; these classes describe what they accept.
 */

documentProperties(InlineOutputV1Dto, {
  case_id: { ...ID_PROPERTY, description: 'The case of the suite this output answers.' },
  output: { type: 'string', maxLength: MAX_OUTPUT_BYTES, description: `The candidate's raw output; at most ${MAX_OUTPUT_BYTES} bytes of UTF-8 (413 OUTPUT_TOO_LARGE). Never stored (D1).` },
});

/** `POST /v1/runs`: the payload of `evals.run.requested` v1; `run_id` and `source` may be left out. */
export class RunRequestBody extends RunRequestedV1Dto {}
documentProperties(RunRequestBody, {
  run_id: { ...ID_PROPERTY, required: false, description: 'Idempotency: the same request again is the same run. Default: a new id.' },
  suite_key: SUITE_KEY_PROPERTY,
  suite_version: { type: 'integer', minimum: 1, required: false, description: 'Default: the latest version.' },
  subject_kind: { ...TOKEN_PROPERTY, description: 'What is evaluated: agent, model, prompt...' },
  subject_id: ID_PROPERTY,
  variant: { ...ID_PROPERTY, required: false },
  baseline_run_id: { ...ID_PROPERTY, required: false, description: 'An explicit baseline run (G5).' },
  source: { type: 'string', enum: [...RUN_SOURCES], required: false, description: 'Default: inline.' },
  outputs: { type: () => InlineOutputV1Dto, isArray: true, maxItems: MAX_INLINE_OUTPUTS, required: false, description: 'One output per case; a case without one counts as missing (R1). An empty list is 422 EMPTY_RUN.' },
});

export class GateSampleBody {
  @ApiProperty({ type: 'integer', minimum: 1, description: 'How many cases of the suite to gate on (GT3).' })
  size!: number;

  @ApiProperty({ type: 'string', minLength: 1, maxLength: 200, description: 'The seed of the sample: the same seed, the same cases.' })
  seed!: string;
}

/** `POST /v1/gate` over one suite: the run request, plus an optional sample; or a completed run by `run_id` alone. */
export class GateRequestBody {
  @ApiProperty(SUITE_KEY_PROPERTY) suite_key!: string;
  @ApiPropertyOptional({ type: 'integer', minimum: 1 }) suite_version?: number;
  @ApiProperty(TOKEN_PROPERTY) subject_kind!: string;
  @ApiProperty(ID_PROPERTY) subject_id!: string;
  @ApiPropertyOptional(ID_PROPERTY) variant?: string;
  @ApiPropertyOptional({ ...ID_PROPERTY, description: 'With outputs: the id of the run to open. Without outputs: an existing completed run to gate.' }) run_id?: string;
  @ApiPropertyOptional(ID_PROPERTY) baseline_run_id?: string;
  @ApiPropertyOptional({ type: () => InlineOutputV1Dto, isArray: true, maxItems: MAX_INLINE_OUTPUTS }) outputs?: InlineOutputV1Dto[];
  @ApiPropertyOptional({ type: () => GateSampleBody }) sample?: GateSampleBody;
}

export class GateFamilyMemberBody {
  @ApiProperty(SUITE_KEY_PROPERTY) suite_key!: string;
  @ApiPropertyOptional({ type: 'integer', minimum: 1 }) suite_version?: number;
  @ApiProperty({ type: () => InlineOutputV1Dto, isArray: true, maxItems: MAX_INLINE_OUTPUTS }) outputs!: InlineOutputV1Dto[];
  @ApiPropertyOptional({ type: () => GateSampleBody }) sample?: GateSampleBody;
  @ApiPropertyOptional(ID_PROPERTY) baseline_run_id?: string;
  @ApiPropertyOptional(ID_PROPERTY) run_id?: string;
}

/** `POST /v1/gate` over a family of suites (GT7): each suite gated on its own, Holm-corrected. */
export class GateFamilyRequestBody {
  @ApiProperty(TOKEN_PROPERTY) subject_kind!: string;
  @ApiProperty(ID_PROPERTY) subject_id!: string;
  @ApiPropertyOptional(ID_PROPERTY) variant?: string;
  @ApiProperty({ type: () => GateFamilyMemberBody, isArray: true, minItems: 2, maxItems: 20 }) suites!: GateFamilyMemberBody[];
}

export class GateOverrideBody {
  @ApiProperty({
    type: 'string',
    minLength: MIN_OVERRIDE_REASON_CHARS,
    maxLength: MAX_OVERRIDE_REASON_CHARS,
    description: `Why the failed gate is accepted (GT5), ${MIN_OVERRIDE_REASON_CHARS} to ${MAX_OVERRIDE_REASON_CHARS} characters once trimmed and not one character repeated; audited with the key that overrode.`,
  })
  reason!: string;
}

export class GateReasonDto {
  @ApiProperty({ description: 'A stable reason or warning code (regressed, below_pass_threshold, judge_uncalibrated, budget_blocked, no_baseline, ...).' }) code!: string;
  @ApiProperty() message!: string;
  @ApiPropertyOptional({ description: 'Of a family gate: the suite the reason is about.' }) suite_key?: string;
}

export class GateRunDto {
  @ApiProperty(ID_PROPERTY) run_id!: string;
  @ApiProperty(SUITE_KEY_PROPERTY) suite_key!: string;
  @ApiProperty({ type: 'integer' }) suite_version!: number;
  @ApiProperty() subject_kind!: string;
  @ApiProperty() subject_id!: string;
  @ApiProperty({ type: 'string', nullable: true }) variant!: string | null;
  @ApiProperty({ type: 'integer' }) n!: number;
  @ApiProperty({ type: 'integer' }) passed!: number;
  @ApiProperty() pass_rate!: number;
  @ApiProperty({ type: () => IntervalDto }) pass_rate_ci!: { lower: number; upper: number; level: number };
  @ApiProperty() score!: number;
  @ApiProperty() pass_threshold!: number;
  @ApiProperty({ type: 'string', nullable: true, enum: ['complete', 'incomplete', 'expired'] }) completeness!: string | null;
}

export class GateCaseDto {
  @ApiProperty() case_id!: string;
  @ApiProperty() passed!: boolean;
  @ApiProperty() score!: number;
  @ApiProperty() label!: string;
}

/** One suite of a family gate (GT7): its verdict in the family, and its own gate's report. */
export class GateSuiteOfFamilyDto {
  @ApiProperty() suite_key!: string;
  @ApiProperty({ description: 'The gate id of this suite on its own.' }) gate_id!: string;
  @ApiProperty({ enum: ['pass', 'fail'], description: "The suite's verdict in the family (after Holm)." }) verdict!: string;
  @ApiProperty({ enum: ['pass', 'fail'], description: "Its own gate's recorded verdict, unchanged by the family." }) suite_verdict!: string;
  @ApiProperty({ type: () => GateReasonDto, isArray: true, description: 'In the family: a regressed that did not survive Holm is a warning.' }) reasons!: GateReasonDto[];
  @ApiProperty({ type: () => GateReasonDto, isArray: true }) warnings!: GateReasonDto[];
  @ApiProperty({ type: () => GateRegressionPDto, nullable: true, description: 'Null for a suite without a regression test (no baseline, no drop above its threshold).' }) regression_p!: GateRegressionPDto | null;
  @ApiProperty({ type: () => GateComparisonDto, nullable: true }) comparison!: GateComparisonDto | null;
  @ApiProperty({ type: () => GateRunDto }) run!: GateRunDto;
  @ApiProperty({ type: () => GateJudgeDto }) judge!: GateJudgeDto;
  @ApiProperty({ type: () => GateBudgetDto }) budget!: GateBudgetDto;
  @ApiProperty({ type: () => GateSampleBody, nullable: true }) sample!: GateSampleBody | null;
  @ApiProperty({ type: () => GateCaseDto, isArray: true }) cases!: GateCaseDto[];
}

/** The verdict of `POST /v1/gate`, as recorded; `GET /v1/gate/:id` adds the overrides (docs/gate.md). */
export class GateVerdictDto {
  @ApiProperty() gate_id!: string;
  @ApiPropertyOptional({ enum: ['family'], description: 'Present on a gate over several suites (GT7).' }) kind?: string;
  @ApiProperty({ enum: ['pass', 'fail'], description: 'The verdict as decided; never changes.' }) recorded_verdict!: string;
  @ApiProperty({ enum: ['pass', 'fail'], description: 'After overrides (GT5).' }) effective_verdict!: string;
  @ApiProperty({ type: () => GateReasonDto, isArray: true }) reasons!: GateReasonDto[];
  @ApiProperty({ type: () => GateReasonDto, isArray: true, description: 'Warnings never decide the verdict, and are always shown (GT2).' }) warnings!: GateReasonDto[];
  @ApiPropertyOptional({ type: () => GateRunDto, description: 'A single-suite gate: its run.' }) run?: GateRunDto;
  @ApiPropertyOptional({ type: () => GateComparisonDto, nullable: true, description: 'A single-suite gate: the regression test against the baseline (G1-G8); null when the run has no regression decision.' }) comparison?: GateComparisonDto | null;
  @ApiPropertyOptional({ type: () => GateJudgeDto, description: 'A single-suite gate: judge use, certification and corrected pass rates (GT1, GT2, GT6, J4).' }) judge?: GateJudgeDto;
  @ApiPropertyOptional({ type: () => GateBudgetDto, description: 'A single-suite gate: the judge budget decision (GT4).' }) budget?: GateBudgetDto;
  @ApiPropertyOptional({ type: () => GateSampleBody, nullable: true }) sample?: GateSampleBody | null;
  @ApiPropertyOptional({ type: () => GateCaseDto, isArray: true }) cases?: GateCaseDto[];
  @ApiPropertyOptional({ type: () => GateSubjectDto, description: 'A family gate: the subject of its suites.' }) subject?: GateSubjectDto;
  @ApiPropertyOptional({ type: () => GateSuiteOfFamilyDto, isArray: true, description: 'A family gate: one entry per suite.' }) suites?: GateSuiteOfFamilyDto[];
  @ApiPropertyOptional({ type: () => GateFamilyDto, description: 'A family gate: the multiple-testing correction (GT7).' }) family?: GateFamilyDto;
  @ApiProperty({ type: () => GateOverrideDto, nullable: true, description: 'The latest override (GT5), if any; always null in the answer of POST /v1/gate.' }) override!: GateOverrideDto | null;
  @ApiPropertyOptional({ type: () => GateOverrideDto, isArray: true, description: 'GET and override: every override, oldest first.' }) overrides?: GateOverrideDto[];
  @ApiProperty(TIMESTAMP_PROPERTY) recorded_at!: string;
}

export class SuiteCaseBody {
  @ApiProperty({ ...ID_PROPERTY, description: 'Unique within the suite.' }) id!: string;
  @ApiProperty({ ...JSON_VALUE_PROPERTY, description: 'The input the agent is given; any JSON value.' }) input!: unknown;
  @ApiPropertyOptional({ ...JSON_VALUE_PROPERTY, description: 'The expected output, for the scorers that compare with one.' }) expected?: unknown;
  @ApiPropertyOptional({ ...SCORER_SPEC_PROPERTY, description: "The case's own scorer, instead of the suite's default (docs/scorers.md)." }) scorer?: Record<string, unknown>;
  @ApiPropertyOptional({ type: 'string', isArray: true, maxItems: 32 }) tags?: string[];
}

/** A suite as JSON; the same structure as YAML with Content-Type application/yaml (docs/suites.md). */
export class SuiteBody {
  @ApiProperty(SUITE_KEY_PROPERTY) key!: string;
  @ApiPropertyOptional({ type: 'string', maxLength: 4000 }) description?: string;
  @ApiProperty({ ...SCORER_SPEC_PROPERTY, description: 'The scorer of every case without its own: `{type, ...options}` (docs/scorers.md).' }) default_scorer!: Record<string, unknown>;
  @ApiProperty({ type: 'number', minimum: 0, maximum: 1 }) pass_threshold!: number;
  @ApiProperty({ type: 'number', minimum: 0, maximum: 1 }) regression_threshold!: number;
  @ApiPropertyOptional({ type: 'boolean' }) golden_fixtures?: boolean;
  @ApiProperty({ type: () => SuiteCaseBody, isArray: true, minItems: 1, maxItems: 100_000 }) cases!: SuiteCaseBody[];
}

export class SuiteCaseDto {
  @ApiProperty() case_id!: string;
  @ApiProperty(JSON_VALUE_PROPERTY) input!: unknown;
  @ApiPropertyOptional({ ...JSON_VALUE_PROPERTY, description: 'Absent when the case has no expected value; null when it is the value null.' }) expected?: unknown;
  @ApiProperty({ ...SCORER_SPEC_PROPERTY, nullable: true, description: "The case's own scorer; null when it uses the suite's default." }) scorer!: Record<string, unknown> | null;
  @ApiProperty({ type: 'string', isArray: true }) tags!: string[];
}

export class SuiteVersionDto {
  @ApiProperty(SUITE_KEY_PROPERTY) suite_key!: string;
  @ApiProperty({ type: 'integer', minimum: 1 }) version!: number;
  @ApiProperty() content_hash!: string;
  @ApiProperty({ type: 'string', nullable: true }) description!: string | null;
  @ApiProperty(SCORER_SPEC_PROPERTY) default_scorer!: Record<string, unknown>;
  @ApiProperty() pass_threshold!: number;
  @ApiProperty() regression_threshold!: number;
  @ApiProperty() golden_fixtures!: boolean;
  @ApiProperty({ type: 'integer' }) case_count!: number;
  @ApiPropertyOptional(TIMESTAMP_PROPERTY) created_at?: string;
}

export class SuiteVersionWithCasesDto extends SuiteVersionDto {
  @ApiPropertyOptional({ type: () => SuiteCaseDto, isArray: true, description: 'GET: the cases, as authored.' }) cases?: SuiteCaseDto[];
}

export class SuitePushedDto {
  @ApiProperty({ description: 'true: a new version (201); false: the same content as the latest version (200).' }) created!: boolean;
  @ApiPropertyOptional({ type: 'integer', description: 'A revert: the earlier version with the same content.' }) same_content_as?: number;
  @ApiProperty({ type: () => SuiteVersionDto }) suite!: SuiteVersionDto;
}

export class SuiteAnswerDto {
  @ApiProperty({ type: () => SuiteVersionWithCasesDto }) suite!: SuiteVersionWithCasesDto;
}

/** The request body of POST /v1/gate: one suite, or a family. */
export const GATE_BODY_SCHEMA = { oneOf: [{ $ref: getSchemaPath(GateRequestBody) }, { $ref: getSchemaPath(GateFamilyRequestBody) }] };
export const GateBodyModels = ApiExtraModels(GateRequestBody, GateFamilyRequestBody);
