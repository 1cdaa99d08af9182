export { ConfigError, authConfigSpec, commonConfigSpec, hmacConfigSpec, loadConfig, parsers } from './config';
export type { AuthConfig, CommonConfig, ConfigOptions, EnvSpec, HmacConfig, VariableSpec } from './config';
export { HealthController, InfrastructureModule, OutboxRelayService } from './infrastructure.module';
export type { InfrastructureOptions } from './infrastructure.module';
export { JsonLogger, stdoutByTurn } from './logger';
export { onShutdown } from './shutdown';
export { BUS_NAMES, CLOCK, COMMON_CONFIG, DATA_SOURCE, ID_GENERATOR, LOGGER, MESSAGE_BUS } from './tokens';
export type { Clock, IdGenerator } from './tokens';
export { RUN_PROGRESS, RunProgress } from './run-progress';
export { MetricsController, metrics, registry } from './metrics';
export { buildOpenApiDocument, PUBLIC_PATHS, serveOpenApi } from './openapi';
export { busPayloadSchema } from './bus-schemas';
export { ApiErrorBody, ApiRoute, documentProperties, ERRORS_EXTENSION, TIER_EXTENSION } from './api-route';
export { ApiKeyAnswerDto, ApiKeyCreateBody, ApiKeyIssuedDto, ApiKeyRecordDto, ApiKeysDto, HealthDto } from './platform.dto';
export {
  ApparentPassRateDto,
  CalibrationCountsDto,
  CalibrationRateDto,
  CasesNeededDto,
  ComparedCasesCountDto,
  ComparedCasesDto,
  ComparedCasesLeftOutDto,
  ComparisonCountsDto,
  ComparisonErrorDto,
  CorrectedPassRateDto,
  JudgeCorrectedPassRateDto,
  PairedCellsDto,
  PairedDiffDto,
  PassRateDiffDto,
  PinChangeDto,
  RateDiffDto,
  RunChangesDto,
  RunComparisonDto,
  RunCorrectedPassRateDto,
  ScorerVersionChangeDto,
  SuiteVersionChangeDto,
} from './comparison.dto';
export { CaseResultDto, EvalMetricsDto, EvalResultDto, RegressionViewDto, RunDocDto, RunSummaryDto, RunViewDto } from './run-view.dto';
export { COUNT_PROPERTY, ID_PROPERTY, IntervalDto, JSON_VALUE_PROPERTY, SUITE_KEY_PROPERTY, TIMESTAMP_PROPERTY, TOKEN_PROPERTY } from './api-schemas';
export { SCORER_SPEC_COMPONENTS, SCORER_SPEC_PROPERTY, scorerSpecComponent, scorerSpecSchema } from './scorer-spec.schema';
export type { ApiOk, ApiRouteOptions } from './api-route';
export { API_ERROR_CODES, ApiError, codesOfStatus, isApiErrorCode, refuse, statusOfCode } from './api-error';
export type { ApiErrorCode } from './api-error';
export { BODY_TOO_DEEP_TYPE, MAX_BODY_DEPTH, jsonNestingExceeds, verifyJsonDepth } from './body-depth';
export { useBodyParsers, YAML_MEDIA_TYPES } from './http-edge';
export type { BodyParserHost } from './http-edge';
export { answerUnparsableRequests, unparsableAnswer } from './unparsable-requests';
export { serveAsyncApi } from './asyncapi';
export {
  API_KEY_STORE,
  AUTH_DISABLED_PRINCIPAL,
  AuthGuard,
  AuthModule,
  KeysController,
  ProjectsController,
  ProjectScope,
  PROJECT_HEADER,
  decideProject,
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
export { EdgeTextPipe, refuseUnstorableText, unusableText } from './edge-text.pipe';
export { isValidatedAtEdge, ValidateAtEdge, validateBody } from './body-validation';
