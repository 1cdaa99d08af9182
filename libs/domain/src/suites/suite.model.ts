import { SuiteInputError } from './suite-error';

/**
 * A suite (V1): a versioned golden dataset. This is the normalised, validated form: what `validateSuite`
 * returns, what is stored per suite version and what the content hash covers. Authored as YAML (V3),
 * format in docs/suites.md.
 */

export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | readonly JsonValue[] | { readonly [key: string]: JsonValue };
export type JsonObject = { readonly [key: string]: JsonValue };

/**
 * A scorer spec: `type` plus the scorer's options flat next to it, e.g.
 * `{type: contains, value: refund, ignore_case: true}`. Its options belong to @evals/scorers, which
 * validates them; a suite keeps the spec exactly as authored.
 */
export type ScorerSpec = { readonly type: string } & { readonly [option: string]: JsonValue };

export interface SuiteCase {
  /** Unique within the suite; the id outputs are submitted against (ID_PATTERN of @evals/contracts). */
  readonly id: string;
  /** What the agent is given (prompt, context). Suite content, not candidate output. */
  readonly input: string | JsonObject;
  /** What the scorer compares against; absent when the scorer needs none. `null` is a value. */
  readonly expected?: JsonValue;
  /** Overrides the suite's default_scorer for this case. */
  readonly scorer?: ScorerSpec;
  /** A set: unique, stored sorted. */
  readonly tags: readonly string[];
}

export interface SuiteDefinition {
  readonly key: string;
  readonly description?: string;
  readonly default_scorer: ScorerSpec;
  /** The run passes when pass_rate >= pass_threshold (R2). */
  readonly pass_threshold: number;
  /** A score drop above this, with an interval excluding zero, is a regression (G2). */
  readonly regression_threshold: number;
  /** D4: an operator authorised golden fixtures for this suite (non-production content only). */
  readonly golden_fixtures: boolean;
  /** In authored order, which is significant. */
  readonly cases: readonly SuiteCase[];
}

/** The scorer spec a case is scored with: its own, or the suite's default. */
export function effectiveScorerSpec(suite: SuiteDefinition, caseIndex: number): ScorerSpec {
  const c = suite.cases[caseIndex];
  if (c === undefined) throw new SuiteInputError('CASE_INDEX_INVALID', `no case at index ${caseIndex}`);
  return c.scorer ?? suite.default_scorer;
}
