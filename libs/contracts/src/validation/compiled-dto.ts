import { getMetadataStorage, ValidationTypes, type ValidationArguments } from 'class-validator';
import type { DtoValidation, DtoValidationOptions } from './dto-validation';

/*
 * A check compiled from a class-validator DTO's own metadata, for the hot path (issue 15): validating an
 * `evals.run.requested` with 2 000 inline outputs through class-transformer + class-validator built a class
 * instance, a ValidationError and a closure per output and per field (~10% of the ingestion's CPU). The DTO
 * stays the single source of truth: the plan below is read from the decorators, and every constraint is
 * evaluated by calling the very `validate` of its decorator.
 *
 * It is an accelerator, never a second judge: it answers only "valid, and here is the value" and returns
 * null for anything else - an invalid payload, an unknown field, a shape it does not handle - after which
 * the caller runs the full class-validator path, so every refusal keeps the same issues and error codes.
 * Handled shapes: flat DTOs whose properties carry only synchronous custom constraints (every built-in
 * decorator of class-validator is one) and `@IsOptional`, with primitive values; plus properties that are
 * arrays of such a flat DTO (`@IsArray @ArrayMaxSize @ValidateNested({ each: true }) @Type(...)`).
 */

/** class-transformer's metadata (the package exports no type for its storage module). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const transformerMetadata: any = require('class-transformer/cjs/storage').defaultMetadataStorage;

type Check = (value: unknown, object: Record<string, unknown>) => boolean;

interface FlatProperty {
  readonly name: string;
  readonly optional: boolean;
  readonly checks: readonly Check[];
}

interface ArrayProperty {
  readonly name: string;
  readonly optional: boolean;
  /** The array's own constraints (isArray, arrayMaxSize), evaluated on the array. */
  readonly checks: readonly Check[];
  readonly item: FlatPlan;
}

interface FlatPlan {
  readonly properties: readonly FlatProperty[];
  readonly names: ReadonlySet<string>;
}

interface Plan extends FlatPlan {
  readonly arrays: readonly ArrayProperty[];
  /** Every property in declaration order: the key order of the value class-validator's path returns. */
  readonly order: readonly string[];
}

/** Array constraints that the plan may evaluate on the array itself (anything else: no plan). */
const ARRAY_CONSTRAINTS = new Set(['isArray', 'arrayMaxSize', 'arrayMinSize', 'arrayNotEmpty']);

const plans = new WeakMap<new () => object, Plan | null>();

/**
 * Validates `plain` with the compiled plan of `dto`: the same value `validateDto` returns when the payload is
 * valid, or null - the payload may be invalid, or is of a shape the plan does not cover - meaning "ask
 * validateDto". `plain` must already be known to be a plain object.
 */
export function validateCompiled(dto: new () => object, plain: Record<string, unknown>, options: DtoValidationOptions): DtoValidation | null {
  const plan = planOf(dto);
  if (plan === null) return null;
  const value = checkFlat(plan, plain, options.dropNulls);
  if (value === null) return null;
  for (const array of plan.arrays) {
    const items = plain[array.name];
    if (items === undefined || (items === null && array.optional)) {
      if (!array.optional) return null;
      if (items === null && !options.dropNulls) value[array.name] = null;
      continue;
    }
    if (!Array.isArray(items)) return null;
    for (const check of array.checks) if (!check(items, plain)) return null;
    const out: unknown[] = new Array(items.length);
    for (let i = 0; i < items.length; i++) {
      const item: unknown = items[i];
      if (!isPlainRecord(item)) return null;
      const checked = checkFlat(array.item, item, options.dropNulls);
      if (checked === null) return null;
      out[i] = checked;
    }
    value[array.name] = out;
  }
  if (plan.arrays.length === 0) return { ok: true, value };
  const ordered: Record<string, unknown> = {};
  for (const name of plan.order) if (name in value) ordered[name] = value[name];
  return { ok: true, value: ordered };
}

