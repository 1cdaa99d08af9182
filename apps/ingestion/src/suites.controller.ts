import { Body, Controller, Get, Headers, Param, Post, Res } from '@nestjs/common';
import { RequireTier } from '@evals/platform';
import { parseSuiteYaml, validateSuite, type SuiteValidation } from '@evals/domain';
import type { SuiteVersionWithCases } from '@evals/persistence';
import type { Response } from 'express';
import { IntakeError } from './intake-error';
import { SuiteCatalogService } from './suite-catalog.service';

/**
 * Suites over HTTP (V1-V3). `POST /v1/suites` takes the YAML file itself (Content-Type application/yaml
 * or text/yaml) or the same structure as JSON. A bad suite is refused with every problem, each naming
 * the case and the field (S4); identical content returns the existing version (200), new content mints
 * one (201).
 */
@Controller('v1/suites')
export class SuitesController {
  constructor(private readonly catalog: SuiteCatalogService) {}

  @RequireTier('operator')
  @Post()
  async push(@Body() body: unknown, @Headers('content-type') contentType: string | undefined, @Res({ passthrough: true }) res: Response): Promise<Record<string, unknown>> {
    const validation: SuiteValidation =
      typeof body === 'string' || /yaml|text\/plain/.test(contentType ?? '')
        ? parseSuiteYaml(typeof body === 'string' ? body : '', 'request body')
        : validateSuite(body, 'request body');
    if (!validation.ok) {
      const first = validation.errors[0];
      throw new IntakeError(
        'SUITE_INVALID',
        `the suite is invalid: ${validation.errors.length} problem(s); first: ${first ? `${first.field || 'suite'}${first.case_id ? ` (case ${first.case_id})` : ''}: ${first.message}` : 'unknown'}`,
        first?.field,
        { errors: validation.errors },
      );
    }
    const result = await this.catalog.push(validation.suite);
    res.status(result.created ? 201 : 200);
    return { created: result.created, ...(result.same_content_as ? { same_content_as: result.same_content_as } : {}), suite: result.version };
  }

  @RequireTier('viewer')
  @Get(':key')
  async latest(@Param('key') key: string): Promise<Record<string, unknown>> {
    return view(await this.catalog.find(key), key);
  }

  @RequireTier('viewer')
  @Get(':key/versions/:version')
  async version(@Param('key') key: string, @Param('version') version: string): Promise<Record<string, unknown>> {
    const n = Number(version);
    if (!Number.isSafeInteger(n) || n < 1) throw new IntakeError('INVALID_REQUEST', 'version must be a positive integer', 'version');
    return view(await this.catalog.find(key, n), key, n);
  }
}

function view(suite: SuiteVersionWithCases | null, key: string, version?: number): Record<string, unknown> {
  if (!suite) {
    throw version === undefined
      ? new IntakeError('SUITE_NOT_FOUND', `no suite with key ${key}`, 'key')
      : new IntakeError('SUITE_VERSION_NOT_FOUND', `suite ${key} has no version ${version}`, 'version');
  }
  return { suite };
}
