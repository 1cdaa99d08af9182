export { ConfigError, authConfigSpec, commonConfigSpec, hmacConfigSpec, loadConfig, parsers } from './config';
export type { AuthConfig, CommonConfig, ConfigOptions, EnvSpec, HmacConfig, VariableSpec } from './config';
export { HealthController, InfrastructureModule, OutboxRelayService } from './infrastructure.module';
export type { InfrastructureOptions } from './infrastructure.module';
export { JsonLogger } from './logger';
export { onShutdown } from './shutdown';
export { BUS_NAMES, CLOCK, COMMON_CONFIG, DATA_SOURCE, ID_GENERATOR, LOGGER, MESSAGE_BUS } from './tokens';
export type { Clock, IdGenerator } from './tokens';
export { MetricsController, metrics, registry } from './metrics';
export { serveOpenApi } from './openapi';
export {
  API_KEY_STORE,
  AUTH_DISABLED_PRINCIPAL,
  AuthGuard,
  AuthModule,
  KeysController,
  MemoryRateLimiter,
  Principal,
  Public,
  RedisRateLimiter,
  RequireTier,
  ROUTE_ACCESS,
  TIERS,
  UndeclaredRouteAccessError,
  bearerToken,
  decideAccess,
  routeAccessTable,
  sqlApiKeyStore,
  tierAtLeast,
} from './auth';
export type { ApiKeyStore, AuthenticatedRequest, AuthPrincipal, AuthSettings, RateLimiter, RouteAccess, RouteAccessEntry, Tier } from './auth';
export { ApiExceptionFilter } from './api-exception.filter';
export type { ApiError } from './api-exception.filter';
