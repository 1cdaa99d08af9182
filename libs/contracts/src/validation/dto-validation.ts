import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, type ValidationError, ValidationTypes, validateSync } from 'class-validator';

/**
 * One problem in a payload: a field path (`data.outputs[2].case_id`) and a constraint name from a fixed
 * vocabulary. Never a value: these end up in dead-letter reasons and logs (D1).
 */
export interface FieldIssue {
  readonly field: string;
  readonly constraint: string;
}

/**
 * `refuse`: an undeclared field is an issue (inbound data, whose schema we own, and everything we emit).
 * `strip`: undeclared fields are dropped (decoding our own outbound messages: a tolerant reader, so an
 * additive change never dead-letters in a consumer that has not been redeployed yet).
 */
export type UnknownFieldPolicy = 'refuse' | 'strip';

export type DtoValidation =
  | { readonly ok: true; readonly value: Record<string, unknown> }
  | { readonly ok: false; readonly issues: readonly FieldIssue[] };

export interface DtoValidationOptions {
  readonly unknownFields: UnknownFieldPolicy;
  /** Inbound producers often serialise an absent optional field as `null`; it is then dropped. */
  readonly dropNulls: boolean;
}

/** Deeper than any payload of ours; checked without recursion before anything walks the tree. */
export const MAX_DATA_DEPTH = 16;

/** Keys that reach for prototypes; refused anywhere in a payload whatever the policy. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

export function joinPath(parent: string, property: string | number): string {
  if (typeof property === 'number' || /^\d+$/.test(property)) return `${parent}[${property}]`;
  return parent === '' ? property : `${parent}.${property}`;
}

/**
 * Validates `plain` against a class-validator DTO and returns a plain copy (only declared fields when
 * stripping). Never throws on any JSON value.
 */
export function validateDto(
  dto: new () => object,
  plain: unknown,
  path: string,
  options: DtoValidationOptions,
): DtoValidation {
  if (plain === undefined) return { ok: false, issues: [{ field: path, constraint: 'required' }] };
  if (!isPlainObject(plain)) return { ok: false, issues: [{ field: path, constraint: 'isObject' }] };
  const depthIssue = checkDepth(plain, path);
  if (depthIssue !== null) return { ok: false, issues: [depthIssue] };
  const forbidden = findForbiddenKeys(plain, path);
  if (forbidden.length > 0) return { ok: false, issues: forbidden };

  const instance = plainToInstance(dto, plain, { enableImplicitConversion: false });
  const errors = validateSync(instance, {
    whitelist: true,
    forbidNonWhitelisted: options.unknownFields === 'refuse',
    forbidUnknownValues: true,
    dismissDefaultMessages: true,
    validationError: { target: false, value: false },
  });
  const issues: FieldIssue[] = [];
  flatten(errors, path, plain, issues);
  const lists = listsInLists(dto, plain, path);
  if (lists.length > 0) {
    // What class-validator found inside such an item is noise, as for any value of the wrong shape.
    const inside = (field: string) => lists.some((l) => field.startsWith(`${l.field}[`) || field.startsWith(`${l.field}.`));
    return { ok: false, issues: dedupe([...issues.filter((i) => !inside(i.field)), ...lists]) };
  }
  if (issues.length > 0) return { ok: false, issues: dedupe(issues) };
  return { ok: true, value: toPlain(instance, options.dropNulls) as Record<string, unknown> };
}

/**
 * Lists found where a list of objects is expected (`outputs: [[]]`). class-validator's `@ValidateNested({ each })`
 * validates a list inside the list as a list of the same objects in its own right, so `[[]]` - and `[[{...}]]` -
 * passed as valid and failed later with an internal error. Each such item is refused as its own field.
 */
function listsInLists(dto: new () => object, plain: Record<string, unknown>, path: string): FieldIssue[] {
  const out: FieldIssue[] = [];
  for (const m of getMetadataStorage().getTargetValidationMetadatas(dto, '', false, false)) {
    if (m.type !== ValidationTypes.NESTED_VALIDATION || !m.each) continue;
    const items = plain[m.propertyName];
    if (!Array.isArray(items)) continue;
    items.forEach((item, i) => {
      if (Array.isArray(item)) out.push({ field: joinPath(joinPath(path, m.propertyName), i), constraint: 'isObject' });
    });
  }
  return out;
}

function flatten(errors: readonly ValidationError[], parentPath: string, parentPlain: unknown, out: FieldIssue[]): void {
  for (const error of errors) {
    const constraints = Object.keys(error.constraints ?? {});
    if (constraints.includes('whitelistValidation')) {
      // The unknown key itself is producer-controlled text: report where it is, never what it is.
      out.push({ field: parentPath, constraint: 'unknownField' });
      continue;
    }
    const path = joinPath(parentPath, error.property);
    const value = childOf(parentPlain, error.property);
    if (constraints.length > 0) {
      if (value === undefined) {
        out.push({ field: path, constraint: 'required' });
      } else {
        for (const c of constraints) out.push({ field: path, constraint: c === 'nestedValidation' ? 'isObject' : c });
      }
    }
    // Children of a value that is not even the right container are noise (`run[0]` when `run` is a list).
    const wrongShape = constraints.includes('isObject') || constraints.includes('isArray');
    if (!wrongShape && error.children !== undefined && error.children.length > 0) {
      flatten(error.children, path, value, out);
    }
  }
}

function childOf(parent: unknown, property: string): unknown {
  if (Array.isArray(parent)) return /^\d+$/.test(property) ? parent[Number(property)] : undefined;
  if (isPlainObject(parent) && Object.prototype.hasOwnProperty.call(parent, property)) return parent[property];
  return undefined;
}

function dedupe(issues: readonly FieldIssue[]): FieldIssue[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const key = `${i.field}\u0000${i.constraint}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Iterative, so a hostile 100,000-level nesting cannot overflow the stack of anything that walks it later. */
export function checkDepth(root: unknown, path: string, max = MAX_DATA_DEPTH): FieldIssue | null {
  const stack: Array<[unknown, number]> = [[root, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop() as [unknown, number];
    if (typeof value !== 'object' || value === null) continue;
    if (depth > max) return { field: path, constraint: 'maxDepth' };
    for (const child of Object.values(value)) stack.push([child, depth + 1]);
  }
  return null;
}

/** Reported at the payload root: the path to a nested one would spell out producer-chosen keys. */
function findForbiddenKeys(root: unknown, path: string): FieldIssue[] {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value !== 'object' || value === null) continue;
    for (const key of Object.keys(value)) {
      if (FORBIDDEN_KEYS.has(key)) return [{ field: path, constraint: 'forbiddenKey' }];
      stack.push((value as Record<string, unknown>)[key]);
    }
  }
  return [];
}

/** A plain-object copy of a validated DTO (or any JSON value): class instances become plain objects. */
export function toPlain(value: unknown, dropNulls: boolean): unknown {
  if (Array.isArray(value)) return value.map((v) => toPlain(v, dropNulls));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined || (dropNulls && v === null)) continue;
    out[key] = toPlain(v, dropNulls);
  }
  return out;
}
