import { API_KEY_TIERS, isApiKeyTier, type ApiKeyTier } from '@evals/persistence';

/** Access tiers, lowest first: viewer (reads) < operator (writes) < admin (overrides, keys). */
export const TIERS = API_KEY_TIERS;
export type Tier = ApiKeyTier;

/** What a route declares: a tier a key must have at least, or `public` (no key at all: /health, /metrics). */
export type RouteAccess = Tier | 'public';

export const isTier = isApiKeyTier;

export function isRouteAccess(value: unknown): value is RouteAccess {
  return value === 'public' || isTier(value);
}

export function tierRank(tier: Tier): number {
  return TIERS.indexOf(tier);
}

/** True when a key of tier `has` may use a route that needs `needs`. */
export function tierAtLeast(has: Tier, needs: Tier): boolean {
  return tierRank(has) >= tierRank(needs);
}

/** Who made a request: the API key's id, name and tier, available to handlers (`@Principal()`, `req.principal`). */
export interface AuthPrincipal {
  readonly key_id: string;
  readonly name: string;
  readonly tier: Tier;
  /** Issue 30: the key's project; null for a platform key, which picks one with `X-Evals-Project`. */
  readonly project: string | null;
  /** True only when EVALS_AUTH=disabled: nobody was authenticated, every request is served as admin. */
  readonly auth_disabled?: true;
}

/** The principal of every request when EVALS_AUTH=disabled (local embedded/demo use). */
export const AUTH_DISABLED_PRINCIPAL: AuthPrincipal = Object.freeze({ key_id: 'auth-disabled', name: 'auth-disabled', tier: 'admin', project: null, auth_disabled: true });

/**
 * The project a caller's key belongs to: null for a platform key - and for every caller when access control
 * is off (a route without a principal is served as AUTH_DISABLED_PRINCIPAL), which may then act in any.
 */
export function keyProject(principal: AuthPrincipal | null): string | null {
  return (principal ?? AUTH_DISABLED_PRINCIPAL).project;
}
