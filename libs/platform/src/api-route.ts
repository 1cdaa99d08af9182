import { applyDecorators, type Type } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiExtension, ApiExtraModels, ApiOperation, getSchemaPath, ApiProperty, ApiPropertyOptional, ApiResponse, type ApiPropertyOptions } from '@nestjs/swagger';
import type { ReferenceObject, SchemaObject } from '@nestjs/swagger';
import type { ApiErrorCode } from './api-error';
import { Public, RequireTier } from './auth/decorators';
import type { RouteAccess } from './auth/tiers';

/** Extension keys the document generator reads (openapi.ts) to complete every operation. */
export const TIER_EXTENSION = 'x-evals-tier';
export const ERRORS_EXTENSION = 'x-evals-errors';

/** The body of every error answer (ApiExceptionFilter). */
/** One problem of a refused suite (S4): `details.errors` of SUITE_INVALID, every one of them. */
export class SuiteProblemDto {
  @ApiProperty({ description: 'A suite error code (docs/suites.md) or a scorer configuration code (SCORER_*, REGEX_*).' }) code!: string;
  @ApiProperty({ description: 'Where the suite came from: its file, or `request body`.' }) file!: string;
  @ApiProperty({ description: 'Path of the offending field (`cases[3].scorer.pattern`); empty for the document as a whole.' }) field!: string;
  @ApiProperty() message!: string;
  @ApiPropertyOptional({ description: "The case's id, when the case has a valid one." }) case_id?: string;
  @ApiPropertyOptional({ type: 'integer', minimum: 0, description: '0-based index in `cases`, as in `field`.' }) case_index?: number;
  @ApiPropertyOptional({ type: 'integer', minimum: 1, description: 'YAML suites: 1-based line.' }) line?: number;
  @ApiPropertyOptional({ type: 'integer', minimum: 1, description: 'YAML suites: 1-based column.' }) column?: number;
}

/** One issue of a refused request body: `details.issues` of INVALID_REQUEST. */
export class RequestIssueDto {
  @ApiProperty({ description: 'Path of the field (`outputs[3].case_id`).' }) field!: string;
  @ApiProperty({ description: 'The rule it broke (`isString`, `maxLength`, `whitelistValidation`, ...).' }) constraint!: string;
}

/** `details` of an error answer: present for the codes that have more to say than one field. */
export class ApiErrorDetailsDto {
  @ApiPropertyOptional({ type: () => SuiteProblemDto, isArray: true, description: 'SUITE_INVALID: every problem of the suite.' }) errors?: SuiteProblemDto[];
  @ApiPropertyOptional({ type: () => RequestIssueDto, isArray: true, description: 'INVALID_REQUEST: every issue of the body.' }) issues?: RequestIssueDto[];
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'integer', minimum: 1 },
    description: 'JUDGE_CALL_FAILED: the items the judge did not answer, counted by judge error code (`judge_timeout`, `judge_rate_limited`, ...).',
  })
  judge_errors?: Record<string, number>;
}

export class ApiErrorBody {
  @ApiProperty({ description: 'A stable code (docs/http-api.md lists them with their statuses).' })
  code!: string;

  @ApiProperty({ description: 'Plain text naming fields and ids; never a value of the request (D1), never an internal error.' })
  message!: string;

  @ApiPropertyOptional({ description: 'The offending field, as a path (`outputs[3].case_id`).' })
  field?: string;

  @ApiPropertyOptional({ type: () => ApiErrorDetailsDto, description: "Structured detail: a suite's problems, a request's issues, a judge's failures." })
  details?: ApiErrorDetailsDto;

  @ApiPropertyOptional({ description: 'RATE_LIMITED: seconds until the key may write again (also in Retry-After).' })
  retry_after_seconds?: number;

  @ApiPropertyOptional({ type: 'string', nullable: true, description: 'FORBIDDEN: the tier the route needs.' })
  required_tier?: string | null;
}

/** A successful answer: a DTO class, or a schema for the answers that are not JSON objects (CSV, SSE, text). */
export interface ApiOk {
  readonly status: number;
  readonly description: string;
  readonly type?: Type<unknown>;
  readonly schema?: SchemaObject | ReferenceObject;
  /** Media type(s) of a `schema` answer; default application/json. */
  readonly contentTypes?: readonly string[];
}

export interface ApiRouteOptions {
  readonly summary: string;
  readonly description?: string;
  /** The tier a key needs (also declared for access control), or `public`. */
  readonly tier: RouteAccess;
  /** The request body's DTO; or a schema with the media types it is accepted as. */
  readonly body?: Type<unknown> | { readonly schema: SchemaObject | ReferenceObject; readonly contentTypes: readonly string[]; readonly description?: string };
  readonly ok: ApiOk | readonly ApiOk[];
  /**
   * The codes of the domain this route can refuse with. The generator adds the edge's own: 401/403 by tier,
   * 429 on writes, 400/413 of a JSON body, 500.
   */
  readonly errors?: readonly ApiErrorCode[];
}

/**
 * One decorator per route: its access tier (the guard's) and its OpenAPI description - body, answers, error
 * codes. A route without it has no tier, and the app refuses to boot (fail closed); the OpenAPI spec fails
 * on an operation without `x-evals-tier`.
 */
export function ApiRoute(options: ApiRouteOptions): MethodDecorator {
  const decorators: Array<MethodDecorator | ClassDecorator> = [
    options.tier === 'public' ? Public() : RequireTier(options.tier),
    ApiOperation({ summary: options.summary, ...(options.description ? { description: options.description } : {}) }),
    ApiExtension(TIER_EXTENSION, options.tier),
    ApiExtension(ERRORS_EXTENSION, [...(options.errors ?? [])]),
  ];
  if (options.body) {
    if (typeof options.body === 'function') {
      decorators.push(ApiBody({ type: options.body, required: true }));
    } else {
      decorators.push(ApiConsumes(...options.body.contentTypes), ApiBody({ schema: options.body.schema, required: true, ...(options.body.description ? { description: options.body.description } : {}) }));
    }
  }
  const answers = [options.ok].flat() as ApiOk[];
  for (const status of [...new Set(answers.map((a) => a.status))]) {
    const same = answers.filter((a) => a.status === status);
    const only = same[0]!;
    if (same.length === 1 && only.type) {
      decorators.push(ApiResponse({ status, description: only.description, type: only.type }));
      continue;
    }
    // One status, several media types (JSON or CSV): one response with a content entry per type.
    const content: Record<string, { schema: SchemaObject | ReferenceObject }> = {};
    for (const a of same) {
      if (a.type) {
        decorators.push(ApiExtraModels(a.type));
        content['application/json'] = { schema: { $ref: getSchemaPath(a.type) } };
      } else {
        for (const t of a.contentTypes ?? ['application/json']) content[t] = { schema: a.schema ?? { type: 'object' } };
      }
    }
    decorators.push(ApiResponse({ status, description: same.map((a) => a.description).join(' '), content }));
  }
  return applyDecorators(...decorators) as MethodDecorator;
}

/**
 * Adds OpenAPI descriptions to the properties of a class declared elsewhere - the bus contract DTOs of
 * @evals/contracts, which stay free of Nest - so an HTTP body that has the shape of a message reuses its
 * class (and its class-validator rules) instead of a copy.
 */
export function documentProperties<T>(type: new () => T, properties: { [K in keyof T]-?: ApiPropertyOptions & { required?: boolean } }): void {
  for (const [name, options] of Object.entries(properties) as Array<[string, ApiPropertyOptions]>) {
    ApiProperty(options)(type.prototype as object, name);
  }
}
