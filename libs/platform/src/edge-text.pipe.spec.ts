import { ApiError } from './api-error';
import { EdgeTextPipe } from './edge-text.pipe';
import { ApiKeyCreateBody } from './platform.dto';

const pipe = new EdgeTextPipe();
const refusal = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return null;
};

describe('unit: EdgeTextPipe, the global check of path parameters and query strings (issue 16)', () => {
  it('refuses NUL and lone surrogates in a query or path value with 400 INVALID_REQUEST naming it, never echoing it', () => {
    for (const [value, type, name] of [
      ['a\u0000b', 'query', 'subject_id'],
      ['\ud800', 'param', 'key'],
      [['ok', 'x\udfff'], 'query', 'include'],
    ] as const) {
      const error = refusal(() => pipe.transform(value, { type, data: name, metatype: Object }));
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ code: 'INVALID_REQUEST', status: 400, field: name });
      expect((error as Error).message).not.toMatch(/\u0000|[\ud800-\udfff]/);
    }
  });

  it('a string parameter given twice is refused; a list parameter may be; bodies and ordinary text pass', () => {
    expect(refusal(() => pipe.transform(['a', 'b'], { type: 'query', data: 'suite_key', metatype: String }))).toMatchObject({ code: 'INVALID_REQUEST', field: 'suite_key' });
    expect(pipe.transform(['cases', 'x'], { type: 'query', data: 'include', metatype: Object })).toEqual(['cases', 'x']);
    expect(pipe.transform({ output: 'a\u0000b' }, { type: 'body', metatype: Object })).toEqual({ output: 'a\u0000b' });
    expect(pipe.transform('support-triage \ud83d\ude00 é', { type: 'param', data: 'key', metatype: String })).toBe('support-triage \ud83d\ude00 é');
    expect(pipe.transform(undefined, { type: 'query', data: 'limit', metatype: String })).toBeUndefined();
  });
});

describe('unit: bodies of DTOs marked @ValidateAtEdge are validated by their class-validator rules', () => {
  it('a valid body becomes the DTO; a bad field is 400 INVALID_REQUEST naming it; an unknown field is refused by where it is', () => {
    const ok = pipe.transform({ name: 'grafana', tier: 'viewer' }, { type: 'body', metatype: ApiKeyCreateBody });
    expect(ok).toBeInstanceOf(ApiKeyCreateBody);
    expect(ok).toEqual({ name: 'grafana', tier: 'viewer' });
    expect(refusal(() => pipe.transform({ name: '', tier: 'viewer' }, { type: 'body', metatype: ApiKeyCreateBody }))).toMatchObject({ code: 'INVALID_REQUEST', field: 'name' });
    expect(refusal(() => pipe.transform({ name: 'x', tier: 'root' }, { type: 'body', metatype: ApiKeyCreateBody }))).toMatchObject({ code: 'INVALID_REQUEST', field: 'tier' });
    const unknown = refusal(() => pipe.transform({ name: 'x', tier: 'viewer', 'SECRET-key': 1 }, { type: 'body', metatype: ApiKeyCreateBody }));
    expect(unknown).toMatchObject({ code: 'INVALID_REQUEST', field: 'body' });
    expect(JSON.stringify({ message: (unknown as Error).message, details: (unknown as ApiError).details })).not.toContain('SECRET');
    expect(refusal(() => pipe.transform([1], { type: 'body', metatype: ApiKeyCreateBody }))).toMatchObject({ code: 'INVALID_REQUEST', field: 'body' });
  });
});
