import 'reflect-metadata';
import { ApiError } from './api-error';
import { validateBody } from './body-validation';
import { ApiKeyCreateBody } from './platform.dto';

/** The HTTP edge validates `@ValidateAtEdge` bodies with the bus edge's validator (X6, issue 16). */
describe('unit: validateBody', () => {
  const refusal = (body: unknown): ApiError => {
    try {
      validateBody(ApiKeyCreateBody, body);
    } catch (error) {
      return error as ApiError;
    }
    throw new Error('expected a refusal');
  };

  it('answers the declared fields of a valid body', () => {
    const body = validateBody(ApiKeyCreateBody, { name: 'ci bot', tier: 'operator' });
    expect(body).toBeInstanceOf(ApiKeyCreateBody);
    expect({ ...body }).toEqual({ name: 'ci bot', tier: 'operator' });
  });

  it('refuses a prototype key nested anywhere with INVALID_REQUEST, never a TypeError (found by the hostile-input fuzzer)', () => {
    // class-transformer would call `new value.constructor()` on this nested object and throw a TypeError: a 500.
    const e = refusal({ tier: 'viewer', x: { constructor: 1e308 }, '': null });
    expect(e).toBeInstanceOf(ApiError);
    expect(e.code).toBe('INVALID_REQUEST');
    expect(e.details).toEqual({ issues: [{ field: 'body', constraint: 'forbiddenKey' }] });
    expect(refusal({ name: { constructor: 1 }, tier: 'viewer' }).code).toBe('INVALID_REQUEST');
  });

  it('names a wrong field, and reports an unknown one on `body` without echoing its name (D1)', () => {
    const e = refusal({ name: 'ok', tier: 'root', 'secret-looking key': 1 });
    expect(e.details).toEqual({ issues: [{ field: 'body', constraint: 'unknownField' }, { field: 'tier', constraint: 'isIn' }] });
    expect(e.message).not.toContain('secret-looking key');
  });

  it('refuses a body that is not an object', () => {
    for (const body of [null, [], 'x', 3]) expect(refusal(body)).toMatchObject({ code: 'INVALID_REQUEST', field: 'body' });
  });
});
