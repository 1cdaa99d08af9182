import { buildAsyncApiDocument } from '@evals/contracts';

/*
 * An answer that is a bus payload as stored (a finding is the data of `finding.reported` v1) references its
 * schema in the AsyncAPI document by name, `#/components/schemas/<Name>`, and buildOpenApiDocument copies that
 * schema and the ones it references in - converted to OpenAPI 3.0 - so the HTTP and bus descriptions are one.
 */

const REF = '#/components/schemas/';

/** A reference to a bus payload's schema, for an answer or a property that holds one as is. */
export function busPayloadSchema(name: string, description: string): { allOf: Array<{ $ref: string }>; description: string } {
  return { allOf: [{ $ref: `${REF}${name}` }], description };
}

const isNull = (schema: unknown): boolean => typeof schema === 'object' && schema !== null && (schema as { type?: unknown }).type === 'null';

/**
 * A schema as the AsyncAPI document writes it (JSON Schema draft 7) in OpenAPI 3.0's dialect: a null
 * alternative (`anyOf: [X, {type: null}]`) becomes `nullable` (beside an `allOf` for a reference, as
 * @nestjs/swagger writes it), a numeric `exclusiveMinimum`/`exclusiveMaximum` the bound with the boolean.
 */
export function toOpenApi30(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toOpenApi30);
  if (schema === null || typeof schema !== 'object') return schema;
  const { anyOf, ...rest } = schema as Record<string, unknown>;
  if (Array.isArray(anyOf) && anyOf.length === 2 && anyOf.some(isNull)) {
    const other = toOpenApi30(anyOf.find((alternative) => !isNull(alternative))) as Record<string, unknown>;
    const base = toOpenApi30(rest) as Record<string, unknown>;
    return typeof other.$ref === 'string' ? { ...base, nullable: true, allOf: [other] } : { ...base, ...other, nullable: true };
  }
  const out: Record<string, unknown> = anyOf === undefined ? {} : { anyOf: toOpenApi30(anyOf) };
  for (const [key, value] of Object.entries(rest)) {
    if ((key === 'exclusiveMinimum' || key === 'exclusiveMaximum') && typeof value === 'number') {
      out[key === 'exclusiveMinimum' ? 'minimum' : 'maximum'] = value;
      out[key] = true;
    } else if (key === 'properties' && value !== null && typeof value === 'object') {
      out.properties = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, toOpenApi30(sub)]));
    } else {
      out[key] = typeof value === 'object' ? toOpenApi30(value) : value;
    }
  }
  return out;
}

/** Every payload schema of the AsyncAPI document, in OpenAPI 3.0's dialect, by its name. */
export function busSchemas(): Record<string, unknown> {
  const bus = buildAsyncApiDocument().components.schemas as Record<string, unknown>;
  return Object.fromEntries(Object.entries(bus).map(([name, schema]) => [name, toOpenApi30(schema)]));
}

/**
 * Adds to `schemas` every named schema the document references and does not define, from the first of
 * `libraries` that has it (each asked only when a name is still missing), and the ones those reference.
 * Names the document defines itself are left alone; a name no library has is left for the validator.
 */
export function addReferencedSchemas(document: unknown, schemas: Record<string, unknown>, libraries: ReadonlyArray<() => Readonly<Record<string, unknown>>>): void {
  const loaded: Array<Readonly<Record<string, unknown>>> = [];
  const missing = (): string[] => [...new Set([...JSON.stringify(document).matchAll(/"#\/components\/schemas\/([A-Za-z0-9_]+)"/g)].map((m) => m[1]!))].filter((name) => !(name in schemas));
  for (let names = missing(); names.length > 0; names = missing()) {
    let added = 0;
    for (const name of names) {
      for (let i = 0; i < libraries.length && !(name in schemas); i++) {
        const library = (loaded[i] ??= libraries[i]!());
        if (name in library) {
          schemas[name] = library[name];
          added += 1;
        }
      }
    }
    if (added === 0) return;
  }
}
