import { JudgeConfigError, loadJudgeConfig, validateJudgeConfig, type JudgeAdapterConfig } from './config';

const openai = {
  JUDGE_PROVIDER: 'openai',
  JUDGE_MODEL: 'gpt-4o-2024-08-06',
  JUDGE_API_KEY: 'sk-test-secret-value',
  JUDGE_INPUT_USD_PER_MTOK: '2.5',
  JUDGE_OUTPUT_USD_PER_MTOK: '10',
};

function codeOf(run: () => unknown): { code: string; variable: string; message: string } {
  try {
    run();
  } catch (e) {
    if (e instanceof JudgeConfigError) return { code: e.code, variable: e.variable, message: e.message };
    throw e;
  }
  throw new Error('expected a JudgeConfigError');
}

describe('loadJudgeConfig (J1)', () => {
  it('returns null when JUDGE_PROVIDER is unset or empty', () => {
    expect(loadJudgeConfig({})).toBeNull();
    expect(loadJudgeConfig({ JUDGE_PROVIDER: '  ', JUDGE_MODEL: 'x' })).toBeNull();
  });

  it('reads a full OpenAI-compatible configuration with defaults', () => {
    expect(loadJudgeConfig({ ...openai, JUDGE_BASE_URL: 'http://127.0.0.1:8000/v1' })).toEqual({
      provider: 'openai',
      model: 'gpt-4o-2024-08-06',
      baseUrl: 'http://127.0.0.1:8000/v1',
      apiKey: 'sk-test-secret-value',
      timeoutMs: 30_000,
      maxRetries: 3,
      concurrency: 4,
      pricing: { input_per_mtok_usd: 2.5, output_per_mtok_usd: 10 },
    });
  });

  it('reads timeout, retries and concurrency', () => {
    const c = loadJudgeConfig({ ...openai, JUDGE_TIMEOUT_MS: '1500', JUDGE_MAX_RETRIES: '0', JUDGE_CONCURRENCY: '16' });
    expect(c).toMatchObject({ timeoutMs: 1500, maxRetries: 0, concurrency: 16 });
  });

  it('GT2: a missing API key is not a config error (the judge answers credential_missing)', () => {
    const { JUDGE_API_KEY: _k, ...noKey } = openai;
    const c = loadJudgeConfig(noKey);
    expect(c).not.toBeNull();
    expect(c?.apiKey).toBeUndefined();
  });

  it('Ollama needs no key and defaults to zero pricing', () => {
    expect(loadJudgeConfig({ JUDGE_PROVIDER: 'ollama', JUDGE_MODEL: 'llama3.1:8b-instruct-q8_0' })).toMatchObject({
      provider: 'ollama',
      pricing: { input_per_mtok_usd: 0, output_per_mtok_usd: 0 },
    });
  });

  it.each([
    [{ ...openai, JUDGE_PROVIDER: 'gemini' }, 'JUDGE_PROVIDER'],
    [{ ...openai, JUDGE_MODEL: '' }, 'JUDGE_MODEL'],
    [{ ...openai, JUDGE_MODEL: 'claude-3-5-sonnet-latest' }, 'JUDGE_MODEL'],
    [{ JUDGE_PROVIDER: 'ollama', JUDGE_MODEL: 'llama3' }, 'JUDGE_MODEL'],
    [{ JUDGE_PROVIDER: 'ollama', JUDGE_MODEL: 'llama3:latest' }, 'JUDGE_MODEL'],
    [{ ...openai, JUDGE_BASE_URL: 'not a url' }, 'JUDGE_BASE_URL'],
    [{ ...openai, JUDGE_BASE_URL: 'ftp://x/v1' }, 'JUDGE_BASE_URL'],
    [{ ...openai, JUDGE_TIMEOUT_MS: '0' }, 'JUDGE_TIMEOUT_MS'],
    [{ ...openai, JUDGE_TIMEOUT_MS: '1e3' }, 'JUDGE_TIMEOUT_MS'],
    [{ ...openai, JUDGE_MAX_RETRIES: '-1' }, 'JUDGE_MAX_RETRIES'],
    [{ ...openai, JUDGE_MAX_RETRIES: '11' }, 'JUDGE_MAX_RETRIES'],
    [{ ...openai, JUDGE_CONCURRENCY: '0' }, 'JUDGE_CONCURRENCY'],
    [{ ...openai, JUDGE_INPUT_USD_PER_MTOK: '' }, 'JUDGE_INPUT_USD_PER_MTOK'],
    [{ ...openai, JUDGE_OUTPUT_USD_PER_MTOK: 'cheap' }, 'JUDGE_OUTPUT_USD_PER_MTOK'],
    [{ ...openai, JUDGE_OUTPUT_USD_PER_MTOK: '-1' }, 'JUDGE_OUTPUT_USD_PER_MTOK'],
  ])('refuses %j naming %s', (env, variable) => {
    const err = codeOf(() => loadJudgeConfig(env));
    expect(err.code).toBe('JUDGE_CONFIG_INVALID');
    expect(err.variable).toBe(variable);
  });

  it('a paid provider must declare its pricing (never zero cost by omission)', () => {
    const { JUDGE_INPUT_USD_PER_MTOK: _i, ...noPrice } = openai;
    expect(codeOf(() => loadJudgeConfig(noPrice)).variable).toBe('JUDGE_INPUT_USD_PER_MTOK');
    expect(loadJudgeConfig({ ...openai, JUDGE_INPUT_USD_PER_MTOK: '0', JUDGE_OUTPUT_USD_PER_MTOK: '0' })?.pricing).toEqual({ input_per_mtok_usd: 0, output_per_mtok_usd: 0 });
  });

  it('D1, J2: refuses LangChain tracing or verbose logging', () => {
    for (const name of ['LANGSMITH_TRACING', 'LANGCHAIN_TRACING_V2', 'LANGCHAIN_VERBOSE']) {
      const err = codeOf(() => loadJudgeConfig({ ...openai, [name]: 'true' }));
      expect(err).toMatchObject({ code: 'JUDGE_TRACING_FORBIDDEN', variable: name });
    }
    expect(loadJudgeConfig({ ...openai, LANGSMITH_TRACING: 'false' })).not.toBeNull();
  });

  it('never puts the API key in an error message', () => {
    const err = codeOf(() => loadJudgeConfig({ ...openai, JUDGE_TIMEOUT_MS: 'x' }));
    expect(err.message).not.toContain(openai.JUDGE_API_KEY);
  });
});

