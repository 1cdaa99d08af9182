import type { ApiKeyAuthentication, ApiKeyRecord } from '@evals/persistence';
import { bearerToken, decideAccess, decideProject, isWriteMethod } from './decision';

const record = (tier: ApiKeyRecord['tier']): ApiKeyRecord => ({ id: '0123456789abcdef', name: 'ci', tier, prefix: 'evk_0123456789abcdef_AbCd', created_at: '2026-01-01T00:00:00.000Z', revoked_at: null, created_by: null, project: 'default' });
const as = (result: ApiKeyAuthentication) => async () => result;
const never = async (): Promise<ApiKeyAuthentication> => {
  throw new Error('must not be called');
};

describe('access decisions (guard logic)', () => {
  it('refuses a route that declares nothing, or something that is not a tier (fail closed), even with auth disabled', async () => {
    for (const access of [undefined, null, 'superuser', '']) {
      for (const mode of ['required', 'disabled'] as const) {
        const d = await decideAccess({ access, mode, authorization: 'Bearer x', authenticate: never });
        expect(d).toEqual({ allow: false, status: 403, body: { code: 'FORBIDDEN', message: expect.any(String), required_tier: null } });
      }
    }
  });

  it('lets anyone through a public route without looking at the key', async () => {
    expect(await decideAccess({ access: 'public', mode: 'required', authorization: undefined, authenticate: never })).toEqual({ allow: true, principal: null });
    expect(await decideAccess({ access: 'public', mode: 'required', authorization: 'Bearer garbage', authenticate: never })).toEqual({ allow: true, principal: null });
  });

  it('serves every declared route as the auth-disabled admin when EVALS_AUTH=disabled', async () => {
    const d = await decideAccess({ access: 'admin', mode: 'disabled', authorization: undefined, authenticate: never });
    expect(d).toEqual({ allow: true, principal: expect.objectContaining({ tier: 'admin', auth_disabled: true }) });
  });

  it.each([
    [undefined, /API key is required/],
    ['', /API key is required/],
    ['Basic dXNlcjpwYXNz', /must be: Bearer/],
    ['Bearer', /must be: Bearer/],
    ['Bearer a b', /must be: Bearer/],
    [['Bearer a', 'Bearer b'], /must be: Bearer/],
  ])('401 without a usable bearer token: %j', async (authorization, message) => {
    const d = await decideAccess({ access: 'viewer', mode: 'required', authorization, authenticate: never });
    expect(d).toMatchObject({ allow: false, status: 401, body: { code: 'UNAUTHENTICATED', message: expect.stringMatching(message) } });
  });

  it.each([
    [{ ok: false, reason: 'malformed' }, /not valid/],
    [{ ok: false, reason: 'unknown', key_id: '0123456789abcdef' }, /not valid/],
    [{ ok: false, reason: 'revoked', key_id: '0123456789abcdef' }, /revoked/],
  ] as const)('401 for a key the store refuses: %j', async (result, message) => {
    const d = await decideAccess({ access: 'viewer', mode: 'required', authorization: 'Bearer evk_x', authenticate: as(result) });
    expect(d).toMatchObject({ allow: false, status: 401, body: { code: 'UNAUTHENTICATED', message: expect.stringMatching(message) } });
    expect(JSON.stringify(d)).not.toContain('evk_x');
  });

  it('passes the token after "Bearer " (any case) to the store', async () => {
    const seen: string[] = [];
    await decideAccess({ access: 'viewer', mode: 'required', authorization: 'bearer  evk_token ', authenticate: async (k) => (seen.push(k), { ok: false, reason: 'malformed' }) });
    expect(seen).toEqual(['evk_token']);
    expect(bearerToken('BEARER abc')).toBe('abc');
  });

  const tiers = ['viewer', 'operator', 'admin'] as const;
  for (const needs of tiers) {
    for (const has of tiers) {
      const allowed = tiers.indexOf(has) >= tiers.indexOf(needs);
      it(`a ${has} key on a ${needs} route: ${allowed ? 'allowed, with its principal' : '403 naming the required tier'}`, async () => {
        const d = await decideAccess({ access: needs, mode: 'required', authorization: 'Bearer k', authenticate: as({ ok: true, record: record(has) }) });
        if (allowed) expect(d).toEqual({ allow: true, principal: { key_id: '0123456789abcdef', name: 'ci', tier: has, project: 'default' } });
        else expect(d).toEqual({ allow: false, status: 403, key_id: '0123456789abcdef', body: { code: 'FORBIDDEN', message: expect.stringContaining(needs), required_tier: needs } });
      });
    }
  }

  it('rate-limits writes only', () => {
    expect(['POST', 'put', 'PATCH', 'DELETE'].every(isWriteMethod)).toBe(true);
    expect(['GET', 'HEAD', 'OPTIONS'].some(isWriteMethod)).toBe(false);
  });
});

describe('the request\'s project (issue 30, docs/adr/0009-projects.md)', () => {
  const existing = new Set(['default', 'team-a', 'team-b']);
  const exists = async (id: string) => existing.has(id);
  const notAsked = async (): Promise<boolean> => {
    throw new Error('a project key\'s own project needs no lookup');
  };

  it('puts a project key in its own project, with or without the header naming it', async () => {
    expect(await decideProject({ project: 'team-a' }, undefined, notAsked)).toEqual({ allow: true, project: 'team-a' });
    expect(await decideProject({ project: 'team-a' }, 'team-a', notAsked)).toEqual({ allow: true, project: 'team-a' });
  });

  it('answers a project key naming another project - existing or not - with the same 404', async () => {
    const other = await decideProject({ project: 'team-a' }, 'team-b', notAsked);
    const missing = await decideProject({ project: 'team-a' }, 'no-such-team', notAsked);
    expect(other).toEqual({ allow: false, status: 404, body: { code: 'PROJECT_NOT_FOUND', message: expect.any(String) } });
    expect(missing).toEqual(other);
    expect(JSON.stringify(other)).not.toContain('team-b');
  });

  it('lets a platform key pick any existing project, default without a header', async () => {
    expect(await decideProject({ project: null }, undefined, exists)).toEqual({ allow: true, project: 'default' });
    expect(await decideProject({ project: null }, '', exists)).toEqual({ allow: true, project: 'default' });
    expect(await decideProject({ project: null }, 'team-b', exists)).toEqual({ allow: true, project: 'team-b' });
    expect(await decideProject({ project: null }, 'gone', exists)).toMatchObject({ allow: false, status: 404, body: { code: 'PROJECT_NOT_FOUND' } });
  });

  it('refuses a malformed or repeated header with 400, naming the header and never echoing it', async () => {
    for (const header of ['Team-A', 'a'.repeat(64), '-a', 'a.b', 'a:b', '../x', 'é', ' team-a', ['team-a', 'team-b']]) {
      for (const project of [null, 'team-a']) {
        const d = await decideProject({ project }, header, exists);
        expect(d).toEqual({ allow: false, status: 400, body: { code: 'INVALID_REQUEST', message: expect.any(String), field: 'X-Evals-Project' } });
        if (typeof header === 'string' && header.length > 2) expect(JSON.stringify(d)).not.toContain(header);
      }
    }
  });
});
