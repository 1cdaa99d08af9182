import type { ApiKeyAuthentication } from '@evals/persistence';
import { AUTH_DISABLED_PRINCIPAL, isRouteAccess, tierAtLeast, type AuthPrincipal, type Tier } from './tiers';

/** The error bodies of access control (docs/security.md); never an echo of the presented key. */
export interface UnauthenticatedBody {
  readonly code: 'UNAUTHENTICATED';
  readonly message: string;
}
export interface ForbiddenBody {
  readonly code: 'FORBIDDEN';
  readonly message: string;
  readonly required_tier: Tier | null;
}
export interface RateLimitedBody {
  readonly code: 'RATE_LIMITED';
  readonly message: string;
  readonly retry_after_seconds: number;
}

export type AccessDecision =
  | { readonly allow: true; readonly principal: AuthPrincipal | null }
  | { readonly allow: false; readonly status: 401; readonly body: UnauthenticatedBody; readonly key_id?: string }
  | { readonly allow: false; readonly status: 403; readonly body: ForbiddenBody; readonly key_id?: string };

export interface AccessRequest {
  /** What the route declares (undefined: nothing - refused, fail closed). */
  readonly access: unknown;
  readonly mode: 'required' | 'disabled';
  /** The raw Authorization header. */
  readonly authorization: string | string[] | undefined;
  readonly authenticate: (key: string) => Promise<ApiKeyAuthentication>;
}

const unauthenticated = (message: string, key_id?: string): AccessDecision => ({ allow: false, status: 401, body: { code: 'UNAUTHENTICATED', message }, ...(key_id ? { key_id } : {}) });

/** `Bearer <token>` (scheme case-insensitive, one header); null for anything else. */
export function bearerToken(header: string | string[] | undefined): string | null {
  if (typeof header !== 'string') return null;
  const m = /^Bearer[ ]+([^\s]+)[ ]*$/i.exec(header);
  return m ? m[1]! : null;
}

/**
 * Who may call a route: the declared access first (undeclared: refused), then public routes, then the
 * key (missing, malformed, unknown or revoked: 401), then its tier (below the route's: 403).
 */
export async function decideAccess(req: AccessRequest): Promise<AccessDecision> {
  if (!isRouteAccess(req.access)) {
    return { allow: false, status: 403, body: { code: 'FORBIDDEN', message: 'this route declares no access tier and is refused', required_tier: null } };
  }
  if (req.access === 'public') return { allow: true, principal: null };
  if (req.mode === 'disabled') return { allow: true, principal: AUTH_DISABLED_PRINCIPAL };
  if (req.authorization === undefined || req.authorization === '') return unauthenticated('an API key is required: send Authorization: Bearer <key>');
  const token = bearerToken(req.authorization);
  if (token === null) return unauthenticated('the Authorization header must be: Bearer <key>');
  const result = await req.authenticate(token);
  if (!result.ok) {
    return unauthenticated(result.reason === 'revoked' ? 'the API key has been revoked' : 'the API key is not valid', result.key_id);
  }
  const { record } = result;
  const principal: AuthPrincipal = { key_id: record.id, name: record.name, tier: record.tier };
  if (!tierAtLeast(record.tier, req.access)) {
    return {
      allow: false,
      status: 403,
      body: { code: 'FORBIDDEN', message: `this route needs the ${req.access} tier; key ${record.prefix}... has ${record.tier}`, required_tier: req.access },
      key_id: record.id,
    };
  }
  return { allow: true, principal };
}

/** Methods that change something: rate-limited per key. */
export function isWriteMethod(method: string): boolean {
  return ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method.toUpperCase());
}
