import { JudgeError } from '@evals/domain';
import type { JudgeAdapterConfig } from './config';
import { LangChainJudge } from './langchain-judge';

const config: JudgeAdapterConfig = {
  provider: 'openai',
  model: 'gpt-4o-2024-08-06',
  baseUrl: 'http://127.0.0.1:9/v1',
  timeoutMs: 1000,
  maxRetries: 0,
  concurrency: 1,
  pricing: { input_per_mtok_usd: 1, output_per_mtok_usd: 1 },
};

async function judgeError(p: Promise<unknown>): Promise<JudgeError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof JudgeError) return e;
    throw e;
  }
  throw new Error('expected a JudgeError');
}

describe('LangChainJudge without a network (J1, GT2)', () => {
  it('no API key: judge_credential_missing, and no model is even built', async () => {
    let built = 0;
    const judge = new LangChainJudge(config, {
      createModel: () => {
        built++;
        throw new Error('must not build');
      },
    });
    expect(judge.credentialMissing).toBe(true);
    const err = await judgeError(judge.judge({ output: 'o', rubric: 'r' }));
    expect(err.code).toBe('judge_credential_missing');
    expect(err.details.attempts).toBe(0);
    expect(built).toBe(0);
  });

  it('Ollama needs no key', () => {
    expect(new LangChainJudge({ ...config, provider: 'ollama', model: 'llama3.1:8b' }).credentialMissing).toBe(false);
  });

  it('D1, J2: refuses to call while LangChain tracing or verbose logging is on', async () => {
    let built = 0;
    const judge = new LangChainJudge(
      { ...config, apiKey: 'k' },
      {
        env: { LANGCHAIN_VERBOSE: 'true' },
        createModel: () => {
          built++;
          throw new Error('must not build');
        },
      },
    );
    const err = await judgeError(judge.judge({ output: 'o', rubric: 'r' }));
    expect(err).toMatchObject({ code: 'judge_unavailable', details: { reason: 'tracing_enabled' } });
    expect(built).toBe(0);
  });

  it('exposes its model pin and prompt version', () => {
    const judge = new LangChainJudge({ ...config, apiKey: 'k' });
    expect(judge.model).toBe('gpt-4o-2024-08-06');
    expect(judge.promptVersion).toBe('judge-v1');
    expect(judge.pairwisePromptVersion).toBe('pairwise-v1');
  });
});
