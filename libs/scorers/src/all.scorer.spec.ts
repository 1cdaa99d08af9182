import { compile, outcome, refusal } from './test-helpers';

const has = (value: string) => ({ type: 'contains', value });

describe('all scorer (S1, issue 29: several promptfoo assertions on one test)', () => {
  it('passes only when every nested scorer passes', () => {
    const s = compile({ type: 'all', scorers: [has('a'), has('b'), { type: 'not', scorer: has('c') }] });
    expect(outcome(s, 'ab')).toEqual([true, 'all_passed']);
    expect(outcome(s, 'a')).toEqual([false, 'check_failed']);
    expect(outcome(s, 'abc')).toEqual([false, 'check_failed']);
  });

  it('a weight-0 check never decides (promptfoo counts a weight-0 assertion as passed)', () => {
    const s = compile({ type: 'all', scorers: [has('a'), has('b')], weights: [1, 0] });
    expect([s.score('a').passed, s.score('b').passed]).toEqual([true, false]);
  });

  it('with threshold passes on the weighted share of passing checks', () => {
    const s = compile({ type: 'all', scorers: [has('a'), has('b'), has('c')], weights: [2, 1, 1], threshold: 0.5 });
    expect(s.score('a').passed).toBe(true); // 2 / 4
    expect(s.score('b').passed).toBe(false); // 1 / 4
    expect(s.score('bc').passed).toBe(true); // 2 / 4
    expect(compile({ type: 'all', scorers: [has('a')], weights: [0], threshold: 0.5 }).score('a').passed).toBe(false); // total weight 0 scores 0
  });

  it('nested specs see the case expected', () => {
    const s = compile({ type: 'all', scorers: [{ type: 'exact' }, { type: 'starts_with', value: 'o' }] }, 'ok');
    expect([s.score('ok').passed, s.score('okay').passed]).toEqual([true, false]);
  });

  it.each<[Record<string, unknown>, string, string]>([
    [{ type: 'all' }, 'SCORER_OPTION_MISSING', 'scorers'],
    [{ type: 'all', scorers: [] }, 'SCORER_OPTION_INVALID', 'scorers'],
    [{ type: 'all', scorers: [{ type: 'regex' }] }, 'SCORER_OPTION_MISSING', 'scorers[0].pattern'],
    [{ type: 'all', scorers: [has('a'), { type: 'nope' }] }, 'SCORER_OPTION_INVALID', 'scorers[1].type'],
    [{ type: 'all', scorers: ['x'] }, 'SCORER_OPTION_INVALID', 'scorers[0]'],
    [{ type: 'all', scorers: [{ type: 'llm_judge', rubric: 'Polite.' }] }, 'SCORER_OPTION_INVALID', 'scorers[0]'],
    [{ type: 'all', scorers: [has('a')], weights: [1, 1] }, 'SCORER_OPTION_INVALID', 'weights'],
    [{ type: 'all', scorers: [has('a')], threshold: 0 }, 'SCORER_OPTION_INVALID', 'threshold'],
    [{ type: 'all', scorers: new Array(65).fill(has('a')) }, 'SCORER_OPTION_INVALID', 'scorers'],
  ])('refuses %j with %s on %s', (spec, code, field) => {
    expect(refusal(spec)).toContainEqual(expect.objectContaining({ code, field }));
  });
});
