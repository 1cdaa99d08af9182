import type { INestApplication } from '@nestjs/common';
import { PROJECT_ID_PATTERN } from '@evals/contracts';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { API_ERROR_CODES, codesOfStatus, type ApiErrorCode } from './api-error';
import { ApiErrorBody, ERRORS_EXTENSION, TIER_EXTENSION } from './api-route';
import { addReferencedSchemas, busSchemas } from './bus-schemas';
import { SCORER_SPEC_COMPONENTS } from './scorer-spec.schema';

/** Paths served without a key: the probes, and the descriptions of the API (docs/security.md). */
export const PUBLIC_PATHS = ['/health', '/metrics', '/openapi.json', '/docs', '/asyncapi.json'] as const;

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

/** The codes the edge itself can answer on any operation, beyond the ones its route declares. */
function edgeCodes(method: string, tier: string | undefined, hasBody: boolean): ApiErrorCode[] {
  const codes: ApiErrorCode[] = [];
  // Issue 30: the guard decides the request's project (X-Evals-Project) on every keyed route.
  if (tier !== 'public') codes.push('UNAUTHENTICATED', 'FORBIDDEN', 'PROJECT_NOT_FOUND', 'INVALID_REQUEST');
  if (tier !== 'public' && method !== 'get') codes.push('RATE_LIMITED');
  if (hasBody) codes.push('MALFORMED_JSON', 'BODY_TOO_DEEP', 'PAYLOAD_TOO_LARGE');
  // Node's parser refuses a request line and headers over 16 KiB before any route (answerUnparsableRequests);
  // a long query string reaches it on any operation.
  codes.push('HEADERS_TOO_LARGE', 'INTERNAL');
  return codes;
}

/** Issue 30 (docs/security.md, "Projects"): the header a platform key picks the request's project with. */
const PROJECT_HEADER_PARAMETER = {
  name: 'X-Evals-Project',
  in: 'header',
  required: false,
  description: "The project to act in. A project key acts in its own (naming another answers 404 PROJECT_NOT_FOUND); a platform key in this one, `default` when absent.",
  schema: { type: 'string', pattern: PROJECT_ID_PATTERN.source },
};

function errorSchema(codes: readonly string[]): Record<string, unknown> {
  return { allOf: [{ $ref: '#/components/schemas/ApiErrorBody' }, { type: 'object', properties: { code: { type: 'string', enum: [...codes] } } }] };
}

/**
 * X1: the OpenAPI 3 document of an app's HTTP API, generated from its controllers (every route is declared
 * with ApiRoute: body DTO, answers, domain error codes), then completed the same way for every operation:
 * the error answers by status with the codes each can carry ({code, message, field?}, API_ERROR_CODES), the
 * access-control answers of its tier, the bearer requirement (none on public routes).
 */
export function buildOpenApiDocument(app: INestApplication, name: string, version: string): OpenAPIObject {
  const title = name === 'evals' ? 'evals' : `evals ${name}`;
  const config = new DocumentBuilder()
    .setTitle(title)
    .setDescription(`The ${name === 'evals' ? 'all-in-one' : name} HTTP API of the evals service (docs/http-api.md). Bearer API keys; see docs/security.md.`)
    .setVersion(version)
    .addBearerAuth()
    .addSecurityRequirements('bearer')
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    extraModels: [ApiErrorBody],
    operationIdFactory: (controller, method) => `${controller.replace(/Controller$/, '')}_${method}`,
  });
  const schemas = ((document.components ??= {}).schemas ??= {});
  // Schemas the edge defines once by name - the scorer spec union (scorer-spec.schema.ts), and a stored bus
  // payload answered as is, a finding (bus-schemas.ts) - join the document where something references them.
  addReferencedSchemas(document, schemas, [() => SCORER_SPEC_COMPONENTS, busSchemas]);
  const body = schemas.ApiErrorBody as { properties?: Record<string, Record<string, unknown>> } | undefined;
  if (body?.properties?.code) body.properties.code.enum = Object.keys(API_ERROR_CODES);
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const op = item[method] as (Record<string, unknown> & { responses: Record<string, unknown>; requestBody?: unknown; security?: unknown }) | undefined;
      if (!op) continue;
      const tier = op[TIER_EXTENSION] as string | undefined;
      const declared = (op[ERRORS_EXTENSION] as ApiErrorCode[] | undefined) ?? [];
      delete op[ERRORS_EXTENSION];
      if (tier === 'public') op.security = [];
      else op.parameters = [...((op.parameters as unknown[] | undefined) ?? []), PROJECT_HEADER_PARAMETER];
      const codes = [...new Set([...declared, ...edgeCodes(method, tier, op.requestBody !== undefined)])];
      const statuses = [...new Set(codes.map((c) => API_ERROR_CODES[c].status))].sort((a, b) => a - b);
      for (const status of statuses) {
        const here = codes.filter((c) => API_ERROR_CODES[c].status === status);
        if (op.responses[String(status)] !== undefined) continue;
        op.responses[String(status)] = {
          description: here.map((c) => `\`${c}\`: ${API_ERROR_CODES[c].description}`).join(' '),
          content: { 'application/json': { schema: errorSchema(here) } },
          ...(status === 429 || status === 503 ? { headers: { 'Retry-After': { description: 'Seconds to wait before retrying the same request.', schema: { type: 'integer' } } } } : {}),
        };
      }
      if (tier !== 'public' && !op.responses['401']) op.responses['401'] = { description: 'UNAUTHENTICATED', content: { 'application/json': { schema: errorSchema(codesOfStatus(401)) } } };
    }
  }
  return document;
}

/** Serves the document at `/openapi.json` and a browsable UI at `/docs`, both public (docs/security.md). */
export function serveOpenApi(app: INestApplication, name: string, version: string): OpenAPIObject {
  const document = buildOpenApiDocument(app, name, version);
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'openapi.json', raw: ['json'] });
  return document;
}
