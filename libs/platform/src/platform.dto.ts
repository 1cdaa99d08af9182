import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsOptional, Matches, ValidateIf } from 'class-validator';
import { PROJECT_ID_PATTERN } from '@evals/contracts';
import { API_KEY_NAME_PATTERN, API_KEY_TIERS, PROJECT_NAME_PATTERN } from '@evals/persistence';
import { TIMESTAMP_PROPERTY } from './api-schemas';
import { ValidateAtEdge } from './body-validation';

/* The HTTP shapes of the routes every app shares: /health and key management (docs/security.md). */

export class HealthDto {
  @ApiProperty({ enum: ['ok'] }) status!: 'ok';
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string', enum: ['up', 'down'] }, description: 'database and bus: up or down.' })
  checks!: Record<string, 'up' | 'down'>;
}

@ValidateAtEdge()
export class ApiKeyCreateBody {
  @ApiProperty({ type: 'string', minLength: 1, maxLength: 100, pattern: API_KEY_NAME_PATTERN.source, description: 'Letters, digits, space and ._@:/+-, starting with a letter or digit.' })
  @Matches(API_KEY_NAME_PATTERN)
  name!: string;

  @ApiProperty({ enum: [...API_KEY_TIERS] })
  @IsIn([...API_KEY_TIERS])
  tier!: (typeof API_KEY_TIERS)[number];

  @ApiProperty({
    type: 'string',
    nullable: true,
    required: false,
    pattern: PROJECT_ID_PATTERN.source,
    description: "The key's project (issue 30). Absent: the request's project. null: a platform key, across projects (platform admin keys only). A project key may only name its own.",
  })
  @IsOptional()
  @ValidateIf((_o, v) => v !== null)
  @Matches(PROJECT_ID_PATTERN)
  project?: string | null;
}

export class ApiKeyRecordDto {
  @ApiProperty() id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ enum: [...API_KEY_TIERS] }) tier!: (typeof API_KEY_TIERS)[number];
  @ApiProperty({ description: 'Non-secret: `evk_<id>_` and the first 4 characters of the secret.' }) prefix!: string;
  @ApiProperty(TIMESTAMP_PROPERTY) created_at!: string;
  @ApiProperty({ ...TIMESTAMP_PROPERTY, nullable: true }) revoked_at!: string | null;
  @ApiProperty({ type: 'string', nullable: true }) created_by!: string | null;
  @ApiProperty({ type: 'string', nullable: true, description: "The key's project; null for a platform key." }) project!: string | null;
}

export class ApiKeyIssuedDto {
  @ApiProperty({ description: 'The whole key, shown this once; nothing ever shows it again.' }) key!: string;
  @ApiProperty({ type: () => ApiKeyRecordDto }) api_key!: ApiKeyRecordDto;
}

export class ApiKeysDto {
  @ApiProperty({ type: () => ApiKeyRecordDto, isArray: true }) api_keys!: ApiKeyRecordDto[];
}

export class ApiKeyAnswerDto {
  @ApiProperty({ type: () => ApiKeyRecordDto }) api_key!: ApiKeyRecordDto;
}

@ValidateAtEdge()
export class ProjectCreateBody {
  @ApiProperty({ type: 'string', minLength: 1, maxLength: 63, pattern: PROJECT_ID_PATTERN.source, description: 'a-z, 0-9 and -, starting with a letter or digit: a NATS subject token.' })
  @Matches(PROJECT_ID_PATTERN)
  id!: string;

  @ApiProperty({ type: 'string', minLength: 1, maxLength: 100, pattern: PROJECT_NAME_PATTERN.source })
  @Matches(PROJECT_NAME_PATTERN)
  name!: string;
}

export class ProjectRecordDto {
  @ApiProperty() id!: string;
  @ApiProperty() name!: string;
  @ApiProperty(TIMESTAMP_PROPERTY) created_at!: string;
  @ApiProperty({ type: 'string', nullable: true }) created_by!: string | null;
}

export class ProjectAnswerDto {
  @ApiProperty({ type: () => ProjectRecordDto }) project!: ProjectRecordDto;
}

export class ProjectsDto {
  @ApiProperty({ type: () => ProjectRecordDto, isArray: true }) projects!: ProjectRecordDto[];
}
