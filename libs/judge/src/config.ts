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

export interface JudgeConfigProblem {
  readonly code: JudgeConfigErrorCode;
  readonly variable: string;
  readonly message: string;
}

/**
 * The judge's configuration is wrong. `problems` lists every problem found (X3: all at once, as the rest of
 * the configuration reports them); `code`, `variable` and the message lead with the first.
 */
export class JudgeConfigError extends Error {
  override readonly name = 'JudgeConfigError';
  readonly problems: readonly JudgeConfigProblem[];

  constructor(
    readonly code: JudgeConfigErrorCode,
    readonly variable: string,
    message: string,
    problems?: readonly JudgeConfigProblem[],
  ) {
    const all = problems && problems.length > 0 ? problems : [{ code, variable, message }];
    super([`${code}: ${message}`, ...all.slice(1).map((p) => p.message)].join('; '));
    this.problems = all;
  }

  /** Each problem as `VARIABLE: message`, for a ConfigError's list. */
  get lines(): string[] {
    return this.problems.map((p) => `${p.variable}: ${p.message}`);
  }
}

/** Collects every problem of a configuration before refusing it. */
class Problems {
  private readonly list: JudgeConfigProblem[] = [];

  add(variable: string, message: string, code: JudgeConfigErrorCode = 'JUDGE_CONFIG_INVALID'): void {
    this.list.push({ code, variable, message });
  }

  throwIfAny(): void {
    const [first] = this.list;
    if (first) throw new JudgeConfigError(first.code, first.variable, first.message, this.list);
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

/** Reports a model name that is not an exact pin we can recognise (empty, whitespace, `latest`, bare Ollama names). */
function checkModelPin(problems: Problems, provider: JudgeProvider | null, model: string, variable: string): void {
  if (model.trim() === '' || /\s/.test(model)) {
    problems.add(variable, `${variable} must be an exact model pin without whitespace`);
  } else if (FLOATING_TAG.test(model)) {
    problems.add(variable, `${variable} names a floating alias ("latest"); pin an exact model version (J1, J6)`);
  } else if (provider === 'ollama' && !model.includes(':') && !model.includes('@')) {
    problems.add(variable, `${variable}: an Ollama model needs an explicit tag (name:tag) or digest; a bare name means "latest"`);
  }
}

function checkInt(problems: Problems, value: number, variable: string, min: number, max: number): void {
  if (!Number.isSafeInteger(value) || value < min || value > max) problems.add(variable, `${variable} must be an integer in [${min}, ${max}]`);
}

function checkPrice(problems: Problems, value: number, variable: string): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) problems.add(variable, `${variable} must be a number >= 0 (US dollars per million tokens)`);
}

function checkUrl(problems: Problems, value: string, variable: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    problems.add(variable, `${variable} must be an absolute http(s) URL`);
    return;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') problems.add(variable, `${variable} must be an http(s) URL`);
}

/** Validates a config built in code (the same rules `loadJudgeConfig` applies), every problem at once. Returns it unchanged. */
export function validateJudgeConfig(config: JudgeAdapterConfig): JudgeAdapterConfig {
  const problems = new Problems();
  const known = JUDGE_PROVIDERS.includes(config.provider);
  if (!known) problems.add('provider', `provider must be one of ${JUDGE_PROVIDERS.join(', ')}`);
  checkModelPin(problems, known ? config.provider : null, config.model, 'model');
  if (config.baseUrl !== undefined) checkUrl(problems, config.baseUrl, 'baseUrl');
  checkInt(problems, config.timeoutMs, 'timeoutMs', 1, 600_000);
  checkInt(problems, config.maxRetries, 'maxRetries', 0, 10);
  checkInt(problems, config.concurrency, 'concurrency', 1, 1024);
  if (config.maxOutputTokens !== undefined) checkInt(problems, config.maxOutputTokens, 'maxOutputTokens', 1, 1_000_000);
  if (config.temperature !== undefined && config.temperature !== null && (!Number.isFinite(config.temperature) || config.temperature < 0 || config.temperature > 2)) {
    problems.add('temperature', 'temperature must be in [0, 2] or null');
  }
  if (typeof config.pricing !== 'object' || config.pricing === null) {
    problems.add('pricing', 'pricing is required');
  } else {
    checkPrice(problems, config.pricing.input_per_mtok_usd, 'pricing.input_per_mtok_usd');
    checkPrice(problems, config.pricing.output_per_mtok_usd, 'pricing.output_per_mtok_usd');
  }
  problems.throwIfAny();
  return config;
}

function readInt(problems: Problems, env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) {
    problems.add(name, `${name} must be an integer in [${min}, ${max}]`);
    return fallback;
  }
  const value = Number(raw.trim());
  checkInt(problems, value, name, min, max);
  return value;
}

function readPrice(problems: Problems, env: Env, name: string, required: boolean): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') {
    if (required) {
      problems.add(name, `${name} is required for this provider (US dollars per million tokens; set 0 explicitly for a free endpoint) - a paid judge must never report zero cost`);
    }
    return 0;
  }
  const value = Number(raw.trim());
  if (!/^\d+(\.\d+)?$/.test(raw.trim()) || !Number.isFinite(value)) {
    problems.add(name, `${name} must be a number >= 0 (US dollars per million tokens)`);
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
  // X3: every problem is collected and reported at once, not the first one found.
  const problems = new Problems();
  const provider = providerRaw.toLowerCase() as JudgeProvider;
  const known = JUDGE_PROVIDERS.includes(provider);
  if (!known) problems.add('JUDGE_PROVIDER', `JUDGE_PROVIDER must be one of ${JUDGE_PROVIDERS.join(', ')}`);
  for (const leaky of LANGCHAIN_LEAKY_ENV) {
    if (env[leaky]?.trim().toLowerCase() === 'true') {
      problems.add(leaky, `${leaky}=true would send candidate outputs and judge reasoning out of the process (D1, J2); unset it`, 'JUDGE_TRACING_FORBIDDEN');
    }
  }
  const model = env['JUDGE_MODEL']?.trim() ?? '';
  if (model === '') problems.add('JUDGE_MODEL', 'JUDGE_MODEL (an exact model pin) is required');
  else checkModelPin(problems, known ? provider : null, model, 'JUDGE_MODEL');
  const baseUrl = env['JUDGE_BASE_URL']?.trim() || undefined;
  if (baseUrl !== undefined) checkUrl(problems, baseUrl, 'JUDGE_BASE_URL');
  const apiKey = env['JUDGE_API_KEY']?.trim() || undefined;
  // An unknown provider: whether a price is required cannot be known; only a given price is checked.
  const paid = known && providerNeedsApiKey(provider);
  const config: JudgeAdapterConfig = {
    provider,
    model,
    ...(baseUrl !== undefined ? { baseUrl } : {}),
    ...(apiKey !== undefined ? { apiKey } : {}),
    timeoutMs: readInt(problems, env, 'JUDGE_TIMEOUT_MS', JUDGE_DEFAULTS.timeoutMs, 1, 600_000),
    maxRetries: readInt(problems, env, 'JUDGE_MAX_RETRIES', JUDGE_DEFAULTS.maxRetries, 0, 10),
    concurrency: readInt(problems, env, 'JUDGE_CONCURRENCY', JUDGE_DEFAULTS.concurrency, 1, 1024),
    pricing: {
      input_per_mtok_usd: readPrice(problems, env, 'JUDGE_INPUT_USD_PER_MTOK', paid),
      output_per_mtok_usd: readPrice(problems, env, 'JUDGE_OUTPUT_USD_PER_MTOK', paid),
    },
  };
  problems.throwIfAny();
  return config;
}
