/**
 * Judge adapter configuration (J1): provider, exact model pin, endpoint, credential, timeouts, retries,
 * concurrency and pricing. `loadJudgeConfig(env)` reads it from `JUDGE_*` environment variables
 * (docs/judge.md) and returns null when no judge is configured (`JUDGE_PROVIDER` unset).
 *
 * A missing API key is NOT a configuration error: the judge is built and every call answers
 * `judge_credential_missing` without touching the network, so the gate can degrade to a declared warning
 * (GT2) instead of the process refusing to start. Error messages name variables, never their values.
 */
import type { JudgePricing } from '@evals/domain';

export const JUDGE_PROVIDERS = ['openai', 'anthropic', 'ollama'] as const;
export type JudgeProvider = (typeof JUDGE_PROVIDERS)[number];

export interface JudgeAdapterConfig {
  readonly provider: JudgeProvider;
  /** The exact model pin, e.g. `gpt-4o-2024-08-06`, `claude-sonnet-4-20250514`, `llama3.1:8b-instruct-q8_0`. */
  readonly model: string;
  /** OpenAI-compatible: the base URL including `/v1`; Anthropic: the API URL; Ollama: the server URL. */
  readonly baseUrl?: string;
  readonly apiKey?: string;
  /** Per call (per attempt), in milliseconds. */
  readonly timeoutMs: number;
  /** Retries after the first attempt, on HTTP 429 and 5xx only. */
  readonly maxRetries: number;
  /** Concurrent provider calls of one judge instance. */
  readonly concurrency: number;
  readonly pricing: JudgePricing;
  /** Sampling temperature (0 unless set; null leaves it to the provider, for models that refuse one). */
  readonly temperature?: number | null;
  /** Upper bound on the reply's tokens (default 1024). */
  readonly maxOutputTokens?: number;
}

export const JUDGE_DEFAULTS = Object.freeze({
  timeoutMs: 30_000,
  maxRetries: 3,
  concurrency: 4,
  maxOutputTokens: 1024,
});

/** The providers that refuse calls without a key (Ollama needs none). */
export function providerNeedsApiKey(provider: JudgeProvider): boolean {
  return provider !== 'ollama';
}

export type JudgeConfigErrorCode = 'JUDGE_CONFIG_INVALID' | 'JUDGE_TRACING_FORBIDDEN';

export class JudgeConfigError extends Error {
  override readonly name = 'JudgeConfigError';

  constructor(
    readonly code: JudgeConfigErrorCode,
    readonly variable: string,
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

/**
 * LangChain environment switches that would send prompts (the candidate output) and replies (the
 * reasoning) to a tracing service or the console. Any of them set to "true" breaks D1/J2: refused.
 */
export const LANGCHAIN_LEAKY_ENV = [
  'LANGSMITH_TRACING_V2',
  'LANGCHAIN_TRACING_V2',
  'LANGSMITH_TRACING',
  'LANGCHAIN_TRACING',
  'LANGCHAIN_VERBOSE',
] as const;

export type Env = Readonly<Record<string, string | undefined>>;

/** The first LangChain tracing/verbose variable switched on in `env`, or null. */
export function leakyLangChainSwitch(env: Env): string | null {
  for (const name of LANGCHAIN_LEAKY_ENV) {
    const value = env[name];
    if (value !== undefined && value.trim().toLowerCase() === 'true') return name;
  }
  return null;
}

const FLOATING_TAG = /(?:^|[-:@/])latest$/i;

/** Refuses a model name that is not an exact pin we can recognise (empty, whitespace, `latest`, bare Ollama names). */
function checkModelPin(provider: JudgeProvider, model: string, variable: string): void {
  if (model.trim() === '' || /\s/.test(model)) {
    throw new JudgeConfigError('JUDGE_CONFIG_INVALID', variable, `${variable} must be an exact model pin without whitespace`);
  }
  if (FLOATING_TAG.test(model)) {
    throw new JudgeConfigError('JUDGE_CONFIG_INVALID', variable, `${variable} names a floating alias ("latest"); pin an exact model version (J1, J6)`);
  }
  if (provider === 'ollama' && !model.includes(':') && !model.includes('@')) {
    throw new JudgeConfigError('JUDGE_CONFIG_INVALID', variable, `${variable}: an Ollama model needs an explicit tag (name:tag) or digest; a bare name means "latest"`);
  }
}

function checkInt(value: number, variable: string, min: number, max: number): void {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new JudgeConfigError('JUDGE_CONFIG_INVALID', variable, `${variable} must be an integer in [${min}, ${max}]`);
  }
}

function checkPrice(value: number, variable: string): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new JudgeConfigError('JUDGE_CONFIG_INVALID', variable, `${variable} must be a number >= 0 (US dollars per million tokens)`);
  }
}

