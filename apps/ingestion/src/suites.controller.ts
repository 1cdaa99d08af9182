import { Body, Controller, Get, Headers, Param, Post, Query, Res } from '@nestjs/common';
import { ApiExtraModels, ApiParam, ApiProperty } from '@nestjs/swagger';
import { ApiRoute, ProjectScope, TIMESTAMP_PROPERTY, YAML_MEDIA_TYPES } from '@evals/platform';
import { parseSuiteYaml, validateSuite, type SuiteCheck, type SuiteDefinition, type SuiteError } from '@evals/domain';
import type { Page, SuiteSummary, SuiteVersionWithCases } from '@evals/persistence';
import type { Response as ExpressResponse } from 'express';
import { SuiteAnswerDto, SuiteBody, SuitePushedDto } from './ingestion.dto';
import { IntakeError } from './intake-error';
import { pageParams } from './page-params';
import { SuiteCatalogService } from './suite-catalog.service';

export class SuiteListItemDto {
  @ApiProperty({ description: 'The suite key.' }) suite_key!: string;
  @ApiProperty({ type: 'integer', minimum: 1, description: 'The latest version.' }) latest_version!: number;
  @ApiProperty({ type: 'integer', description: 'Cases in the latest version.' }) case_count!: number;
  @ApiProperty({ type: 'integer', minimum: 1, description: 'How many versions are stored (V1: append-only).' }) versions!: number;
  @ApiProperty({ type: 'string', nullable: true, description: "The latest version's description." }) description!: string | null;
  @ApiProperty({ description: "The latest version's content hash (V2)." }) content_hash!: string;
  @ApiProperty({ ...TIMESTAMP_PROPERTY, description: 'When the latest version was pushed.' }) created_at!: string;
  @ApiProperty({ ...TIMESTAMP_PROPERTY, description: 'When version 1 was pushed.' }) first_created_at!: string;
}

export class SuiteListPageDto {
  @ApiProperty({ type: () => SuiteListItemDto, isArray: true, description: 'By suite key.' }) items!: SuiteListItemDto[];
  @ApiProperty({ type: 'integer', description: 'Suites stored (not versions).' }) total!: number;
  @ApiProperty({ type: 'integer' }) offset!: number;
  @ApiProperty({ type: 'integer' }) limit!: number;
}

/**
 * Suites over HTTP (V1-V3). `POST /v1/suites` takes the YAML file itself (Content-Type application/yaml
 * or text/yaml) or the same structure as JSON. A bad suite is refused with every problem, each naming
 * the case and the field (S4); identical content returns the existing version (200), new content mints
 * one (201). Bytes of a text body already accepted as the latest version are answered as an identical push
 * without parsing them again (V2; docs/suites.md).
 */
@Controller('v1/suites')
@ApiExtraModels(SuiteBody)
export class SuitesController {
  constructor(private readonly catalog: SuiteCatalogService) {}

  @ApiRoute({
    tier: 'operator',
    summary: 'Push a suite (V1-V3): identical content returns the existing version, new content mints one',
    body: { schema: { $ref: '#/components/schemas/SuiteBody' }, contentTypes: ['application/json', ...YAML_MEDIA_TYPES], description: 'The suite as JSON, or its YAML file (the same structure; docs/suites.md).' },
    ok: [
      { status: 201, type: SuitePushedDto, description: 'A new version (or a revert: `same_content_as`).' },
      { status: 200, type: SuitePushedDto, description: 'The same content as the latest version: nothing new.' },
    ],
    errors: ['INVALID_REQUEST', 'SUITE_INVALID'],
  })
  @Post()
  async push(
    @ProjectScope() project: string,
    @Body() body: SuiteBody | string,
    @Headers('content-type') contentType: string | undefined,
    @Res({ passthrough: true }) res: ExpressResponse,
  ): Promise<SuitePushedDto> {
    // A text body may be bytes already accepted: the catalog answers those without parsing (V2, issue 15);
    // others are read slice by slice, never held as a whole suite (issue 31).
    const result = typeof body === 'string' ? await this.catalog.pushYaml(project, body, 'request body', refusal) : await this.catalog.push(project, validSuite(body, contentType));
    res.status(result.created ? 201 : 200);
    return { created: result.created, ...(result.same_content_as ? { same_content_as: result.same_content_as } : {}), suite: result.version as SuitePushedDto['suite'] };
  }