/** One flat object: known keys only, primitive values, every constraint true. The copy, or null. */
function checkFlat(plan: FlatPlan, plain: Record<string, unknown>, dropNulls: boolean): Record<string, unknown> | null {
  // Unknown keys (refused or stripped by the full path, forbidden ones included) are the full path's to report.
  for (const key in plain) if (!plan.names.has(key)) return null;
  const out: Record<string, unknown> = {};
  for (const p of plan.properties) {
    const v = plain[p.name];
    if (v === undefined || v === null) {
      if (!p.optional) return null;
      if (v === null && !dropNulls) out[p.name] = null;
      continue;
    }
    if (typeof v === 'object' || typeof v === 'function') return null;
    for (const check of p.checks) if (!check(v, plain)) return null;
    out[p.name] = v;
  }
  return out;
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function planOf(dto: new () => object): Plan | null {
  let plan = plans.get(dto);
  if (plan === undefined) {
    try {
      plan = compile(dto);
    } catch {
      plan = null;
    }
    plans.set(dto, plan);
  }
  return plan;
}

interface Meta {
  readonly type: string;
  readonly name?: string;
  readonly propertyName: string;
  readonly each?: boolean;
  readonly always?: boolean;
  readonly groups?: string[];
  readonly constraints?: any[];
  readonly constraintCls?: new () => unknown;
  readonly validateIf?: unknown;
}

function metadataOf(dto: new () => object): Map<string, Meta[]> {
  const all = getMetadataStorage().getTargetValidationMetadatas(dto, '', false, false) as unknown as Meta[];
  const byProperty = new Map<string, Meta[]>();
  for (const m of all) byProperty.set(m.propertyName, [...(byProperty.get(m.propertyName) ?? []), m]);
  return byProperty;
}

/** The plan of a DTO with flat properties and arrays of flat DTOs; null for any other shape. */
function compile(dto: new () => object): Plan | null {
  const properties: FlatProperty[] = [];
  const arrays: ArrayProperty[] = [];
  for (const [name, metas] of metadataOf(dto)) {
    if (transformed(dto, name)) {
      const nested = metas.find((m) => m.type === ValidationTypes.NESTED_VALIDATION);
      const typeMeta = transformerMetadata.findTypeMetadata(dto, name);
      if (!nested || !nested.each || !typeMeta || typeMeta.options?.discriminator) return null;
      const itemClass = typeMeta.typeFunction() as new () => object;
      const item = compileFlat(itemClass);
      if (item === null) return null;
      const own = metas.filter((m) => m !== nested);
      if (own.some((m) => m.type === ValidationTypes.CUSTOM_VALIDATION && !ARRAY_CONSTRAINTS.has(m.name ?? ''))) return null;
      const rule = propertyRule(name, own);
      if (rule === null) return null;
      arrays.push({ ...rule, item });
    } else {
      const rule = propertyRule(name, metas);
      if (rule === null) return null;
      properties.push(rule);
    }
  }
  const order = [...metadataOf(dto).keys()];
  return { properties, arrays, order, names: new Set(order) };
}

function compileFlat(dto: new () => object): FlatPlan | null {
  const properties: FlatProperty[] = [];
  for (const [name, metas] of metadataOf(dto)) {
    if (transformed(dto, name)) return null;
    const rule = propertyRule(name, metas);
    if (rule === null) return null;
    properties.push(rule);
  }
  return { properties, names: new Set(properties.map((p) => p.name)) };
}

/** Whether class-transformer does anything to the property (a @Type, @Transform, @Expose or @Exclude). */
function transformed(dto: new () => object, name: string): boolean {
  const s = transformerMetadata;
  return (
    s.getExposedMetadatas(dto).some((m: { propertyName?: string }) => m.propertyName === undefined) ||
    s.getExcludedMetadatas(dto).some((m: { propertyName?: string }) => m.propertyName === undefined) ||
    s.findTypeMetadata(dto, name) !== undefined ||
    s.findTransformMetadatas(dto, name, 1 /* PLAIN_TO_CLASS */).length > 0 ||
    s.findExposeMetadata(dto, name) !== undefined ||
    s.findExcludeMetadata(dto, name) !== undefined
  );
}

/** Custom constraints and @IsOptional only, synchronous, ungrouped, not `each`; anything else: null. */
function propertyRule(name: string, metas: readonly Meta[]): FlatProperty | null {
  let optional = false;
  const checks: Check[] = [];
  for (const m of metas) {
    if ((m.groups?.length ?? 0) > 0 || m.always || m.each || m.validateIf) return null;
    if (m.type === ValidationTypes.CONDITIONAL_VALIDATION && m.name === 'isOptional') {
      optional = true;
    } else if (m.type === ValidationTypes.CUSTOM_VALIDATION && m.constraintCls) {
      const constraints = getMetadataStorage().getTargetValidatorConstraints(m.constraintCls);
      if (constraints.length === 0 || constraints.some((c) => c.async)) return null;
      for (const c of constraints) {
        const instance = c.instance as { validate(value: unknown, args: ValidationArguments): unknown };
        checks.push((value, object) => instance.validate(value, { targetName: '', property: name, object, value, constraints: m.constraints ?? [] }) === true);
      }
    } else {
      return null;
    }
  }
  return { name, optional, checks };
}
