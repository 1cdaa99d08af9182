import { Inject, Injectable, RequestMethod, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import type { JsonLogger } from '../logger';
import { LOGGER } from '../tokens';
import { ROUTE_ACCESS } from './decorators';
import { AUTH_SETTINGS, type AuthSettings } from './auth.guard';
import { isRouteAccess, type RouteAccess } from './tiers';

// Nest's own metadata keys for route handlers (@nestjs/common constants PATH_METADATA, METHOD_METADATA).
const PATH_METADATA = 'path';
const METHOD_METADATA = 'method';

export interface RouteAccessEntry {
  readonly controller: string;
  readonly handler: string;
  readonly method: string;
  readonly path: string;
  readonly access: RouteAccess | null;
}

/** Every route handler of the app's controllers with what it declares (null: nothing, or not a tier). */
export function routeAccessTable(discovery: DiscoveryService, scanner: MetadataScanner, reflector: Reflector): RouteAccessEntry[] {
  const out: RouteAccessEntry[] = [];
  for (const wrapper of discovery.getControllers()) {
    const type = wrapper.metatype as (new (...args: never[]) => unknown) | null | undefined;
    if (!type || typeof type !== 'function') continue;
    const prototype = type.prototype as Record<string, unknown>;
    const base = [reflector.get<string | string[] | undefined>(PATH_METADATA, type) ?? ''].flat()[0] ?? '';
    for (const name of scanner.getAllMethodNames(prototype)) {
      const handler = prototype[name];
      if (typeof handler !== 'function') continue;
      const path = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
      if (path === undefined) continue;
      const method = RequestMethod[(Reflect.getMetadata(METHOD_METADATA, handler) as number | undefined) ?? RequestMethod.GET] ?? 'GET';
      const access = reflector.getAllAndOverride<unknown>(ROUTE_ACCESS, [handler, type]);
      const joined = `/${[base, [path].flat()[0] ?? ''].map((p) => p.replace(/^\/+|\/+$/g, '')).filter(Boolean).join('/')}`;
      out.push({ controller: type.name, handler: name, method, path: joined, access: isRouteAccess(access) ? access : null });
    }
  }
  return out;
}

export class UndeclaredRouteAccessError extends Error {
  readonly code = 'ROUTE_ACCESS_UNDECLARED';
  constructor(readonly routes: readonly RouteAccessEntry[]) {
    super(
      `access control: ${routes.length} route(s) declare no access tier, and an undeclared route is refused (fail closed): ` +
        routes.map((r) => `${r.method} ${r.path} (${r.controller}.${r.handler})`).join(', ') +
        ". Declare @RequireTier('viewer' | 'operator' | 'admin') or @Public() from @evals/platform on each (docs/security.md).",
    );
    this.name = 'UndeclaredRouteAccessError';
  }
}

/**
 * Fail closed, at boot: every route of every controller must declare its tier (or @Public()); one that
 * does not stops the app before it listens. Also says, loudly, when authentication is disabled.
 */
@Injectable()
export class RouteAccessAudit implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    @Inject(AUTH_SETTINGS) private readonly settings: AuthSettings,
    @Inject(LOGGER) private readonly logger: JsonLogger,
  ) {}

  onModuleInit(): void {
    const table = routeAccessTable(this.discovery, this.scanner, this.reflector);
    const undeclared = table.filter((r) => r.access === null);
    if (undeclared.length > 0) throw new UndeclaredRouteAccessError(undeclared);
    for (const r of table) this.logger.event('debug', 'route access', { method: r.method, path: r.path, access: r.access });
    this.logger.event('info', 'access control', {
      mode: this.settings.mode,
      routes: table.length,
      rate_limit_per_minute: this.settings.rateLimitPerMinute,
      rate_limit_store: this.settings.redisUrl ? 'redis' : 'memory',
    });
    if (this.settings.mode === 'disabled') {
      this.logger.event(
        'warn',
        '!!! AUTHENTICATION IS DISABLED (EVALS_AUTH=disabled): every request is served as admin, with no key and no rate limit. ' +
          'For local embedded/demo use only - never expose this process, never run it in production. !!!',
        { auth: 'disabled' },
      );
    }
  }
}
