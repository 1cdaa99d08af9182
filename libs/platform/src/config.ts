/**
 * Configuration from environment variables, read once and validated at boot (X3): every problem is
 * reported, each on its own line, before anything connects. Secret values are never echoed - a message
 * names the variable and what is wrong with it, not its value.
 */
export type EnvSpec<T> = { [K in keyof T]: VariableSpec<T[K]> };

export interface VariableSpec<V> {
  readonly env: string;
  /** `env` is the whole environment, for the rare rule that depends on another variable (EVALS_AUTH). */
  readonly parse: (raw: string | undefined, env: Readonly<Record<string, string | undefined>>) => { ok: true; value: V } | { ok: false; problem: string };
  readonly secret?: boolean;
  readonly description: string;
}

export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID';
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export function loadConfig<T>(spec: EnvSpec<T>, env: Readonly<Record<string, string | undefined>>): T {
  const problems: string[] = [];
  const out: Partial<T> = {};
  for (const key of Object.keys(spec) as Array<keyof T>) {
    const variable = spec[key];
    const result = variable.parse(env[variable.env], env);
    if (result.ok) out[key] = result.value;
    else problems.push(`${variable.env}: ${result.problem}`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return out as T;
}

type Parsed<V> = { ok: true; value: V } | { ok: false; problem: string };

export const parsers = {
  requiredString:
    (minLength = 1) =>
    (raw: string | undefined): Parsed<string> =>
      raw === undefined || raw === ''
        ? { ok: false, problem: 'is required' }
        : raw.length < minLength
          ? { ok: false, problem: `must be at least ${minLength} characters` }
          : { ok: true, value: raw },
  optionalString:
    (fallback: string) =>
    (raw: string | undefined): Parsed<string> => ({ ok: true, value: raw === undefined || raw === '' ? fallback : raw }),
  url:
    (protocols: readonly string[], fallback?: string) =>
    (raw: string | undefined): Parsed<string> => {
      const value = raw === undefined || raw === '' ? fallback : raw;
      if (value === undefined) return { ok: false, problem: `is required (a ${protocols.join(' or ')} URL)` };
      try {
        const url = new URL(value);
        if (!protocols.includes(url.protocol.replace(/:$/, ''))) {
          return { ok: false, problem: `must be a ${protocols.join(' or ')} URL` };
        }
        return { ok: true, value };
      } catch {
        return { ok: false, problem: `is not a valid URL` };
      }
    },
  integer:
    (fallback: number, min: number, max: number) =>
    (raw: string | undefined): Parsed<number> => {
      if (raw === undefined || raw === '') return { ok: true, value: fallback };
      const n = Number(raw);
      return Number.isInteger(n) && n >= min && n <= max
        ? { ok: true, value: n }
        : { ok: false, problem: `must be an integer from ${min} to ${max}` };
    },
  optionalUrl:
    (protocols: readonly string[]) =>
    (raw: string | undefined): Parsed<string> => {
      if (raw === undefined || raw === '') return { ok: true, value: '' };
      try {
        const url = new URL(raw);
        return protocols.includes(url.protocol.replace(/:$/, '')) ? { ok: true, value: raw } : { ok: false, problem: `must be a ${protocols.join(' or ')} URL` };
      } catch {
        return { ok: false, problem: `is not a valid URL` };
      }
    },
  oneOf:
    <V extends string>(values: readonly V[], fallback: V) =>
    (raw: string | undefined): Parsed<V> =>
      raw === undefined || raw === ''
        ? { ok: true, value: fallback }
        : (values as readonly string[]).includes(raw)
          ? { ok: true, value: raw as V }
          : { ok: false, problem: `must be one of ${values.join(', ')}` },
  identifier:
    (fallback: string) =>
    (raw: string | undefined): Parsed<string> => {
      const value = raw ?? fallback;
      return /^[A-Za-z0-9_]*$/.test(value) ? { ok: true, value } : { ok: false, problem: 'may contain only letters, digits and _' };
    },
};

/**
 * Access control (docs/security.md): API keys with tiers on every HTTP route, and per-key rate limits on
 * write routes. Part of every app's configuration, because InfrastructureModule installs the guard in all.
 */
export interface AuthConfig {
  /** `required` (default): every route but /health and /metrics needs a key. `disabled`: local embedded/demo use only. */
  readonly authMode: 'required' | 'disabled';
  /** Write requests (POST, PUT, PATCH, DELETE) per key per minute: a token bucket of this size, refilled continuously. */
  readonly rateLimitPerMinute: number;
  /** Redis for rate limits shared by every replica; empty: each process counts alone, in memory. */
  readonly redisUrl: string;
  /** Server-side pepper of the API key hashes; must be the same for the apps and the key command. */
  readonly apiKeyPepper: string;
}

export const authConfigSpec: EnvSpec<AuthConfig> = {
  authMode: {
    env: 'EVALS_AUTH',
    parse: (raw, env) => {
      const parsed = parsers.oneOf(['required', 'disabled'] as const, 'required')(raw);
      if (parsed.ok && parsed.value === 'disabled' && env['NODE_ENV'] === 'production') {
        return { ok: false, problem: 'disabled is refused when NODE_ENV=production (it serves every request as admin)' };
      }
      return parsed;
    },
    description: 'required (default) or disabled (local embedded/demo use only)',
  },
  rateLimitPerMinute: { env: 'EVALS_RATE_LIMIT_PER_MINUTE', parse: parsers.integer(600, 1, 1_000_000), description: 'write requests per API key per minute' },
  redisUrl: { env: 'REDIS_URL', parse: parsers.optionalUrl(['redis', 'rediss']), secret: true, description: 'Redis for shared rate limits (empty: in memory per process)' },
  apiKeyPepper: { env: 'EVALS_API_KEY_PEPPER', parse: parsers.optionalString(''), secret: true, description: 'pepper of the API key hashes' },
};

/** What every service process needs; apps add their own variables next to these. */
export interface CommonConfig extends AuthConfig {
  readonly databaseUrl: string;
  readonly databaseSchema: string;
  readonly natsUrl: string;
  readonly streamPrefix: string;
  readonly subjectPrefix: string;
  readonly httpPort: number;
  readonly logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** `boot`: each app applies pending migrations at start; `job`: a migration job does, apps only check. */
  readonly migrateMode: 'boot' | 'job';
  /** Replicas of the JetStream streams the apps declare (3 on a cluster). */
  readonly streamReplicas: number;
  readonly databasePoolSize: number;
  /** Connections opened at boot and kept open however idle, at most `databasePoolSize` (issue 28: the first burst's latency). */
  readonly databasePoolWarm: number;
}

/**
 * `servers: 'optional'` is the embedded all-in-one (`evals serve`, docs/embedded.md): DATABASE_URL and
 * NATS_URL may be left empty, and each empty one is served by its embedded adapter (PGlite, the in-process
 * bus). A service process of a deployment requires both.
 */
export interface ConfigOptions {
  readonly servers?: 'required' | 'optional';
}

export const commonConfigSpec = (defaultPort: number, options: ConfigOptions = {}): EnvSpec<CommonConfig> => ({
  databaseUrl: {
    env: 'DATABASE_URL',
    parse: options.servers === 'optional' ? parsers.optionalUrl(['postgres', 'postgresql']) : parsers.url(['postgres', 'postgresql']),
    secret: true,
    description: 'PostgreSQL connection string',
  },
  databaseSchema: { env: 'DATABASE_SCHEMA', parse: parsers.identifier(''), description: 'schema for all tables (empty: the default search_path)' },
  natsUrl: { env: 'NATS_URL', parse: options.servers === 'optional' ? parsers.optionalUrl(['nats', 'tls']) : parsers.url(['nats', 'tls']), description: 'NATS server with JetStream' },
  streamPrefix: { env: 'EVALS_STREAM_PREFIX', parse: parsers.identifier(''), description: 'prefix of JetStream stream names' },
  subjectPrefix: { env: 'EVALS_SUBJECT_PREFIX', parse: parsers.identifier(''), description: 'prefix of every subject (tests, shared clusters)' },
  httpPort: { env: 'PORT', parse: parsers.integer(defaultPort, 0, 65535), description: 'HTTP port (health, API)' },
  logLevel: { env: 'LOG_LEVEL', parse: parsers.oneOf(['debug', 'info', 'warn', 'error'] as const, 'info'), description: 'lowest level logged' },
  migrateMode: { env: 'EVALS_MIGRATE', parse: parsers.oneOf(['boot', 'job'] as const, 'boot'), description: 'who applies migrations' },
  streamReplicas: { env: 'EVALS_STREAM_REPLICAS', parse: parsers.integer(1, 1, 5), description: 'JetStream stream replicas' },
  databasePoolSize: { env: 'DATABASE_POOL_SIZE', parse: parsers.integer(10, 1, 200), description: 'PostgreSQL connections per process' },
  databasePoolWarm: {
    env: 'DATABASE_POOL_WARM',
    parse: (raw, env) => {
      // Bounded by the pool it warms, whole by default. An invalid pool size is reported under its own name.
      const pool = parsers.integer(10, 1, 200)(env['DATABASE_POOL_SIZE']);
      return pool.ok ? parsers.integer(pool.value, 0, pool.value)(raw) : parsers.integer(0, 0, 200)(raw);
    },
    description: 'PostgreSQL connections opened at boot and kept open (default: DATABASE_POOL_SIZE)',
  },
  ...authConfigSpec,
});

/** The key of the one-way detail hash (D2). Required: without it short outputs could be guessed back. */
export interface HmacConfig {
  readonly hmacSecret: string;
}

export const hmacConfigSpec: EnvSpec<HmacConfig> = {
  hmacSecret: { env: 'EVALS_HMAC_SECRET', parse: parsers.requiredString(32), secret: true, description: 'HMAC-SHA256 key for evidence detail hashes, at least 32 characters' },
};
