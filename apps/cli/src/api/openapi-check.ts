import type { OpenAPIObject } from '@nestjs/swagger';
import { TIER_EXTENSION } from '@evals/platform';
import type { MappedRoute } from './openapi-documents';

/*
 * What makes an OpenAPI document of this service complete (docs/http-api.md): every mapped route is an
 * operation and every operation a mapped route; each was declared with ApiRoute (its tier), has a body schema
 * when it takes a body, a described 2xx answer, a schema for each error answer, and its path parameters.
 * A route added without its DTOs fails here.
 */

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
type Json = Record<string, unknown>;

function resolve(doc: OpenAPIObject, schema: unknown): Json | undefined {
  const ref = (schema as { $ref?: unknown } | undefined)?.$ref;
  if (typeof ref !== 'string') return schema as Json | undefined;
  const name = ref.replace('#/components/schemas/', '');
  return doc.components?.schemas?.[name] as Json | undefined;
}

/** A schema that says something: a $ref to a component with properties, a type, or a composition. */
function describes(doc: OpenAPIObject, schema: unknown): boolean {
  const s = resolve(doc, schema);
  if (!s) return false;
  if (s.oneOf || s.allOf || s.anyOf) return true;
  if (s.type === 'object') return Object.keys((s.properties as Json | undefined) ?? {}).length > 0 || s.additionalProperties !== undefined;
  return typeof s.type === 'string';
}

export function completenessProblems(doc: OpenAPIObject): string[] {
  const problems: string[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = (item as Json)[method] as (Json & { responses?: Json; requestBody?: Json; parameters?: Json[] }) | undefined;
      if (!op) continue;
      const at = `${method.toUpperCase()} ${path}`;
      if (typeof op[TIER_EXTENSION] !== 'string') problems.push(`${at}: not declared with ApiRoute (no ${TIER_EXTENSION})`);
      if (method !== 'get' && method !== 'delete') {
        const content = (op.requestBody?.content ?? {}) as Record<string, { schema?: unknown }>;
        if (Object.keys(content).length === 0 || !Object.values(content).every((c) => describes(doc, c.schema))) problems.push(`${at}: no request body schema`);
      }
      const responses = Object.entries(op.responses ?? {}) as Array<[string, { content?: Record<string, { schema?: unknown }> }]>;
      const ok = responses.filter(([status]) => /^2\d\d$/.test(status));
      if (ok.length === 0) problems.push(`${at}: no 2xx answer`);
      for (const [status, response] of responses) {
        const content = Object.values(response.content ?? {});
        if (content.length === 0 || !content.every((c) => describes(doc, c.schema))) problems.push(`${at}: answer ${status} has no schema`);
      }
      if (!responses.some(([status]) => status === '500')) problems.push(`${at}: no 500 answer`);
      for (const name of [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1])) {
        if (!(op.parameters ?? []).some((p) => p.in === 'path' && p.name === name)) problems.push(`${at}: path parameter ${name} undescribed`);
      }
    }
  }
  return problems;
}

/** Mapped routes missing from the document, and operations that map to no route. */
export function routeProblems(doc: OpenAPIObject, routes: readonly MappedRoute[]): string[] {
  const documented = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) if ((item as Json)[method]) documented.add(`${method.toUpperCase()} ${path}`);
  }
  const mapped = new Set(routes.filter((r) => !r.excluded).map((r) => `${r.method} ${r.path}`));
  return [
    ...[...mapped].filter((r) => !documented.has(r)).map((r) => `${r}: mapped but not in the document`),
    ...[...documented].filter((r) => !mapped.has(r)).map((r) => `${r}: in the document but not mapped`),
  ];
}
