/**
 * LangChainJudge against a real local OpenAI-compatible server (test/support/fake-openai.ts), through the
 * real LangChain client and HTTP (J1-J3, J5, D1, GT2).
 */
import { JUDGE_PROMPT_V1, JudgeError, PAIRWISE_PROMPT_V1, pairwiseReport, type JudgeVerdict } from '@evals/domain';
import { REASONING_MARKER, completion, scripts, startFakeOpenAI, verdictReply, type FakeOpenAI } from '../../../test/support/fake-openai';
import type { JudgeAdapterConfig } from './config';
import { LangChainJudge, type LangChainJudgeDeps } from './langchain-judge';

const MODEL = 'gpt-4o-2024-08-06';
const OUTPUT_MARKER = 'CANDIDATE-OUTPUT-MARKER-91d2';
const PRICING = { input_per_mtok_usd: 2.5, output_per_mtok_usd: 10 };

let fake: FakeOpenAI;
let sleeps: number[];

beforeAll(async () => {
  fake = await startFakeOpenAI();
});

afterAll(async () => {
  await fake.close();
});

beforeEach(() => {
  fake.reset();
  sleeps = [];
});

function makeJudge(overrides: Partial<JudgeAdapterConfig> = {}, deps: LangChainJudgeDeps = {}): LangChainJudge {
  return new LangChainJudge(
    {
      provider: 'openai',
      model: MODEL,
      baseUrl: fake.baseUrl,
      apiKey: 'test-key',
      timeoutMs: 5_000,
      maxRetries: 3,
      concurrency: 4,
      pricing: PRICING,
      ...overrides,
    },
    {
      random: () => 0.5,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      backoff: { baseMs: 100, capMs: 10_000 },
      env: {},
      ...deps,
    },
  );
}

const request = { output: `The capital of France is Paris. ${OUTPUT_MARKER}`, rubric: 'Names Paris as the capital of France', expected: 'Paris', input: 'What is the capital of France?' };

async function judgeError(p: Promise<unknown>): Promise<JudgeError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof JudgeError) return e;
    throw e;
  }
  throw new Error('expected a JudgeError');
}

