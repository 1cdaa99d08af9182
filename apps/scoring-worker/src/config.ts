import { commonConfigSpec, hmacConfigSpec, loadConfig, parsers, type CommonConfig, type EnvSpec, type HmacConfig } from '@evals/platform';

/** Everything the scoring worker reads from its environment, validated once at boot (X3). */
export interface WorkerConfig extends CommonConfig, HmacConfig {
  /** Most work messages handled in one micro-batch (one transaction). */
  readonly maxBatch: number;
}

export const DEFAULT_PORT = 3002;

export const workerConfigSpec: EnvSpec<WorkerConfig> = {
  ...commonConfigSpec(DEFAULT_PORT),
  ...hmacConfigSpec,
  maxBatch: {
    env: 'WORKER_MAX_BATCH',
    parse: parsers.integer(500, 1, 5_000),
    description: 'most work messages scored in one micro-batch (one database transaction)',
  },
};

/** Throws ConfigError naming every bad variable (never a secret's value). */
export function loadWorkerConfig(env: Readonly<Record<string, string | undefined>> = process.env): WorkerConfig {
  return loadConfig(workerConfigSpec, env);
}
