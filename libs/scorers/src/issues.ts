/**
 * Config-validation issue codes and the small option readers every scorer shares (S4: a bad config is
 * refused when the suite version is created, with a clear error naming the field).
 *
 * Messages may quote the scorer spec (it is suite configuration), but never a candidate output (D1) and
 * never the case's `expected` value (golden fixture content, D4): they name the field and the rule.
 */
import type { ConfigValidation, ScorerConfigIssue } from './scorer';

export const ScorerIssueCode = {
  /** The scorer spec is not an object (or cannot be read). Field: `` (the spec itself). */
  SPEC_INVALID: 'SCORER_SPEC_INVALID',
  /** `type` is missing, not a string, or names no registered scorer. Field: `type`. */
  UNKNOWN: 'SCORER_UNKNOWN',
  /** An option key the scorer does not take (options sit flat next to `type`). */
  OPTION_UNKNOWN: 'SCORER_OPTION_UNKNOWN',
  /** An option has the wrong type or an out-of-range value. */
  OPTION_INVALID: 'SCORER_OPTION_INVALID',
  /** A required option is absent. */
  OPTION_MISSING: 'SCORER_OPTION_MISSING',
  /** The scorer needs the case's `expected` and the case has none. Field: `expected`. */
  EXPECTED_MISSING: 'SCORER_EXPECTED_MISSING',
  /** The case's `expected` has a shape this scorer cannot use. Field: `expected` (or a path below it). */
  EXPECTED_INVALID: 'SCORER_EXPECTED_INVALID',
  /** The pattern uses a construct the linear-time engine does not implement (S2). Field: `pattern`. */
  REGEX_UNSUPPORTED: 'REGEX_UNSUPPORTED',
  /** The pattern is malformed (syntax error, repeat count over 1000, program too large). Field: `pattern`. */
  REGEX_INVALID: 'REGEX_INVALID',
} as const;

export type ScorerIssueCode = (typeof ScorerIssueCode)[keyof typeof ScorerIssueCode];

export function issue(code: ScorerIssueCode, field: string, message: string): ScorerConfigIssue {
  return { code, field, message };
}

export function refuse<C>(issues: readonly ScorerConfigIssue[]): ConfigValidation<C> {
  return { ok: false, issues };
}

/** Quotes a piece of configuration for a message, clamped so messages stay short. */
export function quote(value: string, max = 60): string {
  const clamped = value.length > max ? `${value.slice(0, max)}...` : value;
  return JSON.stringify(clamped);
}

/** A short description of a value's type for messages (never the value itself). */
export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'a boolean';
    case 'object':
      return 'a mapping';
    default:
      return typeof value;
  }
}

/** Refuses every key of `raw` that is not in `allowed`, naming the accepted ones. */
export function checkOptionKeys(
  scorer: string,
  raw: Readonly<Record<string, unknown>>,
  allowed: readonly string[],
  issues: ScorerConfigIssue[],
): void {
  for (const key of Object.keys(raw)) {
    if (allowed.includes(key)) continue;
    const accepted = allowed.length === 0 ? 'it takes no options' : `it takes: ${allowed.join(', ')}`;
    const hint =
      key === 'options' ? ' (options sit flat next to `type`, e.g. `{type: regex, pattern: "^a", flags: i}`)' : '';
    issues.push(
      issue(
        ScorerIssueCode.OPTION_UNKNOWN,
        key,
        `scorer \`${scorer}\` does not take the option ${quote(key)}; ${accepted}${hint}`,
      ),
    );
  }
}

/** An option counts as absent when its key is missing or its value is `undefined` (YAML `null` is a value). */
export function isAbsent(raw: Readonly<Record<string, unknown>>, key: string): boolean {
  return !Object.prototype.hasOwnProperty.call(raw, key) || raw[key] === undefined;
}

export function readBoolean(
  scorer: string,
  raw: Readonly<Record<string, unknown>>,
  key: string,
  fallback: boolean,
  issues: ScorerConfigIssue[],
): boolean {
  if (isAbsent(raw, key)) return fallback;
  const value = raw[key];
  if (typeof value === 'boolean') return value;
  issues.push(
    issue(
      ScorerIssueCode.OPTION_INVALID,
      key,
      `scorer \`${scorer}\`: \`${key}\` must be true or false, got ${describeType(value)}`,
    ),
  );
  return fallback;
}

export function readEnum<T extends string>(
  scorer: string,
  raw: Readonly<Record<string, unknown>>,
  key: string,
  allowed: readonly T[],
  fallback: T,
  issues: ScorerConfigIssue[],
): T {
  if (isAbsent(raw, key)) return fallback;
  const value = raw[key];
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  const got = typeof value === 'string' ? quote(value) : describeType(value);
  issues.push(
    issue(
      ScorerIssueCode.OPTION_INVALID,
      key,
      `scorer \`${scorer}\`: \`${key}\` must be one of ${allowed.join(', ')}, got ${got}`,
    ),
  );
  return fallback;
}

/** A finite number option; `undefined` when absent or invalid (an issue is recorded when invalid). */
export function readFiniteNumber(
  scorer: string,
  raw: Readonly<Record<string, unknown>>,
  key: string,
  issues: ScorerConfigIssue[],
): number | undefined {
  if (isAbsent(raw, key)) return undefined;
  const value = raw[key];
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  issues.push(
    issue(
      ScorerIssueCode.OPTION_INVALID,
      key,
      `scorer \`${scorer}\`: \`${key}\` must be a finite number, got ${describeType(value)}` +
        (typeof value === 'string' ? ' (write it unquoted in YAML)' : ''),
    ),
  );
  return undefined;
}
