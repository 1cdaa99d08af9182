import { DEFAULT_ESTIMATED_OUTPUT_TOKENS, DEFAULT_MIN_JUDGE_STABILITY, JUDGE_PROMPT_V1, type JudgePricing } from '@evals/domain';
import { JudgeConfigError, loadJudgeConfig, providerNeedsApiKey } from '@evals/judge';
import { ConfigError, commonConfigSpec, hmacConfigSpec, loadConfig, parsers, type CommonConfig, type ConfigOptions, type EnvSpec, type HmacConfig } from '@evals/platform';

export const INGESTION_CONFIG = Symbol('INGESTION_CONFIG');

export interface IngestionConfig extends CommonConfig, HmacConfig {
  /** R7: an open run nobody sealed is sealed by the system (`expired`) this long after it was opened. */
  readonly runTtlSeconds: number;
  /** How long `POST /v1/runs` waits for the completed run before answering 202. */
  readonly runTimeoutMs: number;
  readonly bodyLimitMb: number;
  /** Monitor suites (D3) every sampled session signal is scored by; empty: the monitor is off. */
  readonly monitorSuites: readonly string[];
  readonly monitorWindowSeconds: number;
  readonly monitorGraceSeconds: number;
  /** The judge the scoring workers call, as the gate needs to know it (J4, GT2); null when none is configured. */
  readonly judge: { readonly model: string; readonly prompt_version: string; readonly credential_missing: boolean; readonly pricing?: JudgePricing } | null;
  /** Issue 13: the least verdict stability the gate accepts (cases judged with `repeats`), and whether below it fails or warns. */
  readonly judgeMinStability?: number;
  readonly judgeUnstable?: 'warn' | 'fail';
  /** Issue 13: output tokens assumed per judge call when the gate estimates a judge spend against the budgets. */
  readonly judgeEstimatedOutputTokens?: number;
}

export function loadIngestionConfig(env: Readonly<Record<string, string | undefined>>, options: ConfigOptions = {}): IngestionConfig {
  const spec: EnvSpec<Omit<IngestionConfig, 'judge'>> = {
    ...commonConfigSpec(3001, options),
    // The request hash keys each output as evidence does (D2), so a run id's content can be compared.
    ...hmacConfigSpec,
    runTtlSeconds: { env: 'EVALS_RUN_TTL_SECONDS', parse: parsers.integer(3600, 1, 30 * 24 * 3600), description: 'how long a run may stay open before it expires' },
    runTimeoutMs: { env: 'RUN_TIMEOUT_MS', parse: parsers.integer(120_000, 100, 3_600_000), description: 'synchronous run wait' },
    bodyLimitMb: { env: 'HTTP_BODY_LIMIT_MB', parse: parsers.integer(64, 1, 1024), description: 'largest request body' },
    monitorSuites: { env: 'EVALS_MONITOR_SUITES', parse: suiteKeyList, description: 'comma-separated monitor suite keys' },
    monitorWindowSeconds: { env: 'EVALS_MONITOR_WINDOW_SECONDS', parse: parsers.integer(3600, 1, 7 * 24 * 3600), description: 'monitor window width' },
    monitorGraceSeconds: { env: 'EVALS_MONITOR_GRACE_SECONDS', parse: parsers.integer(300, 0, 24 * 3600), description: 'how long a window waits for late signals after its end' },
    judgeMinStability: { env: 'GATE_JUDGE_MIN_STABILITY', parse: unitFraction(DEFAULT_MIN_JUDGE_STABILITY), description: 'least verdict stability of a judge with repeats before the gate says judge_unstable (0-1)' },
    judgeUnstable: { env: 'GATE_JUDGE_UNSTABLE', parse: parsers.oneOf(['warn', 'fail'] as const, 'warn'), description: 'judge_unstable warns, or fails the gate' },
    judgeEstimatedOutputTokens: {
      env: 'JUDGE_ESTIMATED_REPLY_LENGTH',
      parse: parsers.integer(DEFAULT_ESTIMATED_OUTPUT_TOKENS, 1, 100_000),
      description: 'output tokens assumed per judge call in the gate budget estimate',
    },
  };
  // X3: the base and the judge configuration's problems are reported together.
  const problems: string[] = [];
  let base: Omit<IngestionConfig, 'judge'> | null = null;
  try {
    base = loadConfig<Omit<IngestionConfig, 'judge'>>(spec as EnvSpec<Omit<IngestionConfig, 'judge'>>, env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push(...error.problems);
  }
  let judge: ReturnType<typeof loadJudgeConfig> = null;
  try {
    judge = loadJudgeConfig(env);
  } catch (error) {
    if (!(error instanceof JudgeConfigError)) throw error;
    problems.push(...error.lines);
  }
  if (problems.length > 0 || !base) throw new ConfigError(problems);
  return {
    ...base,
    judge: judge && { model: judge.model, prompt_version: JUDGE_PROMPT_V1.id, credential_missing: providerNeedsApiKey(judge.provider) && !judge.apiKey, pricing: judge.pricing },
  };
}

/** A number in [0, 1] (a share). */
function unitFraction(fallback: number): (raw: string | undefined) => { ok: true; value: number } | { ok: false; problem: string } {
  return (raw) => {
    if (raw === undefined || raw.trim() === '') return { ok: true, value: fallback };
    const value = Number(raw);
    return Number.isFinite(value) && value >= 0 && value <= 1 ? { ok: true, value } : { ok: false, problem: 'must be a number from 0 to 1' };
  };
}

function suiteKeyList(raw: string | undefined): { ok: true; value: string[] } | { ok: false; problem: string } {
  const keys = (raw ?? '').split(',').map((k) => k.trim()).filter(Boolean);
  const bad = keys.filter((k) => !/^[a-z0-9][a-z0-9._-]{0,127}$/.test(k));
  return bad.length > 0 ? { ok: false, problem: 'must be a comma-separated list of suite keys' } : { ok: true, value: keys };
}
