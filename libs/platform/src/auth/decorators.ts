import { SetMetadata, createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { AuthPrincipal, RouteAccess, Tier } from './tiers';

/** Metadata key of a route's declared access (handler first, then its controller class). */
export const ROUTE_ACCESS = 'evals:route-access';

/**
 * The lowest tier a key must have to call this route (or every route of this controller, on the class).
 * Every route declares one, or `@Public()`: an undeclared route stops the app at boot (fail closed).
 */
export const RequireTier = (tier: Tier): MethodDecorator & ClassDecorator => SetMetadata<string, RouteAccess>(ROUTE_ACCESS, tier);

/** No key needed. Only for /health and /metrics (and nothing that reads or writes evaluation data). */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata<string, RouteAccess>(ROUTE_ACCESS, 'public');

/** The request's authenticated principal ({key_id, name, tier}); null on a public route. */
export const Principal = createParamDecorator((_data: unknown, ctx: ExecutionContext): AuthPrincipal | null => {
  const req = ctx.switchToHttp().getRequest<{ principal?: AuthPrincipal }>();
  return req.principal ?? null;
});

/**
 * The project the request acts in (issue 30, docs/adr/0009-projects.md), decided by the guard
 * (decideProject) and known to exist. Every route that reads or writes project data takes it. On a
 * public route there is none, and asking for it is a bug: it fails the request rather than pick one.
 */
export const ProjectScope = createParamDecorator((_data: unknown, ctx: ExecutionContext): string => {
  const req = ctx.switchToHttp().getRequest<AuthenticatedRequest>();
  if (req.project === undefined) throw new Error('@ProjectScope() on a route the guard decided no project for (a public route?)');
  return req.project;
});

/** The Express request as the guard leaves it. */
export interface AuthenticatedRequest {
  principal?: AuthPrincipal;
  /** The request's project (decideProject); absent on public routes. */
  project?: string;
}
