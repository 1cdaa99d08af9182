import { plainToInstance } from 'class-transformer';
import { getMetadataStorage } from 'class-validator';
import { ID_PATTERN, MAX_ID_LENGTH, SUITE_KEY_PATTERN, TIMESTAMP_PATTERN, TOKEN_PATTERN } from './limits';
import type { Direction } from './message-definition';
import { EvalMetricsCoreV1Dto, MAX_EXTRA_METRICS, METRIC_KEY_PATTERN } from './messages/metrics';
import { ResultRecordedV1Dto } from './messages/result-recorded.v1.message';

/*
 * JSON Schemas (draft-07, the AsyncAPI schema dialect) generated from the class-validator metadata of the
 * message DTOs, so the AsyncAPI document cannot drift from what the decoder checks. Every constraint name of
 * the contract vocabulary maps to a schema here; a constraint, or a property, this converter does not know
 * stops the generation (a message version can never be published with a hole in its schema).
 *
 * The schemas describe each field on its own. Cross-field invariants (`notRunId`, `uniqueCaseId`,
 * `equalsPassedOverN`...) are beyond JSON Schema and stay in the decoder; so a payload that a schema accepts
 * may still be refused, but one that the decoder accepts always matches its schema (a spec checks both).
 */

export type JsonSchema = { [keyword: string]: unknown };

export class SchemaGenerationError extends Error {
  override readonly name = 'SchemaGenerationError';
}

/** `x-max-utf8-bytes`: the UTF-8 byte limit JSON Schema cannot express (`maxLength` counts characters). */
export const MAX_UTF8_BYTES_KEYWORD = 'x-max-utf8-bytes';

type ValidationMetadata = ReturnType<ReturnType<typeof getMetadataStorage>['getTargetValidationMetadatas']>[number];

type ConstraintSchema = (constraints: readonly unknown[]) => JsonSchema;

/** An id (ID_PATTERN). */
export const idSchema = (): JsonSchema => ({ type: 'string', minLength: 1, maxLength: MAX_ID_LENGTH, pattern: ID_PATTERN.source });

/** One entry per constraint name of docs/contracts.md's vocabulary (validation/constraints.ts and class-validator's). */
const CONSTRAINTS: Readonly<Record<string, ConstraintSchema>> = {
  isSafeId: idSchema,
  isSuiteKey: () => ({ type: 'string', minLength: 1, maxLength: 128, pattern: SUITE_KEY_PATTERN.source }),
  isToken: () => ({ type: 'string', minLength: 1, maxLength: 64, pattern: TOKEN_PATTERN.source }),
  // The pattern is the decoder's own; `format` tells generic tools it is a date-time. The calendar check
  // (no 31 February) is the decoder's.
  isTimestamp: () => ({ type: 'string', format: 'date-time', pattern: TIMESTAMP_PATTERN.source }),
  isCount: ([min, max]) => ({ type: 'integer', minimum: min ?? 0, maximum: max ?? Number.MAX_SAFE_INTEGER }),
  isNumberInRange: ([min, max]) => ({ type: 'number', minimum: min, maximum: max }),
  isNonNegativeNumber: () => ({ type: 'number', minimum: 0 }),
  isConfidenceLevel: () => ({ type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 }),
  // Code points never outnumber UTF-8 bytes, so maxLength is a sound (looser) bound for generic validators.
  maxUtf8Bytes: ([max]) => ({ type: 'string', maxLength: max, [MAX_UTF8_BYTES_KEYWORD]: max }),
  isIn: ([values]) => {
    const list = values as readonly unknown[];
    return list.every((v) => typeof v === 'string') ? { type: 'string', enum: [...list] } : { enum: [...list] };
  },
  isString: () => ({ type: 'string' }),
  isBoolean: () => ({ type: 'boolean' }),
  isObject: () => ({ type: 'object' }),
  isArray: () => ({ type: 'array' }),
  arrayMaxSize: ([max]) => ({ maxItems: max }),
  arrayMinSize: ([min]) => ({ minItems: min }),
};

/** The constraint names this converter knows: a DTO using any other cannot get a schema. */
export const KNOWN_CONSTRAINTS: readonly string[] = Object.keys(CONSTRAINTS);

