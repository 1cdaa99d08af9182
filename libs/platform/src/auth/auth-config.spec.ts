import { ConfigError, authConfigSpec, commonConfigSpec, loadConfig } from '../config';

const base = { DATABASE_URL: 'postgres://u@h/db', NATS_URL: 'nats://h:4222' };

describe('access control configuration (X3)', () => {
  it('defaults: auth required, 600 writes per key per minute, rate limits in memory, no pepper', () => {
    expect(loadConfig(commonConfigSpec(3001), base)).toMatchObject({ authMode: 'required', rateLimitPerMinute: 600, redisUrl: '', apiKeyPepper: '' });
  });

  it('reads every variable', () => {
    const c = loadConfig(authConfigSpec, { EVALS_AUTH: 'disabled', EVALS_RATE_LIMIT_PER_MINUTE: '5', REDIS_URL: 'redis://127.0.0.1:6379', EVALS_API_KEY_PEPPER: 'p' });
    expect(c).toEqual({ authMode: 'disabled', rateLimitPerMinute: 5, redisUrl: 'redis://127.0.0.1:6379', apiKeyPepper: 'p' });
  });

  it('refuses EVALS_AUTH=disabled when NODE_ENV=production, and bad values, one problem each, never echoing a secret', () => {
    let error: unknown;
    try {
      loadConfig(authConfigSpec, { NODE_ENV: 'production', EVALS_AUTH: 'disabled', EVALS_RATE_LIMIT_PER_MINUTE: '0', REDIS_URL: 'http://user:hunter2@x' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems).toEqual([
      expect.stringMatching(/^EVALS_AUTH: disabled is refused when NODE_ENV=production/),
      expect.stringMatching(/^EVALS_RATE_LIMIT_PER_MINUTE: /),
      expect.stringMatching(/^REDIS_URL: must be a redis or rediss URL/),
    ]);
    expect(problems.join('\n')).not.toContain('hunter2');
    expect(() => loadConfig(authConfigSpec, { EVALS_AUTH: 'off' })).toThrow(/EVALS_AUTH: must be one of required, disabled/);
    expect(loadConfig(authConfigSpec, { NODE_ENV: 'production', EVALS_AUTH: 'required' }).authMode).toBe('required');
  });
});
