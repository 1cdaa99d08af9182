import { commonConfigSpec, loadConfig, type CommonConfig, type ConfigOptions } from '@evals/platform';

export function loadRegressionConfig(env: Readonly<Record<string, string | undefined>>, options: ConfigOptions = {}): CommonConfig {
  return loadConfig(commonConfigSpec(3004, options), env);
}
