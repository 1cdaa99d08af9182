import { ID_PATTERN, MAX_ID_LENGTH, SUITE_KEY_PATTERN, TOKEN_PATTERN } from '@evals/contracts';
import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';

/*
 * Property descriptions shared by the apps' DTOs: the same patterns the contracts validate with
 * (libs/contracts limits.ts), so the document cannot promise more or less than the service accepts.
 */
export const ID_PROPERTY = { type: 'string', pattern: ID_PATTERN.source, minLength: 1, maxLength: MAX_ID_LENGTH } as const satisfies ApiPropertyOptions;
export const SUITE_KEY_PROPERTY = { type: 'string', pattern: SUITE_KEY_PATTERN.source, minLength: 1, maxLength: 128 } as const satisfies ApiPropertyOptions;
export const TOKEN_PROPERTY = { type: 'string', pattern: TOKEN_PATTERN.source, minLength: 1, maxLength: 64 } as const satisfies ApiPropertyOptions;
export const TIMESTAMP_PROPERTY = { type: 'string', format: 'date-time' } as const satisfies ApiPropertyOptions;
/** A count: a whole number, never negative. */
export const COUNT_PROPERTY = { type: 'integer', minimum: 0 } as const satisfies ApiPropertyOptions;
/** Any JSON value (a case's input or expected value). */
export const JSON_VALUE_PROPERTY = { oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }, { type: 'object', additionalProperties: true }, { type: 'array', items: {} }], nullable: true } as const satisfies ApiPropertyOptions;
/** A 95% interval: `{lower, upper, level}` (docs/statistics.md). */
export class IntervalDto {
  @ApiProperty() lower!: number;
  @ApiProperty() upper!: number;
  @ApiProperty({ description: 'The confidence level, 0.95.' }) level!: number;
}
