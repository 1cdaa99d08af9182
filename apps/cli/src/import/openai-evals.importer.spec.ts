import { validateScorerSpec } from '@evals/scorers';
import { escapeRegex, importOpenAiEvals } from './openai-evals.importer';

const jsonl = (...samples: unknown[]) => samples.map((s) => JSON.stringify(s)).join('\n');

/** The verdict of an imported case on one output. */
function passes(item: ReturnType<typeof importOpenAiEvals>['items'][number], output: string): boolean {
  const compiled = validateScorerSpec(item!.scorer, item!.expected === undefined ? {} : { expected: item!.expected });
  if (!compiled.ok || compiled.scorer.kind !== 'deterministic') throw new Error(JSON.stringify(compiled));
  return compiled.scorer.score(output).passed;
}

describe('OpenAI Evals samples to cases (issue 29 part 2)', () => {
  it('match: the output starts with one of the ideals, metacharacters taken literally', () => {
    const { items } = importOpenAiEvals(jsonl({ input: 'q', ideal: 'Paris' }, { input: 'q', ideal: ['4', 'f.ur (x)'] }), 'match', false);
    expect([passes(items[0], 'Paris, France'), passes(items[0], 'It is Paris')]).toEqual([true, false]);
    expect([passes(items[1], '4.'), passes(items[1], 'f.ur (x)!'), passes(items[1], 'four (x)')]).toEqual([true, true, false]);
  });

  it('includes: one of the ideals is a substring, --ignore-case folds', () => {
    const { items } = importOpenAiEvals(jsonl({ input: 'q', ideal: ['Paris', 'Lutetia'] }), 'includes', true);
    expect([passes(items[0], 'in PARIS'), passes(items[0], 'Lyon')]).toEqual([true, false]);
  });

  it('json-match: the parsed output equals the parsed ideal; several ideals are left out', () => {
    const { items, leftOut } = importOpenAiEvals(jsonl({ input: 'q', ideal: '{"a": [1, 2]}' }, { input: 'q', ideal: ['1', '2'] }), 'json-match', false);
    expect([passes(items[0], '{"a":[1,2]}'), passes(items[0], '{"a":[2,1]}')]).toEqual([true, false]);
    expect(leftOut).toEqual([{ index: 2, what: 'sample', reason: expect.stringMatching(/several ideals/) }]);
  });

  it('keeps chat messages as the input and lists bad samples by position', () => {
    const messages = [{ role: 'user', content: 'Capital of France?' }];
    const { items, leftOut } = importOpenAiEvals(`${jsonl({ input: messages, ideal: 'Paris' })}\nnot json\n${jsonl({ input: 'q', ideal: 3 })}`, 'match', false);
    expect(items[0]?.input).toEqual({ messages });
    expect(leftOut.map((l) => l.index)).toEqual([2, 3]);
  });

  it('fuzzy-match: normalized ideal within the normalized output or the other way round', () => {
    const { items } = importOpenAiEvals(jsonl({ input: 'q', ideal: ['The Eiffel Tower'] }), 'fuzzy-match', false);
    expect([passes(items[0], 'eiffel tower!'), passes(items[0], 'It is the Eiffel tower, in Paris'), passes(items[0], 'Eiffel')]).toEqual([true, true, true]);
    expect(passes(items[0], 'Louvre')).toBe(false);
  });

  it('escapeRegex escapes every RE2 metacharacter', () => {
    expect(escapeRegex('a.b*c+d?e(f)g[h]i{j}k|l^m$n\\o')).toBe('a\\.b\\*c\\+d\\?e\\(f\\)g\\[h\\]i\\{j\\}k\\|l\\^m\\$n\\\\o');
  });
});
