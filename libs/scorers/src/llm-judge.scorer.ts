/**
 * `llm_judge` (S3): config validation only. The judge port (J1-J6, built later) grades the output against
 * `rubric`; the case passes when the verdict is pass and the score is at least `min_score`.
 *
 * - `rubric` (required): a non-empty string (not only whitespace).
 * - `min_score` (0.5): a number in [0, 1].
 * - `repeats` (1): an integer in [2, 10] when given. Each case is judged that many times; its verdict is the
 *   majority (a tie fails) and the run reports how often the k verdicts agreed (docs/judge.md, "Repeats").
 */
import { ScorerIssueCode, checkOptionKeys, describeType, isAbsent, issue, readFiniteNumber, refuse } from './issues';
import type { JudgeScorer, ScorerConfigIssue } from './scorer';

export interface JudgeConfig {
  readonly rubric: string;
  readonly minScore: number;
  /** How many times each case is judged (1: once, the default). */
  readonly repeats: number;
}

export const DEFAULT_MIN_SCORE = 0.5;
/** `repeats` bounds: below 2 nothing can disagree; above 10 the spend grows faster than what it tells. */
export const MIN_JUDGE_REPEATS = 2;
export const MAX_JUDGE_REPEATS = 10;

const NAME = 'llm_judge';
const OPTIONS = ['rubric', 'min_score', 'repeats'] as const;

/** The options next to `type`, as JSON Schema (the registry's `scorerOptionSchemas`). */
export const LLM_JUDGE_OPTIONS_SCHEMA = {
  properties: {
    rubric: { type: 'string', minLength: 1, pattern: '\\S', description: 'What a good answer does; not only whitespace.' },
    min_score: { type: 'number', minimum: 0, maximum: 1, description: `The least judge score that passes (default ${DEFAULT_MIN_SCORE}).` },
    repeats: { type: 'integer', minimum: MIN_JUDGE_REPEATS, maximum: MAX_JUDGE_REPEATS, description: 'Judge each case this many times (once when absent).' },
  },
  required: ['rubric'],
} as const;

export const llmJudgeScorer: JudgeScorer<JudgeConfig> = {
  kind: 'judge',
  name: NAME,
  version: '1.0.0',
  options: OPTIONS,
  validate(raw) {
    const issues: ScorerConfigIssue[] = [];
    checkOptionKeys(NAME, raw, OPTIONS, issues);
    const rubric = raw['rubric'];
    if (isAbsent(raw, 'rubric')) {
      issues.push(issue(ScorerIssueCode.OPTION_MISSING, 'rubric', 'scorer `llm_judge` needs a `rubric` (what a good answer does)'));
    } else if (typeof rubric !== 'string') {
      issues.push(issue(ScorerIssueCode.OPTION_INVALID, 'rubric', `scorer \`llm_judge\`: \`rubric\` must be a string, got ${describeType(rubric)}`));
    } else if (rubric.trim() === '') {
      issues.push(issue(ScorerIssueCode.OPTION_INVALID, 'rubric', 'scorer `llm_judge`: `rubric` must not be empty'));
    }
    const minScore = readFiniteNumber(NAME, raw, 'min_score', issues);
    if (minScore !== undefined && (minScore < 0 || minScore > 1)) {
      issues.push(issue(ScorerIssueCode.OPTION_INVALID, 'min_score', `scorer \`llm_judge\`: \`min_score\` must be in [0, 1], got ${minScore}`));
    }
    const repeats = readFiniteNumber(NAME, raw, 'repeats', issues);
    if (repeats !== undefined && (!Number.isInteger(repeats) || repeats < MIN_JUDGE_REPEATS || repeats > MAX_JUDGE_REPEATS)) {
      issues.push(
        issue(ScorerIssueCode.OPTION_INVALID, 'repeats', `scorer \`llm_judge\`: \`repeats\` must be an integer from ${MIN_JUDGE_REPEATS} to ${MAX_JUDGE_REPEATS}, got ${repeats}`),
      );
    }
    if (issues.length > 0 || typeof rubric !== 'string') return refuse(issues);
    return { ok: true, config: { rubric, minScore: minScore ?? DEFAULT_MIN_SCORE, repeats: repeats ?? 1 } };
  },
};
