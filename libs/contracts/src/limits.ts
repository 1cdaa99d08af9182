/**
 * The limits and identifier formats live in @evals/limits, a lib with no dependencies, so that a client which
 * only checks an outputs file (the CLI's `evals run`) does not load the DTO classes and class-validator. They
 * are part of this contract all the same: re-exported here and from this lib's index.
 */
export * from '@evals/limits';