describe('validateJudgeConfig', () => {
  const ok: JudgeAdapterConfig = {
    provider: 'openai',
    model: 'gpt-4o-2024-08-06',
    apiKey: 'k',
    timeoutMs: 1000,
    maxRetries: 2,
    concurrency: 2,
    pricing: { input_per_mtok_usd: 1, output_per_mtok_usd: 2 },
  };

  it('accepts a valid config and refuses bad numbers', () => {
    expect(validateJudgeConfig(ok)).toBe(ok);
    expect(() => validateJudgeConfig({ ...ok, concurrency: 0 })).toThrow(JudgeConfigError);
    expect(() => validateJudgeConfig({ ...ok, timeoutMs: 1.5 })).toThrow(JudgeConfigError);
    expect(() => validateJudgeConfig({ ...ok, pricing: { input_per_mtok_usd: Number.NaN, output_per_mtok_usd: 0 } })).toThrow(JudgeConfigError);
    expect(() => validateJudgeConfig({ ...ok, temperature: 3 })).toThrow(JudgeConfigError);
    expect(validateJudgeConfig({ ...ok, temperature: null })).toBeTruthy();
  });
});

describe('loadJudgeConfig reports every problem at once (X3, issue 13)', () => {
  it('a floating model, a bad URL, a bad integer and a missing price are all named in one error', () => {
    const env = {
      JUDGE_PROVIDER: 'openai',
      JUDGE_MODEL: 'gpt-4o-latest',
      JUDGE_BASE_URL: 'not a url',
      JUDGE_TIMEOUT_MS: 'soon',
      JUDGE_INPUT_USD_PER_MTOK: '2.5',
      LANGCHAIN_TRACING_V2: 'true',
    };
    let error: JudgeConfigError | undefined;
    try {
      loadJudgeConfig(env);
    } catch (e) {
      error = e as JudgeConfigError;
    }
    expect(error).toBeInstanceOf(JudgeConfigError);
    expect(error!.problems.map((p) => p.variable)).toEqual(['LANGCHAIN_TRACING_V2', 'JUDGE_MODEL', 'JUDGE_BASE_URL', 'JUDGE_TIMEOUT_MS', 'JUDGE_OUTPUT_USD_PER_MTOK']);
    expect(error!.problems[0]).toMatchObject({ code: 'JUDGE_TRACING_FORBIDDEN' });
    expect(error!.lines).toHaveLength(5);
    for (const p of error!.problems) expect(error!.message).toContain(p.message);
  });

  it('validateJudgeConfig lists every problem of a config built in code', () => {
    const bad = { provider: 'openai', model: 'latest', timeoutMs: 0, maxRetries: 99, concurrency: 1, pricing: { input_per_mtok_usd: -1, output_per_mtok_usd: 0 } } as JudgeAdapterConfig;
    try {
      validateJudgeConfig(bad);
      throw new Error('expected a JudgeConfigError');
    } catch (e) {
      expect((e as JudgeConfigError).problems.map((p) => p.variable)).toEqual(['model', 'timeoutMs', 'maxRetries', 'pricing.input_per_mtok_usd']);
    }
  });
});
