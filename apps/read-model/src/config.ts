import { commonConfigSpec, loadConfig, parsers, type CommonConfig, type ConfigOptions, type EnvSpec } from '@evals/platform';

/** The read model's configuration (X3): the common variables plus its own, validated at boot. */
export interface ReadModelConfig extends CommonConfig {
  /** Events projected per micro-batch (one transaction). */
  readonly maxBatch: number;
  /** The address people open the dashboard at (docs/dashboard.md); empty: links are relative. */
  readonly publicUrl: string;
  /** Four-app deployment: where the dashboard's gate and finding/judge requests are forwarded (empty: same origin). */
  readonly dashboardIngestionUrl: string;
  readonly dashboardRegressionUrl: string;
}

export const READ_MODEL_DEFAULT_PORT = 3003;

export const readModelConfigSpec: EnvSpec<ReadModelConfig> = {
  ...commonConfigSpec(READ_MODEL_DEFAULT_PORT),
  maxBatch: { env: 'READ_MODEL_MAX_BATCH', parse: parsers.integer(500, 1, 5_000), description: 'events projected per micro-batch (one transaction)' },
  publicUrl: { env: 'EVALS_PUBLIC_URL', parse: parsers.optionalUrl(['http', 'https']), description: 'the public address of the dashboard, for links (docs/dashboard.md)' },
  dashboardIngestionUrl: { env: 'DASHBOARD_INGESTION_URL', parse: parsers.optionalUrl(['http', 'https']), description: 'the ingestion app the dashboard forwards gate requests to (empty: this process serves them)' },
  dashboardRegressionUrl: { env: 'DASHBOARD_REGRESSION_URL', parse: parsers.optionalUrl(['http', 'https']), description: 'the regression app the dashboard forwards finding and judge requests to (empty: this process serves them)' },
};

/** Throws ConfigError listing every problem. */
export function loadReadModelConfig(env: Readonly<Record<string, string | undefined>> = process.env, options: ConfigOptions = {}): ReadModelConfig {
  return loadConfig({ ...readModelConfigSpec, ...commonConfigSpec(READ_MODEL_DEFAULT_PORT, options) }, env);
}

/** What the rebuild command needs: the database only. */
export interface RebuildConfig {
  readonly databaseUrl: string;
  readonly databaseSchema: string;
  readonly pageSize: number;
  readonly logLevel: CommonConfig['logLevel'];
}

export function loadRebuildConfig(env: Readonly<Record<string, string | undefined>> = process.env): RebuildConfig {
  const common = commonConfigSpec(READ_MODEL_DEFAULT_PORT);
  return loadConfig<RebuildConfig>(
    {
      databaseUrl: common.databaseUrl,
      databaseSchema: common.databaseSchema,
      logLevel: common.logLevel,
      pageSize: { env: 'REBUILD_PAGE_SIZE', parse: parsers.integer(1_000, 1, 10_000), description: 'events replayed per page' },
    },
    env,
  );
}
