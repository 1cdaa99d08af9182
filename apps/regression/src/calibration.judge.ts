import { JudgeConfigError, LangChainJudge, loadJudgeConfig, type Env } from '@evals/judge';
import { ConfigError } from '@evals/platform';

/** Injection token of the regression app's judge (calibration J4, pairwise J5): a LangChainJudge, or null. */
export const REGRESSION_JUDGE = Symbol('REGRESSION_JUDGE');

/**
 * The judge calibration and pairwise comparison measure. Built from the same `JUDGE_*` variables as the
 * scoring worker's (docs/judge.md), so the pin calibrated here is the pin that grades runs. No verdict
 * cache: a calibration measures the judge as it answers now, never a recorded verdict (J4, J6).
 * A bad variable is a ConfigError naming it (X3); an unset JUDGE_PROVIDER is null (no judge).
 */
export function loadRegressionJudge(env: Env): LangChainJudge | null {
  try {
    const config = loadJudgeConfig(env);
    return config ? new LangChainJudge(config) : null;
  } catch (error) {
    if (error instanceof JudgeConfigError) throw new ConfigError(error.lines);
    throw error;
  }
}
