import { DEFAULT_MIN_SCORE, llmJudgeScorer } from './llm-judge.scorer';
import { validateScorerSpec } from './registry';
import { refusal } from './test-helpers';

describe('llm_judge config (S3, S4)', () => {
  it('is a judge scorer with a version', () => {
    expect(llmJudgeScorer.kind).toBe('judge');
    expect(llmJudgeScorer.name).toBe('llm_judge');
    expect(llmJudgeScorer.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(DEFAULT_MIN_SCORE).toBe(0.5);
  });

  it('compiles to its validated config, with no score function (the judge port scores it)', () => {
    const result = validateScorerSpec({ type: 'llm_judge', rubric: 'Polite and correct.' }, {});
    expect(result).toEqual({
      ok: true,
      scorer: { kind: 'judge', name: 'llm_judge', version: llmJudgeScorer.version, config: { rubric: 'Polite and correct.', minScore: 0.5, repeats: 1 } },
    });
    if (result.ok && result.scorer.kind === 'judge') {
      // @ts-expect-error a judge scorer has no score function
      expect(result.scorer.score).toBeUndefined();
    }
  });

  it.each<[number]>([[0], [0.5], [1], [0.85]])('accepts min_score %s', (minScore) => {
    const result = validateScorerSpec({ type: 'llm_judge', rubric: 'r', min_score: minScore }, {});
    expect(result.ok && result.scorer.kind === 'judge' && result.scorer.config.minScore).toBe(minScore);
  });

  it.each<[number]>([[2], [3], [10]])('accepts repeats %s (issue 13: flaky verdicts)', (repeats) => {
    const result = validateScorerSpec({ type: 'llm_judge', rubric: 'r', repeats }, {});
    expect(result.ok && result.scorer.kind === 'judge' && result.scorer.config.repeats).toBe(repeats);
  });

  it.each<[Record<string, unknown>, string, string]>([
    [{ type: 'llm_judge', rubric: 'r', repeats: 1 }, 'SCORER_OPTION_INVALID', 'repeats'],
    [{ type: 'llm_judge', rubric: 'r', repeats: 11 }, 'SCORER_OPTION_INVALID', 'repeats'],
    [{ type: 'llm_judge', rubric: 'r', repeats: 2.5 }, 'SCORER_OPTION_INVALID', 'repeats'],
    [{ type: 'llm_judge', rubric: 'r', repeats: '3' }, 'SCORER_OPTION_INVALID', 'repeats'],
    [{ type: 'llm_judge' }, 'SCORER_OPTION_MISSING', 'rubric'],
    [{ type: 'llm_judge', rubric: '' }, 'SCORER_OPTION_INVALID', 'rubric'],
    [{ type: 'llm_judge', rubric: '  \n' }, 'SCORER_OPTION_INVALID', 'rubric'],
    [{ type: 'llm_judge', rubric: ['a'] }, 'SCORER_OPTION_INVALID', 'rubric'],
    [{ type: 'llm_judge', rubric: 'r', min_score: 1.5 }, 'SCORER_OPTION_INVALID', 'min_score'],
    [{ type: 'llm_judge', rubric: 'r', min_score: -0.1 }, 'SCORER_OPTION_INVALID', 'min_score'],
    [{ type: 'llm_judge', rubric: 'r', min_score: '0.5' }, 'SCORER_OPTION_INVALID', 'min_score'],
    [{ type: 'llm_judge', rubric: 'r', min_score: NaN }, 'SCORER_OPTION_INVALID', 'min_score'],
    [{ type: 'llm_judge', rubric: 'r', model: 'x' }, 'SCORER_OPTION_UNKNOWN', 'model'],
  ])('%j -> %s on %s', (spec, code, field) => {
    expect(refusal(spec)).toContainEqual(expect.objectContaining({ code, field }));
  });
});
