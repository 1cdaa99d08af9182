import { HttpException, Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { LOGGER } from '../tokens';
import type { JsonLogger } from '../logger';
import { metrics } from '../metrics';
import { API_KEY_STORE, type ApiKeyStore } from './api-key-store';
import { decideAccess, decideProject, isWriteMethod, PROJECT_HEADER, type RateLimitedBody } from './decision';
import { ROUTE_ACCESS, type AuthenticatedRequest } from './decorators';
import type { RateLimiter } from './rate-limiter';

export const AUTH_SETTINGS = Symbol('AUTH_SETTINGS');
export const RATE_LIMITER = Symbol('RATE_LIMITER');

export interface AuthSettings {
  readonly mode: 'required' | 'disabled';
  readonly rateLimitPerMinute: number;
  /** Empty: rate limits in memory. */
  readonly redisUrl: string;
  /** Prefix of the rate-limit buckets in Redis (one per deployment and schema). */
  readonly redisKeyPrefix: string;
}

/**
 * The global guard (APP_GUARD, installed by InfrastructureModule in every app): the route's declared tier,
 * the presented key, the request's project (decideProject, issue 30), then the per-key rate limit on writes.
 * Sets `req.principal` and `req.project`. Logs a denial with the
 * route, the code and the key id at most - never the key, never a body (D1).
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(AUTH_SETTINGS) private readonly settings: AuthSettings,
    @Inject(API_KEY_STORE) private readonly keys: ApiKeyStore,
    @Inject(RATE_LIMITER) private readonly limiter: RateLimiter,
    @Inject(LOGGER) private readonly logger: JsonLogger,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true; // no other transport is served
    const req = context.switchToHttp().getRequest<Request & AuthenticatedRequest>();
    const res = context.switchToHttp().getResponse<Response>();
    const access = this.reflector.getAllAndOverride<unknown>(ROUTE_ACCESS, [context.getHandler(), context.getClass()]);
    const route = `${req.method} ${(req.route as { path?: string } | undefined)?.path ?? '?'}`;
    const decision = await decideAccess({
      access,
      mode: this.settings.mode,
      authorization: req.headers.authorization,
      authenticate: (key) => this.keys.authenticate(key),
    });
    if (!decision.allow) {
      metrics.accessDenied.inc({ code: decision.body.code });
      this.logger.event('info', 'request refused', { route, status: decision.status, code: decision.body.code, key_id: decision.key_id });
      if (decision.status === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="evals"');
      throw new HttpException(decision.body, decision.status);
    }
    const principal = decision.principal;
    // The project before the rate limit, like the tier: a refused request costs the key nothing.
    const scope = principal ? await decideProject(principal, req.headers[PROJECT_HEADER], async (id) => (await this.keys.findProject(id)) !== null) : null;
    if (principal && scope && !scope.allow) {
      metrics.accessDenied.inc({ code: scope.body.code });
      this.logger.event('info', 'request refused', { route, status: scope.status, code: scope.body.code, key_id: principal.key_id });
      throw new HttpException(scope.body, scope.status);
    }
    if (principal && !principal.auth_disabled && isWriteMethod(req.method)) {
      const rate = await this.limiter.take(principal.key_id);
      if (!rate.allowed) {
        metrics.accessDenied.inc({ code: 'RATE_LIMITED' });
        this.logger.event('info', 'request refused', { route, status: 429, code: 'RATE_LIMITED', key_id: principal.key_id });
        res.setHeader('Retry-After', String(rate.retryAfterSeconds));
        const body: RateLimitedBody = {
          code: 'RATE_LIMITED',
          message: `more than ${this.limiter.perMinute} write requests per minute for this key; retry in ${rate.retryAfterSeconds} s`,
          retry_after_seconds: rate.retryAfterSeconds,
        };
        throw new HttpException(body, 429);
      }
    }
    if (principal && scope?.allow) {
      req.principal = principal;
      req.project = scope.project;
    }
    return true;
  }
}
