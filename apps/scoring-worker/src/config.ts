import { JudgeConfigError, loadJudgeConfig, type JudgeAdapterConfig } from '@evals/judge';
import { ConfigError, commonConfigSpec, hmacConfigSpec, loadConfig, parsers, type CommonConfig, type ConfigOptions, type EnvSpec, type HmacConfig } from '@evals/platform';

/** The variables of the worker read through the common spec (the judge's `JUDGE_*` are read by @evals/judge). */
export interface WorkerEnvConfig extends CommonConfig, HmacConfig {
  /** Most work messages handled in one micro-batch (one transaction). */
  readonly maxBatch: number;
  /** Redis for the judge's verdict cache (J6, gate runs only), shared by every worker; empty: each worker caches in its own memory. */
  readonly redisUrl: string;
  readonly judgeCachePrefix: string;
  readonly judgeCacheTtlSeconds: number;
}

/** Everything the scoring worker reads from its environment, validated once at boot (X3). */
export interface WorkerConfig extends WorkerEnvConfig {
  /** The judge of `llm_judge` cases (S3, J1), or null when `JUDGE_PROVIDER` is unset (`judge_not_configured`). */
  readonly judge: JudgeAdapterConfig | null;
}

export const DEFAULT_PORT = 3002;

export const workerConfigSpec: EnvSpec<WorkerEnvConfig> = {
  ...commonConfigSpec(DEFAULT_PORT),
  ...hmacConfigSpec,
  maxBatch: {
    env: 'WORKER_MAX_BATCH',
    parse: parsers.integer(500, 1, 5_000),
    description: 'most work messages scored in one micro-batch (one database transaction)',
  },
  redisUrl: {
    env: 'REDIS_URL',
    parse: (raw) => (raw === undefined || raw === '' ? { ok: true, value: '' } : parsers.url(['redis', 'rediss'])(raw)),
    secret: true,
    description: 'Redis for the verdict cache of gate runs (J6), shared by every worker; unset: each worker caches in memory',
  },
  judgeCachePrefix: {
    env: 'JUDGE_CACHE_PREFIX',
    parse: (raw) => {
      const value = raw === undefined || raw === '' ? 'evals:judge:verdict:' : raw;
      return /^[A-Za-z0-9_:.-]{1,100}$/.test(value) ? { ok: true, value } : { ok: false, problem: 'may contain only letters, digits and _ : . - (at most 100)' };
    },
    description: 'key prefix of cached verdicts in Redis',
  },
  judgeCacheTtlSeconds: {
    env: 'JUDGE_CACHE_TTL_SECONDS',
    parse: parsers.integer(30 * 24 * 3600, 60, 365 * 24 * 3600),
    description: 'how long a cached verdict is kept',
  },
};

/** Throws ConfigError naming every bad variable (never a secret's value), the judge's included. */
export function loadWorkerConfig(env: Readonly<Record<string, string | undefined>> = process.env, options: ConfigOptions = {}): WorkerConfig {
  const problems: string[] = [];
  let base: WorkerEnvConfig | undefined;
  try {
    base = loadConfig({ ...workerConfigSpec, ...commonConfigSpec(DEFAULT_PORT, options) }, env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push(...error.problems);
  }
  let judge: JudgeAdapterConfig | null = null;
  try {
    judge = loadJudgeConfig(env);
  } catch (error) {
    if (!(error instanceof JudgeConfigError)) throw error;
    problems.push(...error.lines);
  }
  if (problems.length > 0 || !base) throw new ConfigError(problems);
  return { ...base, judge };
}
