/**
 * Why a suite was refused. Every problem found is reported (not only the first), each naming the file, the
 * field path (`cases[3].scorer.pattern`), the case when there is one, and a line and column when the
 * suite came from YAML.
 */
export interface SuiteError {
  /** A SUITE_ERROR_CODES value, or a scorer config code from @evals/scorers (SCORER_*, REGEX_*). */
  readonly code: string;
  readonly file: string;
  /** Path of the offending field, e.g. `cases[3].scorer.pattern`; '' for the document as a whole. */
  readonly field: string;
  readonly message: string;
  /** The case's id, when the case has a valid one. */
  readonly case_id?: string;
  /** 0-based index in `cases`, matching the `[i]` of `field`. */
  readonly case_index?: number;
  /** 1-based, when the suite was parsed from YAML. */
  readonly line?: number;
  readonly column?: number;
}

export const SUITE_ERROR_CODES = {
  /** The YAML cannot be parsed (with line and column). */
  YAML_SYNTAX: 'YAML_SYNTAX',
  /** Valid YAML that a suite cannot use: an unknown tag, too many alias expansions. */
  YAML_UNSUPPORTED: 'YAML_UNSUPPORTED',
  /** The file is larger than MAX_SUITE_BYTES. */
  SUITE_TOO_LARGE: 'SUITE_TOO_LARGE',
  /** The document is not a mapping. */
  SUITE_NOT_A_MAPPING: 'SUITE_NOT_A_MAPPING',
  FIELD_REQUIRED: 'FIELD_REQUIRED',
  /** A key the format does not define (a typo such as `expect:` would otherwise be silently ignored). */
  FIELD_UNKNOWN: 'FIELD_UNKNOWN',
  /** Wrong type, format or range. */
  FIELD_INVALID: 'FIELD_INVALID',
  /** A value JSON cannot carry (NaN, .inf, binary, timestamps) or nested too deep. */
  VALUE_NOT_JSON: 'VALUE_NOT_JSON',
  /** An integer beyond 2^53, which would silently lose digits. */
  VALUE_IMPRECISE: 'VALUE_IMPRECISE',
  CASES_EMPTY: 'CASES_EMPTY',
  CASES_TOO_MANY: 'CASES_TOO_MANY',
  CASE_ID_DUPLICATE: 'CASE_ID_DUPLICATE',
} as const;

export type SuiteErrorCode = (typeof SUITE_ERROR_CODES)[keyof typeof SUITE_ERROR_CODES];

/** A programming error in a caller of the suite functions (not a problem in a suite's content). */
export class SuiteInputError extends Error {
  override readonly name = 'SuiteInputError';

  constructor(
    readonly code: 'SUITE_VERSIONS_INVALID' | 'SUITE_HASH_INVALID' | 'CANONICAL_JSON_UNSUPPORTED' | 'CASE_INDEX_INVALID',
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}
