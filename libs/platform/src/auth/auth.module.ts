import { Inject, Injectable, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { APP_GUARD, DiscoveryModule } from '@nestjs/core';
import type RedisClient from 'ioredis';
import type { JsonLogger } from '../logger';
import { LOGGER } from '../tokens';
import { AUTH_SETTINGS, AuthGuard, RATE_LIMITER, type AuthSettings } from './auth.guard';
import { MemoryRateLimiter, RedisRateLimiter, type RateLimiter } from './rate-limiter';
import { RouteAccessAudit } from './route-audit';

export function createRateLimiter(settings: AuthSettings, logger: Pick<JsonLogger, 'event'>): RateLimiter {
  const memory = new MemoryRateLimiter(settings.rateLimitPerMinute);
  if (!settings.redisUrl) return memory;
  // Loaded only with a Redis to talk to: the embedded all-in-one has none, and ioredis is a tenth of a
  // second of every cold `evals run` (issue 15).
  const Redis = (require('ioredis') as { default: typeof RedisClient }).default;
  const redis = new Redis(settings.redisUrl, {
    lazyConnect: true,
    // Fail fast while Redis is away: the request is counted in memory instead of waiting.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    commandTimeout: 1_000,
    connectionName: 'evals-rate-limit',
  });
  return new RedisRateLimiter(redis, settings.rateLimitPerMinute, settings.redisKeyPrefix, memory, (error) =>
    logger.event('warn', 'rate limiter: Redis unavailable, counting in this process until it is back', { error: error instanceof Error ? error.name : 'error' }),
  );
}

@Injectable()
class RateLimiterCloser implements OnApplicationShutdown {
  constructor(@Inject(RATE_LIMITER) private readonly limiter: RateLimiter) {}

  async onApplicationShutdown(): Promise<void> {
    await this.limiter.close();
  }
}

/**
 * Access control for an app (docs/security.md): the global AuthGuard, the boot-time check that every route
 * declares its tier, and the rate limiter. Needs LOGGER and API_KEY_STORE from the app (InfrastructureModule
 * provides both, globally).
 */
@Module({})
export class AuthModule {
  static forRoot(settings: AuthSettings, options: { rateLimiter?: RateLimiter } = {}): DynamicModule {
    return {
      module: AuthModule,
      imports: [DiscoveryModule],
      providers: [
        { provide: AUTH_SETTINGS, useValue: settings },
        options.rateLimiter
          ? { provide: RATE_LIMITER, useValue: options.rateLimiter }
          : { provide: RATE_LIMITER, useFactory: (logger: JsonLogger) => createRateLimiter(settings, logger), inject: [LOGGER] },
        RateLimiterCloser,
        RouteAccessAudit,
        { provide: APP_GUARD, useClass: AuthGuard },
      ],
    };
  }
}