async function until(check: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Everything a caller can see of a result: the value, or the error's message and details. */
function visible(result: PromiseSettledResult<unknown>): string {
  if (result.status === 'fulfilled') return JSON.stringify(result.value);
  const e = result.reason as JudgeError;
  return JSON.stringify({ name: e.name, message: e.message, code: e.code, details: e.details, stack: e.stack });
}

describe('LangChainJudge over HTTP (J1-J3)', () => {
  it('J1, J2: parses a verdict given last, with the model pin, prompt version, usage and cost', async () => {
    fake.script(() => completion(verdictReply('pass', 0.85), { model: MODEL, usage: { prompt_tokens: 400, completion_tokens: 60 } }));
    const verdict = await makeJudge().judge(request);
    expect(verdict).toEqual<JudgeVerdict>({
      verdict: 'pass',
      score: 0.85,
      model: MODEL,
      prompt_version: 'judge-v1',
      usage: { input_tokens: 400, output_tokens: 60 },
      usage_estimated: false,
      cost_usd: (400 * 2.5 + 60 * 10) / 1e6,
      cached: false,
    });
    expect(fake.requestCount).toBe(1);
    const sent = fake.requests[0];
    expect(sent.model).toBe(MODEL);
    expect(sent.temperature).toBe(0);
    expect(sent.messages[0]).toEqual({ role: 'system', content: JUDGE_PROMPT_V1.system });
    expect(sent.messages[1].content).toContain(`<candidate_output>\n${request.output}\n</candidate_output>`);
  });

  it('a fail verdict and a pass below min_score come through as given', async () => {
    fake.script(scripts.verdict('fail', 0.1));
    await expect(makeJudge().judge(request)).resolves.toMatchObject({ verdict: 'fail', score: 0.1 });
  });

  it('no usage reported: tokens estimated as ceil(chars / 4), marked, and never zero cost', async () => {
    const reply = verdictReply('pass', 0.7);
    fake.script(() => completion(reply, { usage: null }));
    const verdict = await makeJudge().judge(request);
    expect(verdict.usage_estimated).toBe(true);
    const sentChars = fake.requests[0].messages.reduce((n, m) => n + m.content.length, 0);
    expect(verdict.usage).toEqual({ input_tokens: Math.ceil(sentChars / 4), output_tokens: Math.ceil(reply.length / 4) });
    expect(verdict.cost_usd).toBeGreaterThan(0);
    expect(verdict.cost_usd).toBeCloseTo((verdict.usage.input_tokens * 2.5 + verdict.usage.output_tokens * 10) / 1e6, 15);
  });

  it('429 is retried with growing backoff, then succeeds', async () => {
    fake.script(scripts.failThen(2, 429, scripts.verdict('pass', 0.9)));
    const verdict = await makeJudge().judge(request);
    expect(verdict.verdict).toBe('pass');
    expect(fake.requestCount).toBe(3);
    expect(sleeps).toEqual([75, 150]); // equal jitter at random 0.5: base 100, then 200
  });

  it('429 on every attempt: judge_rate_limited after 1 + maxRetries attempts', async () => {
    fake.script(scripts.status(429));
    const err = await judgeError(makeJudge({ maxRetries: 2 }).judge(request));
    expect(err.code).toBe('judge_rate_limited');
    expect(err.details).toMatchObject({ attempts: 3, status: 429, reason: 'retries_exhausted' });
    expect(fake.requestCount).toBe(3);
  });

  it('500 is retried up to the bound, then judge_unavailable', async () => {
    fake.script(scripts.status(500));
    const err = await judgeError(makeJudge({ maxRetries: 3 }).judge(request));
    expect(err.code).toBe('judge_unavailable');
    expect(err.details).toMatchObject({ attempts: 4, status: 500, reason: 'retries_exhausted' });
    expect(fake.requestCount).toBe(4);
    expect(sleeps).toHaveLength(3);
  });

  it('503 then success is retried', async () => {
    fake.script(scripts.failThen(1, 503, scripts.verdict('pass', 0.6)));
    await expect(makeJudge().judge(request)).resolves.toMatchObject({ verdict: 'pass', score: 0.6 });
    expect(fake.requestCount).toBe(2);
  });

  it('4xx other than 429 is not retried', async () => {
    fake.script(scripts.status(400));
    const err = await judgeError(makeJudge().judge(request));
    expect(err).toMatchObject({ code: 'judge_unavailable', details: { reason: 'request_refused', status: 400, attempts: 1 } });
    expect(fake.requestCount).toBe(1);
    fake.reset();
    fake.script(scripts.status(401));
    expect((await judgeError(makeJudge().judge(request))).details.reason).toBe('credential_rejected');
    expect(fake.requestCount).toBe(1);
  });

  it('timeout: judge_timeout, the request is abandoned, not retried', async () => {
    fake.script(scripts.hang());
    const err = await judgeError(makeJudge({ timeoutMs: 200 }).judge(request));
    expect(err.code).toBe('judge_timeout');
    expect(err.details.attempts).toBe(1);
    expect(fake.requestCount).toBe(1);
    await until(() => fake.inFlight === 0, 'the server to see the client go away');
    expect(fake.abandoned).toBe(1);
  });

  it('J3: a verdict before the reasoning is judge_unparseable, with what the call cost', async () => {
    fake.script(scripts.verdictFirst());
    const err = await judgeError(makeJudge().judge(request));
    expect(err.code).toBe('judge_unparseable');
    expect(err.details.reason).toBe('verdict_not_last');
    expect(err.details.cost_usd).toBeGreaterThan(0);
    expect(fake.requestCount).toBe(1);
  });

  it('J3: malformed verdict JSON is judge_unparseable', async () => {
    fake.script(scripts.malformed());
    const err = await judgeError(makeJudge().judge(request));
    expect(err).toMatchObject({ code: 'judge_unparseable', details: { reason: 'malformed_verdict' } });
  });

  it('J3: a score out of range is judge_unparseable', async () => {
    fake.script(() => completion(verdictReply('pass', 1.5)));
    expect((await judgeError(makeJudge().judge(request))).details.reason).toBe('invalid_score');
  });

  it('concurrency: the server never sees more than `concurrency` requests at once', async () => {
    fake.script(() => ({ ...completion(verdictReply('pass', 0.9)), delayMs: 60 }));
    const judge = makeJudge({ concurrency: 2 });
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => judge.judge({ ...request, output: `output ${i}` })));
    expect(results).toHaveLength(8);
    expect(fake.requestCount).toBe(8);
    expect(fake.maxConcurrent).toBe(2);
    expect(judge.load()).toEqual({ inFlight: 0, queued: 0, limit: 2 });
  });

  it('GT2: no API key is judge_credential_missing with zero requests, even with OPENAI_API_KEY set', async () => {
    const saved = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = 'sk-from-the-environment';
    try {
      const err = await judgeError(makeJudge({ apiKey: undefined }).judge(request));
      expect(err.code).toBe('judge_credential_missing');
      const blank = await judgeError(makeJudge({ apiKey: '   ' }).judge(request));
      expect(blank.code).toBe('judge_credential_missing');
    } finally {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
    }
    expect(fake.requestCount).toBe(0);
  });

  it('an unreachable endpoint is judge_unavailable (connection_failed)', async () => {
    const err = await judgeError(makeJudge({ baseUrl: 'http://127.0.0.1:9/v1', maxRetries: 0 }).judge(request));
    expect(err).toMatchObject({ code: 'judge_unavailable', details: { reason: 'connection_failed' } });
  });

  it('a length-biased judge is visible as such (the fake passes long outputs only)', async () => {
    fake.script(scripts.lengthBiased(200));
    const judge = makeJudge();
    const short = await judge.judge({ ...request, output: 'Paris.' });
    const long = await judge.judge({ ...request, output: `Paris. ${'It is a lovely city with a long history. '.repeat(10)}` });
    expect([short.verdict, long.verdict]).toEqual(['fail', 'pass']);
  });

  it('J2, D1: neither the reasoning nor the output appears in any returned value or error', async () => {
    const judge = makeJudge({ timeoutMs: 300, maxRetries: 1 });
    const cases = [scripts.verdict('pass', 0.9), scripts.verdictFirst(), scripts.malformed(), scripts.status(500), scripts.hang(), () => completion(verdictReply('pass', 7))];
    const seen: string[] = [];
    for (const script of cases) {
      fake.script(script);
      const [settled] = await Promise.allSettled([judge.judge(request)]);
      seen.push(visible(settled));
    }
    expect(seen[0]).toContain('"verdict":"pass"');
    for (const text of seen) {
      expect(text).not.toContain(REASONING_MARKER);
      expect(text).not.toContain(OUTPUT_MARKER);
    }
  });
});

