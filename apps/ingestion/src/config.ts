import { JUDGE_PROMPT_V1 } from '@evals/domain';
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
  readonly judge: { readonly model: string; readonly prompt_version: string; readonly credential_missing: boolean } | null;
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
  };
  const base = loadConfig<Omit<IngestionConfig, 'judge'>>(spec as EnvSpec<Omit<IngestionConfig, 'judge'>>, env);
  try {
    const judge = loadJudgeConfig(env);
    return {
      ...base,
      judge: judge && { model: judge.model, prompt_version: JUDGE_PROMPT_V1.id, credential_missing: providerNeedsApiKey(judge.provider) && !judge.apiKey },
    };
  } catch (error) {
    if (error instanceof JudgeConfigError) throw new ConfigError([`${error.variable}: ${error.message}`]);
    throw error;
  }
}

function suiteKeyList(raw: string | undefined): { ok: true; value: string[] } | { ok: false; problem: string } {
  const keys = (raw ?? '').split(',').map((k) => k.trim()).filter(Boolean);
  const bad = keys.filter((k) => !/^[a-z0-9][a-z0-9._-]{0,127}$/.test(k));
  return bad.length > 0 ? { ok: false, problem: 'must be a comma-separated list of suite keys' } : { ok: true, value: keys };
}
