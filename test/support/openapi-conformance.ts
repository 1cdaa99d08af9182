import Ajv, { type ValidateFunction } from 'ajv';

/**
 * Holds real answers to the OpenAPI document that describes them (X1): the response schema of the operation
 * the request matched, for the status it got, as a client generated from the document would read it. What
 * it catches: a field the service sends but the document does not know (where an object is closed), a field
 * the document promises as required and the service leaves out, a type or an enum the two disagree on.
 */
export interface OpenApiDocument {
  readonly paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }>>;
  readonly components?: { schemas?: Record<string, unknown> };
}

export interface ConformanceProblem {
  readonly at: string;
  readonly status: number;
  readonly errors: string;
}

export class OpenApiConformance {
  private readonly routes: Array<{ method: string; template: string; pattern: RegExp }>;
  private readonly validators = new Map<string, ValidateFunction | null>();
  private readonly ajv: Ajv;
  /** Answers held to a schema so far (the others had none to be held to). */
  judged = 0;

  constructor(private readonly doc: OpenApiDocument) {
    // OpenAPI 3.0 schemas are JSON Schema with `nullable` and a few annotations (`example`, `x-*`); formats
    // are documentation here, not a second contract.
    this.ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
    const defs = Object.fromEntries(Object.entries(doc.components?.schemas ?? {}).map(([name, schema]) => [name, toJsonSchema(schema)]));
    this.ajv.addSchema({ $id: 'openapi', $defs: defs });
    this.routes = Object.entries(doc.paths).flatMap(([template, item]) =>
      Object.keys(item).map((method) => ({
        method: method.toUpperCase(),
        template,
        pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
      })),
    );
  }

  /**
   * The problems of one answer, or [] when it conforms. Answers the document has no JSON schema for (a route
   * it does not list, a status it does not declare, a non-JSON body) are not judged here: the document's own
   * completeness is checked elsewhere (every route declared with its answers).
   */
  check(method: string, path: string, status: number, text: string): ConformanceProblem[] {
    const pathOnly = path.split('?')[0]!;
    // A literal segment beats a parameter: /v1/runs/compare before /v1/runs/{id}.
    const candidates = this.routes.filter((r) => r.method === method && r.pattern.test(pathOnly));
    const route = candidates.sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0))[0];
    if (!route) return [];
    const validate = this.validator(route.method, route.template, status);
    if (!validate) return [];
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return [];
    }
    this.judged += 1;
    if (validate(body)) return [];
    const errors = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`).join('; ');
    return [{ at: `${method} ${route.template}`, status, errors }];
  }

  private validator(method: string, template: string, status: number): ValidateFunction | null {
    const key = `${method} ${template} ${status}`;
    if (!this.validators.has(key)) {
      const responses = this.doc.paths[template]?.[method.toLowerCase()]?.responses ?? {};
      const schema = (responses[String(status)] ?? responses[`${String(status)[0]}XX`])?.content?.['application/json']?.schema;
      const rewritten = schema === undefined ? undefined : toJsonSchema(schema);
      this.validators.set(key, rewritten === undefined ? null : this.ajv.compile(rewritten as object));
    }
    return this.validators.get(key)!;
  }
}

const SUBSCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf'] as const;

/**
 * An OpenAPI 3.0 schema as JSON Schema: `nullable: true` becomes a null alternative (with or without a
 * `type` beside it, as @nestjs/swagger writes it for a nullable `$ref`), an exclusive bound its numeric form,
 * and component references point into the `openapi` schema's $defs.
 */
export function toJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema) || schema === null || typeof schema !== 'object') return schema;
  const { nullable, ...rest } = schema as Record<string, unknown>;
  // OpenAPI 3.0's exclusive bounds are booleans beside minimum/maximum; JSON Schema's are the bound itself.
  if (rest.exclusiveMinimum === true) [rest.exclusiveMinimum, rest.minimum] = [rest.minimum, undefined];
  if (rest.exclusiveMaximum === true) [rest.exclusiveMaximum, rest.maximum] = [rest.maximum, undefined];
  for (const key of ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum']) if (rest[key] === undefined || rest[key] === false) delete rest[key];
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rest)) {
    if (key === '$ref' && typeof value === 'string') out.$ref = value.replace('#/components/schemas/', 'openapi#/$defs/');
    else if (key === 'properties' && value && typeof value === 'object') out.properties = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, toJsonSchema(sub)]));
    else if ((key === 'items' || key === 'additionalProperties' || key === 'not') && typeof value === 'object') out[key] = toJsonSchema(value);
    else if ((SUBSCHEMA_LISTS as readonly string[]).includes(key) && Array.isArray(value)) out[key] = value.map(toJsonSchema);
    else out[key] = value;
  }
  return nullable === true ? { anyOf: [out, { type: 'null' }] } : out;
}