describe('LangChainJudge.compare: pairwise over HTTP (J5)', () => {
  it('judges both orders and declares a winner only when they agree', async () => {
    fake.script(scripts.prefers('GOOD'));
    const judge = makeJudge();
    const r = await judge.compare({ a: 'GOOD answer', b: 'weak answer', rubric: 'Better answer wins' });
    expect(r).toMatchObject({ winner: 'a', position_consistent: true, ab: 'first', ba: 'second', model: MODEL, prompt_version: 'pairwise-v1' });
    expect(fake.requestCount).toBe(2);
    expect(fake.requests.every((q) => q.messages[0].content === PAIRWISE_PROMPT_V1.system)).toBe(true);
    expect(r.usage).toEqual({ input_tokens: 642, output_tokens: 108 });
    expect(r.cost_usd).toBeCloseTo((642 * 2.5 + 108 * 10) / 1e6, 15);
    expect(JSON.stringify(r)).not.toContain(REASONING_MARKER);
  });

  it('an order-biased judge (always the first answer) yields ties counted as position-inconsistent', async () => {
    fake.script(scripts.orderBiased());
    const judge = makeJudge();
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await judge.compare({ a: `a${i}`, b: `b${i}`, rubric: 'r' }));
    expect(results.every((r) => r.winner === 'tie' && !r.position_consistent)).toBe(true);
    const report = pairwiseReport(results);
    expect(report).toMatchObject({ wins: 0, losses: 0, ties: 5, inconsistent_ties: 5, n: 5 });
    expect(report.position_consistency).toMatchObject({ rate: 0, consistent: 0, n: 5, lower: 0 });
  });

  it('an unparseable order makes the comparison an error', async () => {
    fake.script(scripts.verdictFirst());
    const err = await judgeError(makeJudge().compare({ a: 'x', b: 'y', rubric: 'r' }));
    expect(err.code).toBe('judge_unparseable');
  });
});
