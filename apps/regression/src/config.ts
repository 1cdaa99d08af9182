import { commonConfigSpec, loadConfig, type CommonConfig } from '@evals/platform';

export function loadRegressionConfig(env: Readonly<Record<string, string | undefined>>): CommonConfig {
  return loadConfig(commonConfigSpec(3004), env);
}
