import { commonConfigSpec, loadConfig, parsers, type CommonConfig, type EnvSpec } from '@evals/platform';

export const INGESTION_CONFIG = Symbol('INGESTION_CONFIG');

export interface IngestionConfig extends CommonConfig {
  /** How long `POST /v1/runs` waits for the completed run before answering 202. */
  readonly runTimeoutMs: number;
  readonly bodyLimitMb: number;
}

export function loadIngestionConfig(env: Readonly<Record<string, string | undefined>>): IngestionConfig {
  const spec: EnvSpec<IngestionConfig> = {
    ...commonConfigSpec(3001),
    runTimeoutMs: { env: 'RUN_TIMEOUT_MS', parse: parsers.integer(120_000, 100, 3_600_000), description: 'synchronous run wait' },
    bodyLimitMb: { env: 'HTTP_BODY_LIMIT_MB', parse: parsers.integer(64, 1, 1024), description: 'largest request body' },
  };
  return loadConfig(spec, env);
}
