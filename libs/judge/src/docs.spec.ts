import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { JUDGE_ERROR_CODES, JUDGE_PROMPT_V1, PAIRWISE_PROMPT_V1, REPLY_PARSE_FAILURES, buildJudgeMessages } from '@evals/domain';

const DOC = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'judge.md'), 'utf8');

describe('docs/judge.md', () => {
  it('J2: shows the prompts verbatim, with their version ids', () => {
    expect(DOC).toContain(JUDGE_PROMPT_V1.system);
    expect(DOC).toContain(buildJudgeMessages({ output: '{output}', rubric: '{rubric}', input: '{input}', expected: '{expected}' })[1].content);
    expect(DOC).toContain(`\`${JUDGE_PROMPT_V1.id}\``);
    expect(DOC).toContain(PAIRWISE_PROMPT_V1.system);
    expect(DOC).toContain(PAIRWISE_PROMPT_V1.instruction);
    expect(DOC).toContain(`\`${PAIRWISE_PROMPT_V1.id}\``);
  });

  it('documents every error code and every parse failure reason', () => {
    for (const code of JUDGE_ERROR_CODES) expect(DOC).toContain(`| \`${code}\``);
    for (const reason of REPLY_PARSE_FAILURES) expect(DOC).toContain(`\`${reason}\``);
  });

  it('documents every JUDGE_* variable', () => {
    const vars = ['JUDGE_PROVIDER', 'JUDGE_MODEL', 'JUDGE_BASE_URL', 'JUDGE_API_KEY', 'JUDGE_TIMEOUT_MS', 'JUDGE_MAX_RETRIES', 'JUDGE_CONCURRENCY', 'JUDGE_INPUT_USD_PER_MTOK', 'JUDGE_OUTPUT_USD_PER_MTOK'];
    for (const v of vars) expect(DOC).toContain(`| \`${v}\``);
  });
});
