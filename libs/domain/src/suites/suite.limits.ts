/** Limits of the suite format (docs/suites.md). */

/** 64 MiB of YAML or JSON. */
export const MAX_SUITE_BYTES = 64 * 1024 * 1024;
/** Large enough for a 100 000-case regression suite (bench/pipeline); a suite beyond that wants splitting. */
export const MAX_SUITE_CASES = 100_000;
export const MAX_DESCRIPTION_CHARS = 4_000;
export const MAX_TAGS_PER_CASE = 32;
/** Lowercase, 1 to 64 characters of `a-z 0-9 . _ : -`, starting with a letter or digit. */
export const TAG_PATTERN = /^[a-z0-9][a-z0-9._:-]{0,63}$/;
/** Nesting of input / expected / scorer values; deeper is refused so nothing downstream recurses unbounded. */
export const MAX_VALUE_DEPTH = 64;
