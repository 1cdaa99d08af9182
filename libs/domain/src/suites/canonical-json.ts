import { SuiteInputError } from './suite-error';

/**
 * Canonical JSON in the manner of RFC 8785 (JCS): object keys sorted by UTF-16 code units, no whitespace,
 * numbers in ECMAScript's shortest round-trip form (so 1, 1.0 and 1e0 are all `1`, and -0 is `0`),
 * strings escaped as JSON.stringify does, array order kept. Equal values always give equal text, so a hash
 * of it depends on content only, never on formatting, key order or comments.
 *
 * Strings are not Unicode-normalised: two spellings of "é" are different content for an `exact` scorer.
 */
export function canonicalJson(value: unknown): string {
  return write(value, 0);
}

// Suites are refused past 64 levels (MAX_VALUE_DEPTH); this bound only keeps a misuse from overflowing.
const MAX_DEPTH = 256;

function write(value: unknown, depth: number): string {
  if (depth > MAX_DEPTH) throw new SuiteInputError('CANONICAL_JSON_UNSUPPORTED', `nesting deeper than ${MAX_DEPTH}`);
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) {
        throw new SuiteInputError('CANONICAL_JSON_UNSUPPORTED', `${String(value)} has no JSON form`);
      }
      return Object.is(value, -0) ? '0' : JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) return `[${value.map((v) => write(v, depth + 1)).join(',')}]`;
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) {
        throw new SuiteInputError('CANONICAL_JSON_UNSUPPORTED', 'only plain objects, arrays and primitives');
      }
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record)
        .filter((k) => record[k] !== undefined)
        .sort();
      return `{${keys.map((k) => `${JSON.stringify(k)}:${write(record[k], depth + 1)}`).join(',')}}`;
    }
    default:
      throw new SuiteInputError('CANONICAL_JSON_UNSUPPORTED', `a ${typeof value} has no JSON form`);
  }
}
