/** Helpers for this lib's specs only (not exported from index.ts). */
import { validateScorerSpec, type CompiledDeterministicScorer } from './registry';
import type { ScoreResult, ScorerConfigIssue } from './scorer';

/** Compiles a deterministic scorer spec, failing the test with the issues when it is refused. */
export function compile(spec: Record<string, unknown>, expected?: unknown): CompiledDeterministicScorer {
  const result = validateScorerSpec(spec, expected === undefined ? {} : { expected });
  if (!result.ok) throw new Error(`spec refused: ${JSON.stringify(result.issues)}`);
  if (result.scorer.kind !== 'deterministic') throw new Error('not a deterministic scorer');
  return result.scorer;
}

/** The issues a spec is refused with (fails the test when it is accepted). */
export function refusal(spec: unknown, expected?: unknown): readonly ScorerConfigIssue[] {
  const result = validateScorerSpec(spec, expected === undefined ? {} : { expected });
  if (result.ok) throw new Error(`spec accepted: ${JSON.stringify(spec)}`);
  return result.issues;
}

/** `[passed, label]` of one output, compact for tables. */
export function outcome(scorer: CompiledDeterministicScorer, output: string): [boolean, string] {
  const r: ScoreResult = scorer.score(output);
  return [r.passed, r.label];
}
