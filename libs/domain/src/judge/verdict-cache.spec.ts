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

describe('verdict cache key material per project (issue 30, ADR 0009)', () => {
  // The material of a key written before projects, byte for byte: a default-project key must stay exactly
  // this, or every verdict recorded before the upgrade stops matching.
  const BEFORE_PROJECTS =
    '{"expected":{"absent":true},"input":{"absent":true},"model":"gpt-4o-2024-08-06","output":"out","prompt_version":"judge-v1","rubric":"r","scheme":"evals.judge-verdict.v1","scorer_version":"1.0.0"}';

  it('keeps a default-project key exactly as it was before projects', () => {
    expect(verdictCacheKeyMaterial(base)).toBe(BEFORE_PROJECTS);
    expect(verdictCacheKeyMaterial({ ...base, project: 'default' })).toBe(BEFORE_PROJECTS);
  });

  it('gives two projects different keys for the same request, and neither the default key', () => {
    const a = verdictCacheKeyMaterial({ ...base, project: 'team-a' });
    const b = verdictCacheKeyMaterial({ ...base, project: 'team-b' });
    expect(a).not.toBe(b);
    expect(a).not.toBe(BEFORE_PROJECTS);
    expect(b).not.toBe(BEFORE_PROJECTS);
    // The repeat index and the project are both key parts: neither masks the other.
    expect(verdictCacheKeyMaterial({ ...base, project: 'team-a', repeat: 1 })).not.toBe(a);
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
