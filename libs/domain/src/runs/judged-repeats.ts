import type { JudgeError, JudgeVerdict } from '../judge/judge.port';
import { majorityOutcome } from '../judge/repeats';
import { judgedCaseEvidence, type CaseEvidence, type CompiledCase, type JudgeCallRecord, type ScoringContext } from './case-scoring';
import { redactLabel } from './redaction';

/**
 * The evidence of a case judged `repeats: k` times (issue 13): the majority outcome (a tie fails), the
 * tokens and cost of all k calls (each was paid for, an unparseable reply included), cached only when
 * every repeat was a recorded verdict, and k with the number of passing votes - what the run's verdict
 * stability is computed from. One result is exactly `judgedCaseEvidence`.
 */
export function repeatedJudgeEvidence(
  compiled: CompiledCase,
  output: string,
  results: ReadonlyArray<JudgeVerdict | JudgeError>,
  call: JudgeCallRecord,
  ctx: ScoringContext,
): CaseEvidence {
  if (compiled.scorer.kind !== 'judge') throw new TypeError(`case ${compiled.case_id} is not an llm_judge case`);
  const each = results.map((r) => judgedCaseEvidence(compiled, output, r, call, ctx));
  if (each.length === 1) return each[0]!;
  const outcome = majorityOutcome(results, compiled.scorer.config.minScore);
  const first = each[0]!;
  const sum = (pick: (e: CaseEvidence) => number) => each.reduce((s, e) => s + pick(e), 0);
  return {
    ...first,
    score: outcome.score,
    passed: outcome.passed,
    label: redactLabel(outcome.label),
    judge: {
      ...first.judge!,
      judge_cost_usd: sum((e) => e.judge!.judge_cost_usd),
      judge_input_tokens: sum((e) => e.judge!.judge_input_tokens),
      judge_output_tokens: sum((e) => e.judge!.judge_output_tokens),
      judge_cached: call.cacheUsed ? each.every((e) => e.judge!.judge_cached === true) : null,
      judge_repeats: outcome.repeats,
      judge_pass_votes: outcome.pass_votes,
    },
  };
}