function checkUrl(value: string, variable: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new JudgeConfigError('JUDGE_CONFIG_INVALID', variable, `${variable} must be an absolute http(s) URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new JudgeConfigError('JUDGE_CONFIG_INVALID', variable, `${variable} must be an http(s) URL`);
  }
}

/** Validates a config built in code (the same rules `loadJudgeConfig` applies). Returns it unchanged. */
export function validateJudgeConfig(config: JudgeAdapterConfig): JudgeAdapterConfig {
  if (!JUDGE_PROVIDERS.includes(config.provider)) {
    throw new JudgeConfigError('JUDGE_CONFIG_INVALID', 'provider', `provider must be one of ${JUDGE_PROVIDERS.join(', ')}`);
  }
  checkModelPin(config.provider, config.model, 'model');
  if (config.baseUrl !== undefined) checkUrl(config.baseUrl, 'baseUrl');
  checkInt(config.timeoutMs, 'timeoutMs', 1, 600_000);
  checkInt(config.maxRetries, 'maxRetries', 0, 10);
  checkInt(config.concurrency, 'concurrency', 1, 1024);
  if (config.maxOutputTokens !== undefined) checkInt(config.maxOutputTokens, 'maxOutputTokens', 1, 1_000_000);
  if (config.temperature !== undefined && config.temperature !== null && (!Number.isFinite(config.temperature) || config.temperature < 0 || config.temperature > 2)) {
    throw new JudgeConfigError('JUDGE_CONFIG_INVALID', 'temperature', 'temperature must be in [0, 2] or null');
  }
  if (typeof config.pricing !== 'object' || config.pricing === null) {
    throw new JudgeConfigError('JUDGE_CONFIG_INVALID', 'pricing', 'pricing is required');
  }
  checkPrice(config.pricing.input_per_mtok_usd, 'pricing.input_per_mtok_usd');
  checkPrice(config.pricing.output_per_mtok_usd, 'pricing.output_per_mtok_usd');
  return config;
}

function readInt(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new JudgeConfigError('JUDGE_CONFIG_INVALID', name, `${name} must be an integer in [${min}, ${max}]`);
  const value = Number(raw.trim());
  checkInt(value, name, min, max);
  return value;
}

function readPrice(env: Env, name: string, required: boolean): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') {
    if (required) {
      throw new JudgeConfigError(
        'JUDGE_CONFIG_INVALID',
        name,
        `${name} is required for this provider (US dollars per million tokens; set 0 explicitly for a free endpoint) - a paid judge must never report zero cost`,
      );
    }
    return 0;
  }
  const value = Number(raw.trim());
  if (!/^\d+(\.\d+)?$/.test(raw.trim()) || !Number.isFinite(value)) {
    throw new JudgeConfigError('JUDGE_CONFIG_INVALID', name, `${name} must be a number >= 0 (US dollars per million tokens)`);
  }
  return value;
}

/**
 * Reads the judge configuration from the environment:
 * `JUDGE_PROVIDER` (openai | anthropic | ollama; unset = no judge, returns null), `JUDGE_MODEL` (exact pin,
 * required), `JUDGE_BASE_URL`, `JUDGE_API_KEY`, `JUDGE_TIMEOUT_MS` (30000), `JUDGE_MAX_RETRIES` (3),
 * `JUDGE_CONCURRENCY` (4), `JUDGE_INPUT_USD_PER_MTOK` and `JUDGE_OUTPUT_USD_PER_MTOK` (required for
 * openai and anthropic, default 0 for ollama). Refuses LangChain tracing/verbose switches (D1, J2).
 */
export function loadJudgeConfig(env: Env): JudgeAdapterConfig | null {
  const providerRaw = env['JUDGE_PROVIDER']?.trim() ?? '';
  if (providerRaw === '') return null;
  const provider = providerRaw.toLowerCase() as JudgeProvider;
  if (!JUDGE_PROVIDERS.includes(provider)) {
    throw new JudgeConfigError('JUDGE_CONFIG_INVALID', 'JUDGE_PROVIDER', `JUDGE_PROVIDER must be one of ${JUDGE_PROVIDERS.join(', ')}`);
  }
  const leaky = leakyLangChainSwitch(env);
  if (leaky) {
    throw new JudgeConfigError('JUDGE_TRACING_FORBIDDEN', leaky, `${leaky}=true would send candidate outputs and judge reasoning out of the process (D1, J2); unset it`);
  }
  const model = env['JUDGE_MODEL']?.trim() ?? '';
  if (model === '') throw new JudgeConfigError('JUDGE_CONFIG_INVALID', 'JUDGE_MODEL', 'JUDGE_MODEL (an exact model pin) is required');
  checkModelPin(provider, model, 'JUDGE_MODEL');
  const baseUrl = env['JUDGE_BASE_URL']?.trim() || undefined;
  if (baseUrl !== undefined) checkUrl(baseUrl, 'JUDGE_BASE_URL');
  const apiKey = env['JUDGE_API_KEY']?.trim() || undefined;
  const paid = providerNeedsApiKey(provider);
  return {
    provider,
    model,
    ...(baseUrl !== undefined ? { baseUrl } : {}),
    ...(apiKey !== undefined ? { apiKey } : {}),
    timeoutMs: readInt(env, 'JUDGE_TIMEOUT_MS', JUDGE_DEFAULTS.timeoutMs, 1, 600_000),
    maxRetries: readInt(env, 'JUDGE_MAX_RETRIES', JUDGE_DEFAULTS.maxRetries, 0, 10),
    concurrency: readInt(env, 'JUDGE_CONCURRENCY', JUDGE_DEFAULTS.concurrency, 1, 1024),
    pricing: {
      input_per_mtok_usd: readPrice(env, 'JUDGE_INPUT_USD_PER_MTOK', paid),
      output_per_mtok_usd: readPrice(env, 'JUDGE_OUTPUT_USD_PER_MTOK', paid),
    },
  };
}
