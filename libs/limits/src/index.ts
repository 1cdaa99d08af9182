/**
 * @evals/limits: the limits and identifier formats of the contract (docs/contracts.md), with no dependencies.
 * @evals/contracts re-exports all of it; import it from here where class-validator and the DTO classes are
 * not wanted (the CLI checking an outputs file before it sends anything).
 */
export * from './limits';
