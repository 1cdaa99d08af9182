import { parseCachedVerdict, verdictCacheKeyMaterial } from './verdict-cache';

const base = { request: { output: 'out', rubric: 'r' }, model: 'gpt-4o-2024-08-06', prompt_version: 'judge-v1', scorer_version: '1.0.0' };

describe('verdict cache key material (J6)', () => {
  it('changes with every part of the key', () => {
    const k = verdictCacheKeyMaterial(base);
    const variants = [
      { ...base, request: { ...base.request, output: 'out2' } },
      { ...base, request: { ...base.request, rubric: 'r2' } },
      { ...base, request: { ...base.request, expected: 'e' } },
      { ...base, request: { ...base.request, expected: null } },
      { ...base, request: { ...base.request, input: 'i' } },
      { ...base, model: 'gpt-4o-2024-11-20' },
      { ...base, prompt_version: 'judge-v2' },
      { ...base, scorer_version: '1.0.1' },
    ];
    const keys = new Set([k, ...variants.map(verdictCacheKeyMaterial)]);
    expect(keys.size).toBe(variants.length + 1);
  });

  it('depends on content only, not on key order of an expected object', () => {
    const a = verdictCacheKeyMaterial({ ...base, request: { ...base.request, expected: { x: 1, y: 2 } } });
    const b = verdictCacheKeyMaterial({ ...base, request: { ...base.request, expected: { y: 2, x: 1 } } });
    expect(a).toBe(b);
  });
});

describe('parseCachedVerdict', () => {
  it('reads back exactly {verdict, score}', () => {
    expect(parseCachedVerdict('{"verdict":"pass","score":0.7}')).toEqual({ verdict: 'pass', score: 0.7 });
  });

  it.each([null, 'nope', '[]', '{"verdict":"pass"}', '{"verdict":"ok","score":1}', '{"verdict":"pass","score":2}', '{"verdict":"pass","score":1,"reasoning":"x"}'])(
    'treats %p as absent',
    (raw) => {
      expect(parseCachedVerdict(raw)).toBeNull();
    },
  );
});
