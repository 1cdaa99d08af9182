import { DEFAULT_PROJECT, isProjectId, PROJECT_HEADER, PROJECT_ID_RULE } from '@evals/contracts';
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
  const principal: AuthPrincipal = { key_id: record.id, name: record.name, tier: record.tier, project: record.project };
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

export { PROJECT_HEADER };

export interface ProjectNotFoundBody {
  readonly code: 'PROJECT_NOT_FOUND';
  readonly message: string;
}
export interface InvalidProjectBody {
  readonly code: 'INVALID_REQUEST';
  readonly message: string;
  readonly field: 'X-Evals-Project';
}

export type ProjectDecision =
  | { readonly allow: true; readonly project: string }
  | { readonly allow: false; readonly status: 404; readonly body: ProjectNotFoundBody }
  | { readonly allow: false; readonly status: 400; readonly body: InvalidProjectBody };

/**
 * The project a request acts in (docs/adr/0009-projects.md): a project key's own; a platform key's (or, with
 * EVALS_AUTH=disabled, anyone's) from the `X-Evals-Project` header, `default` without one. A header naming a
 * project the key does not belong to, and a project that does not exist, get the same 404: a key learns
 * nothing of projects it cannot use. The header is echoed in no answer.
 */
export async function decideProject(
  principal: Pick<AuthPrincipal, 'project'>,
  header: string | string[] | undefined,
  exists: (project: string) => Promise<boolean>,
): Promise<ProjectDecision> {
  if (Array.isArray(header)) return invalidProject('send X-Evals-Project once');
  const named = header === undefined || header === '' ? null : header;
  if (named !== null && !isProjectId(named)) return invalidProject(`X-Evals-Project: ${PROJECT_ID_RULE}`);
  if (principal.project !== null) {
    // A project key's project exists: keys are created only in existing projects, and projects are never deleted.
    return named === null || named === principal.project ? { allow: true, project: principal.project } : projectNotFound();
  }
  const project = named ?? DEFAULT_PROJECT;
  return (await exists(project)) ? { allow: true, project } : projectNotFound();
}

const projectNotFound = (): ProjectDecision => ({ allow: false, status: 404, body: { code: 'PROJECT_NOT_FOUND', message: 'no such project for this key' } });
const invalidProject = (message: string): ProjectDecision => ({ allow: false, status: 400, body: { code: 'INVALID_REQUEST', message, field: 'X-Evals-Project' } });
