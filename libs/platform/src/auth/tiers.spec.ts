import { AUTH_DISABLED_PRINCIPAL, TIERS, isRouteAccess, isTier, tierAtLeast, tierRank } from './tiers';

describe('access tiers: viewer < operator < admin', () => {
  it('orders the tiers', () => {
    expect(TIERS).toEqual(['viewer', 'operator', 'admin']);
    expect(tierRank('viewer')).toBeLessThan(tierRank('operator'));
    expect(tierRank('operator')).toBeLessThan(tierRank('admin'));
  });

  it.each([
    ['viewer', 'viewer', true],
    ['viewer', 'operator', false],
    ['viewer', 'admin', false],
    ['operator', 'viewer', true],
    ['operator', 'operator', true],
    ['operator', 'admin', false],
    ['admin', 'viewer', true],
    ['admin', 'operator', true],
    ['admin', 'admin', true],
  ] as const)('a %s key on a %s route: %s', (has, needs, allowed) => {
    expect(tierAtLeast(has, needs)).toBe(allowed);
  });

  it('knows what a route may declare', () => {
    expect(['viewer', 'operator', 'admin', 'public'].every(isRouteAccess)).toBe(true);
    expect([undefined, null, '', 'Admin', 'superuser', 2].some(isRouteAccess)).toBe(false);
    expect(isTier('public')).toBe(false);
  });

  it('serves everything as an admin marked auth_disabled when authentication is off', () => {
    expect(AUTH_DISABLED_PRINCIPAL).toMatchObject({ tier: 'admin', auth_disabled: true });
    expect(Object.isFrozen(AUTH_DISABLED_PRINCIPAL)).toBe(true);
  });
});
