import { AUTH_DISABLED_PRINCIPAL } from '@evals/platform';
import { DashboardApiController } from './dashboard-api.controller';

describe('GET /v1/whoami names the project the request acts in (issue 30)', () => {
  const controller = new DashboardApiController({} as never);

  it("a project key: its own project, not a platform key", () => {
    expect(controller.whoami({ key_id: 'k1', name: 'ci-a', tier: 'operator', project: 'team-a' }, 'team-a')).toEqual({
      name: 'ci-a',
      tier: 'operator',
      auth_disabled: false,
      project: 'team-a',
      platform: false,
    });
  });

  it('a platform key: the project it named, and says it is a platform key; access control off is no key at all', () => {
    expect(controller.whoami({ key_id: 'k2', name: 'ops', tier: 'admin', project: null }, 'team-b')).toMatchObject({ project: 'team-b', platform: true });
    expect(controller.whoami(AUTH_DISABLED_PRINCIPAL, 'default')).toEqual({ name: 'auth-disabled', tier: 'admin', auth_disabled: true, project: 'default', platform: false });
  });
});
