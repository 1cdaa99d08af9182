import { ConfigError } from '@evals/platform';
import { loadIngestionConfig } from './config';

/** X3 (issue 13): the ingestion app reports the judge's configuration problems with its own, all at once. */
describe('loadIngestionConfig reports every problem at once, the judge\'s included (X3)', () => {
  it('a bad base variable and two bad judge variables are one ConfigError listing all three', () => {
    let error: unknown;
    try {
      loadIngestionConfig({ RUN_TIMEOUT_MS: 'soon', JUDGE_PROVIDER: 'openai', JUDGE_MODEL: 'gpt-4o-latest', JUDGE_INPUT_USD_PER_MTOK: '2.5' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    for (const variable of ['RUN_TIMEOUT_MS', 'JUDGE_MODEL', 'JUDGE_OUTPUT_USD_PER_MTOK']) expect(problems.some((p) => p.startsWith(variable) || p.includes(`${variable}:`))).toBe(true);
  });
});
