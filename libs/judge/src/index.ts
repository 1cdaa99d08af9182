/**
 * @evals/judge: the judge adapter (J1-J6). `LangChainJudge` implements the `JudgePort` of @evals/domain
 * over LangChain chat models (OpenAI-compatible, Anthropic, Ollama); `CachedJudge` + `RedisVerdictCache`
 * are the gate's verdict cache; `loadJudgeConfig` reads `JUDGE_*` variables. See docs/judge.md.
 */
export {
  JUDGE_DEFAULTS,
  JUDGE_PROVIDERS,
  JudgeConfigError,
  LANGCHAIN_LEAKY_ENV,
  leakyLangChainSwitch,
  loadJudgeConfig,
  providerNeedsApiKey,
  validateJudgeConfig,
  type Env,
  type JudgeAdapterConfig,
  type JudgeConfigErrorCode,
  type JudgeConfigProblem,
  type JudgeProvider,
} from './config';
export { createChatModel, type ChatModelFactory } from './chat-model';
export { LangChainJudge, type JudgeCallOutcome, type LangChainJudgeDeps, type PairwiseComparison } from './langchain-judge';
export { CachedJudge, type CachedJudgeOptions, type VerdictCacheStats } from './cached-judge';
export {
  DEFAULT_VERDICT_CACHE_PREFIX,
  DEFAULT_VERDICT_CACHE_TTL_SECONDS,
  RedisVerdictCache,
  verdictCacheKey,
  type RedisVerdictCacheOptions,
} from './verdict-cache';
export { MemoryVerdictCache, type MemoryVerdictCacheOptions } from './memory-verdict-cache';
export { DEFAULT_BACKOFF, backoffDelayMs, retryAfterMs, retryDelayMs, type BackoffPolicy } from './retry';
export { classifyProviderError, statusOf, type ProviderFailure, type ProviderFailureKind } from './provider-errors';
export { Semaphore } from './semaphore';