/** The MetricValue rules of messages/metrics.ts (ids, numbers, booleans, null, small lists and maps of them). */
export const METRIC_VALUE_SCHEMA: JsonSchema = {
  description:
    'An extra metric: a finite number, a boolean, null, an id (no free text, D1), or a list or map of those, ' +
    'at most 100 items each and 4 levels deep.',
  anyOf: [
    { type: 'number' },
    { type: 'boolean' },
    { type: 'null' },
    idSchema(),
    { type: 'array', maxItems: 100, items: { $ref: '#/components/schemas/MetricValue' } },
    {
      type: 'object',
      maxProperties: 100,
      propertyNames: { pattern: METRIC_KEY_PATTERN.source },
      additionalProperties: { $ref: '#/components/schemas/MetricValue' },
    },
  ],
};

/**
 * Properties declared `@Allow()` are free-form in the DTO and checked by a definition's `extraChecks`; their
 * schema is written here, next to the rules it restates. An `@Allow()` property missing from this table
 * stops the generation.
 */
const FREE_FORM: ReadonlyMap<Function, Readonly<Record<string, (ctx: SchemaContext) => JsonSchema>>> = new Map([
  [
    ResultRecordedV1Dto as Function,
    {
      metrics: (ctx: SchemaContext): JsonSchema => {
        const core = ctx.objectSchema(EvalMetricsCoreV1Dto, 'outbound');
        ctx.define('MetricValue', METRIC_VALUE_SCHEMA);
        return {
          type: 'object',
          description:
            'The four named metrics are always there (GT6); more keys (lowercase, at most 64 extras) may be added ' +
            'without a new version.',
          required: core['required'],
          properties: core['properties'],
          propertyNames: { pattern: METRIC_KEY_PATTERN.source },
          maxProperties: (core['required'] as unknown[]).length + MAX_EXTRA_METRICS,
          additionalProperties: { $ref: '#/components/schemas/MetricValue' },
        };
      },
    },
  ],
]);

/** Collects the named schemas (components.schemas) that payload schemas refer to. */
export class SchemaContext {
  readonly schemas: Record<string, JsonSchema> = {};

  /** Adds a named schema; the same name must always mean the same schema. */
  define(name: string, schema: JsonSchema): { $ref: string } {
    const existing = this.schemas[name];
    if (existing !== undefined && JSON.stringify(existing) !== JSON.stringify(schema)) {
      throw new SchemaGenerationError(`two different schemas are named ${name}: rename one of the DTO classes`);
    }
    this.schemas[name] = schema;
    return { $ref: `#/components/schemas/${name}` };
  }

  /** A `$ref` to the schema of `dto`, defined under the class name without its `Dto` suffix. */
  refTo(dto: new () => object, direction: Direction): { $ref: string } {
    return this.define(schemaNameOf(dto), this.objectSchema(dto, direction));
  }

