// class-transformer's @Type reads design-time metadata, so the polyfill must load before the classes.
import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsObject, ValidateNested } from 'class-validator';
import { isSafeId } from '../limits';
import { IsConfidenceLevel, IsCount, IsNumberInRange } from '../validation/constraints';
import { type FieldIssue, isPlainObject, validateDto } from '../validation/dto-validation';

/**
 * Extra metric values: numbers, booleans, null, identifier-like strings (ID_PATTERN: a scorer version, a
 * model pin) and small arrays/objects of those. Free text is refused on purpose: metrics travel to
 * other modules, and a free-text field is where a candidate output could slip into an event (D1).
 */
export type MetricValue =
  | number
  | boolean
  | null
  | string
  | readonly MetricValue[]
  | { readonly [key: string]: MetricValue };

// A type alias, not an interface: only aliases fit the MetricValue index signature of EvalMetricsV1.
export type IntervalV1 = {
  readonly lower: number;
  readonly upper: number;
  /** The confidence level, e.g. 0.95. */
  readonly level: number;
};

/**
 * The metrics of an EvalResult. The four named ones are always there (GT6: a rate always travels with its
 * denominator and interval); more keys may be added without a new version.
 */
export interface EvalMetricsV1 {
  readonly pass_rate: number;
  readonly passed: number;
  readonly n: number;
  readonly pass_rate_ci: IntervalV1;
  readonly [key: string]: MetricValue;
}

export const METRIC_KEY_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;
export const MAX_EXTRA_METRICS = 64;
const MAX_METRIC_ITEMS = 100;
const MAX_METRIC_DEPTH = 4;

export class IntervalV1Dto implements IntervalV1 {
  @IsNumberInRange(0, 1)
  lower!: number;

  @IsNumberInRange(0, 1)
  upper!: number;

  @IsConfidenceLevel()
  level!: number;
}

export class EvalMetricsCoreV1Dto {
  @IsNumberInRange(0, 1)
  pass_rate!: number;

  @IsCount()
  passed!: number;

  // A run scores at least one case: suites refuse empty case lists.
  @IsCount(1)
  n!: number;

  @IsObject()
  @ValidateNested()
  @Type(() => IntervalV1Dto)
  pass_rate_ci!: IntervalV1Dto;
}

const CORE_KEYS = new Set(['pass_rate', 'passed', 'n', 'pass_rate_ci']);

/** Validates `metrics` at `path`: the core through its DTO, the extra keys by the MetricValue rules. */
export function checkMetrics(value: unknown, path: string): FieldIssue[] {
  if (!isPlainObject(value)) return [{ field: path, constraint: value === undefined ? 'required' : 'isObject' }];
  const core: Record<string, unknown> = {};
  const issues: FieldIssue[] = [];
  let extras = 0;
  for (const [key, v] of Object.entries(value)) {
    if (CORE_KEYS.has(key)) {
      core[key] = v;
      continue;
    }
    extras += 1;
    // Extra keys are never shown in a path: they are not part of the schema, so they are payload.
    if (!METRIC_KEY_PATTERN.test(key)) issues.push({ field: path, constraint: 'metricKey' });
    else if (!isMetricValue(v, 1)) issues.push({ field: path, constraint: 'metricValue' });
  }
  if (extras > MAX_EXTRA_METRICS) issues.push({ field: path, constraint: 'maxExtraMetrics' });
  const checked = validateDto(EvalMetricsCoreV1Dto, core, path, { unknownFields: 'refuse', dropNulls: false });
  if (!checked.ok) issues.push(...checked.issues);
  return issues;
}

function isMetricValue(v: unknown, depth: number): boolean {
  if (v === null || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v);
  if (typeof v === 'string') return isSafeId(v);
  if (depth >= MAX_METRIC_DEPTH) return false;
  if (Array.isArray(v)) return v.length <= MAX_METRIC_ITEMS && v.every((x) => isMetricValue(x, depth + 1));
  if (isPlainObject(v)) {
    const entries = Object.entries(v);
    return (
      entries.length <= MAX_METRIC_ITEMS &&
      entries.every(([k, x]) => METRIC_KEY_PATTERN.test(k) && isMetricValue(x, depth + 1))
    );
  }
  return false;
}

/** |a - b| within a rounding tolerance: the producer computes these with the same doubles. */
export function close(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-9;
}

export function checkIntervalContains(ci: IntervalV1, estimate: number, path: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (ci.lower > ci.upper) issues.push({ field: path, constraint: 'lowerNotAboveUpper' });
  else if (estimate < ci.lower - 1e-9 || estimate > ci.upper + 1e-9) {
    issues.push({ field: path, constraint: 'containsEstimate' });
  }
  return issues;
}