  @ApiRoute({
    tier: 'viewer',
    summary: 'Stored suites by key, each with its latest version, case count and number of versions',
    description: 'Every suite pushed, whether or not it was ever run; `offset` (default 0) and `limit` (default 50, at most 500) page it.',
    ok: { status: 200, type: SuiteListPageDto, description: 'One page of suites.' },
    errors: ['INVALID_REQUEST'],
  })
  @Get()
  async list(@ProjectScope() project: string, @Query('offset') offset?: string, @Query('limit') limit?: string): Promise<Page<SuiteSummary>> {
    const page = pageParams(offset, limit);
    return this.catalog.list(project, page.offset, page.limit);
  }

  @ApiRoute({ tier: 'viewer', summary: "A suite's latest version, with its cases as authored", ok: { status: 200, type: SuiteAnswerDto, description: 'The latest version.' }, errors: ['SUITE_NOT_FOUND'] })
  @ApiParam({ name: 'key', description: 'The suite key.' })
  @Get(':key')
  async latest(@ProjectScope() project: string, @Param('key') key: string): Promise<SuiteAnswerDto> {
    // Another project's suite answers as a missing one (issue 30): the lookup is in the request's project only.
    return view(await this.catalog.find(project, key), key);
  }

  @ApiRoute({ tier: 'viewer', summary: 'One version of a suite, with its cases as authored', ok: { status: 200, type: SuiteAnswerDto, description: 'That version.' }, errors: ['INVALID_REQUEST', 'SUITE_NOT_FOUND', 'SUITE_VERSION_NOT_FOUND'] })
  @ApiParam({ name: 'key', description: 'The suite key.' })
  @ApiParam({ name: 'version', description: 'A version number, from 1.', schema: { type: 'integer', minimum: 1 } })
  @Get(':key/versions/:version')
  async version(@ProjectScope() project: string, @Param('key') key: string, @Param('version') version: string): Promise<SuiteAnswerDto> {
    const n = Number(version);
    if (!Number.isSafeInteger(n) || n < 1) throw new IntakeError('INVALID_REQUEST', 'version must be a positive integer', 'version');
    return view(await this.catalog.find(project, key, n), key, n);
  }
}

/**
 * The suite of a push body, or SUITE_INVALID with every problem (S4). Every case's scorer is compiled to
 * check it, and none is kept (a push scores nothing; issue 15: 100 000 of them are tens of megabytes).
 */
function validSuite(body: SuiteBody | string, contentType: string | undefined): SuiteDefinition {
  const validation: SuiteCheck =
    typeof body === 'string' || /yaml|text\/plain/.test(contentType ?? '')
      ? parseSuiteYaml(typeof body === 'string' ? body : '', 'request body', { scorers: false })
      : validateSuite(body, 'request body', { scorers: false });
  if (!validation.ok) throw refusal(validation.errors);
  return validation.suite;
}

/** SUITE_INVALID with every problem (S4). */
function refusal(errors: readonly SuiteError[]): IntakeError {
  const first = errors[0];
  return new IntakeError(
    'SUITE_INVALID',
    `the suite is invalid: ${errors.length} problem(s); first: ${first ? `${first.field || 'suite'}${first.case_id ? ` (case ${first.case_id})` : ''}: ${first.message}` : 'unknown'}`,
    first?.field,
    { errors },
  );
}

function view(suite: SuiteVersionWithCases | null, key: string, version?: number): SuiteAnswerDto {
  if (!suite) {
    throw version === undefined
      ? new IntakeError('SUITE_NOT_FOUND', `no suite with key ${key}`, 'key')
      : new IntakeError('SUITE_VERSION_NOT_FOUND', `suite ${key} has no version ${version}`, 'version');
  }
  return { suite: suite as SuiteAnswerDto['suite'] };
}