  /**
   * The object schema of one DTO. Inbound objects refuse unknown properties (as the decoder does); outbound
   * ones leave them open, because their consumers must read them tolerantly (docs/contracts.md).
   */
  objectSchema(dto: new () => object, direction: Direction): JsonSchema {
    const byProperty = new Map<string, ValidationMetadata[]>();
    for (const m of getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false)) {
      byProperty.set(m.propertyName, [...(byProperty.get(m.propertyName) ?? []), m]);
    }
    if (byProperty.size === 0) {
      throw new SchemaGenerationError(`${dto.name} declares no validated property: it has no schema`);
    }
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const [property, metas] of byProperty) {
      const p = this.propertySchema(dto, property, metas, direction);
      properties[property] = p.schema;
      if (p.required) required.push(property);
    }
    return {
      type: 'object',
      ...(direction === 'inbound' ? { additionalProperties: false } : {}),
      required,
      properties,
    };
  }

  private propertySchema(
    dto: new () => object,
    property: string,
    metas: readonly ValidationMetadata[],
    direction: Direction,
  ): { schema: JsonSchema; required: boolean } {
    const where = `${dto.name}.${property}`;
    const { required, nullable } = presence(metas);
    let schema: JsonSchema;
    if (metas.some((m) => m.type === 'whitelistValidation')) {
      const free = FREE_FORM.get(dto)?.[property];
      if (free === undefined) throw new SchemaGenerationError(`${where} is @Allow() (free-form) and has no schema in asyncapi-schema.ts`);
      schema = free(this);
    } else {
      const parts: JsonSchema[] = [];
      const itemParts: JsonSchema[] = [];
      for (const m of metas) {
        if (m.validateIf !== undefined) throw new SchemaGenerationError(`${where}: a per-constraint validateIf is not supported`);
        if (m.type === 'customValidation') {
          const name = m.name ?? '';
          const convert = CONSTRAINTS[name];
          if (convert === undefined) throw new SchemaGenerationError(`${where}: constraint ${name || '(unnamed)'} has no JSON Schema mapping`);
          (m.each ? itemParts : parts).push(convert(m.constraints ?? []));
        } else if (m.type === 'nestedValidation') {
          const nested = nestedClass(dto, property, m.each === true);
          if (nested === undefined) throw new SchemaGenerationError(`${where}: @ValidateNested without a @Type class`);
          (m.each ? itemParts : parts).push(this.refTo(nested, direction));
        } else if (m.type !== 'conditionalValidation') {
          throw new SchemaGenerationError(`${where}: validation type ${m.type} has no JSON Schema mapping`);
        }
      }
      if (itemParts.length > 0) parts.push({ type: 'array', items: merge(itemParts, where) });
      if (parts.length === 0) throw new SchemaGenerationError(`${where} has no constraint: it would accept anything`);
      schema = merge(parts, where);
    }
    return { schema: nullable ? { anyOf: [schema, { type: 'null' }] } : schema, required };
  }
}

/** `RunRequestedV1Dto` -> `RunRequestedV1`. */
export function schemaNameOf(dto: Function): string {
  return dto.name.endsWith('Dto') ? dto.name.slice(0, -'Dto'.length) : dto.name;
}

/**
 * Whether a property must be present and may be null, read by asking its @IsOptional / @ValidateIf
 * conditions what class-validator will ask them: validation is skipped when any condition answers false.
 */
function presence(metas: readonly ValidationMetadata[]): { required: boolean; nullable: boolean } {
  const conditions = metas
    .filter((m) => m.type === 'conditionalValidation')
    .map((m) => (m.constraints?.[0] as ((o: object, v: unknown) => boolean) | undefined) ?? (() => true));
  const skipped = (value: unknown): boolean => {
    const object = value === undefined ? {} : { [metas[0]?.propertyName ?? '']: value };
    return conditions.some((c) => !c(object, value));
  };
  return { required: !skipped(undefined), nullable: skipped(null) };
}

/** The class of a @Type(() => X) property, found through class-transformer's public API. */
function nestedClass(dto: new () => object, property: string, each: boolean): (new () => object) | undefined {
  const probe = plainToInstance(dto, { [property]: each ? [{}] : {} }) as Record<string, unknown>;
  const value = each ? (probe[property] as unknown[] | undefined)?.[0] : probe[property];
  const ctor = (value as object | undefined)?.constructor;
  return ctor !== undefined && ctor !== Object ? (ctor as new () => object) : undefined;
}

/** Combines the schemas of several constraints on one value; a keyword two of them set differently is an error. */
function merge(parts: readonly JsonSchema[], where: string): JsonSchema {
  const refs = parts.filter((p) => '$ref' in p);
  const plain = parts.filter((p) => !('$ref' in p));
  const out: JsonSchema = {};
  for (const part of plain) {
    for (const [key, value] of Object.entries(part)) {
      if (key in out && JSON.stringify(out[key]) !== JSON.stringify(value)) {
        throw new SchemaGenerationError(`${where}: constraints disagree on ${key}`);
      }
      out[key] = value;
    }
  }
  if (refs.length === 0) return out;
  // A nested DTO: `{type: object}` from @IsObject adds nothing to the referenced object schema.
  const rest = Object.keys(out).filter((k) => !(k === 'type' && out[k] === 'object'));
  if (refs.length === 1 && rest.length === 0) return refs[0]!;
  return { allOf: [...refs, ...(rest.length > 0 ? [out] : [])] };
}
