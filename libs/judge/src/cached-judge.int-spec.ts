/**
 * The gate's verdict cache (J6) on the real Redis, in front of the real LangChain client talking to the
 * fake OpenAI-compatible server: a hit makes no HTTP call; a change of prompt version or model pin misses;
 * Redis holds `{verdict, score}` only (D1, J2).
 */
import { JUDGE_PROMPT_V1 } from '@evals/domain';
import Redis from 'ioredis';
import { REASONING_MARKER, completion, scripts, startFakeOpenAI, verdictReply, type FakeOpenAI } from '../../../test/support/fake-openai';
import { testRedisPrefix } from '../../../test/support/isolation';
import { testServers } from '../../../test/support/servers';
import { CachedJudge } from './cached-judge';
import type { JudgeAdapterConfig } from './config';
import { LangChainJudge, type LangChainJudgeDeps } from './langchain-judge';
import { RedisVerdictCache } from './verdict-cache';
import { verdictCacheContract } from './verdict-cache.contract';

const MODEL = 'gpt-4o-2024-08-06';
const OUTPUT_MARKER = 'CANDIDATE-OUTPUT-MARKER-c0ffee';
const SCORER_VERSION = '1.0.0';

let fake: FakeOpenAI;
let redis: Redis;
let prefix: string;
let cache: RedisVerdictCache;

beforeAll(async () => {
  fake = await startFakeOpenAI(scripts.verdict('pass', 0.8));
  redis = new Redis(testServers.redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
});

afterAll(async () => {
  await redis.quit();
  await fake.close();
});

beforeEach(() => {
  fake.reset();
  fake.script(scripts.verdict('pass', 0.8));
  prefix = testRedisPrefix('judge');
  cache = new RedisVerdictCache(redis, { prefix, ttlSeconds: 120 });
});

afterEach(async () => {
  const keys = await allKeys();
  if (keys.length > 0) await redis.del(...keys);
});

async function allKeys(): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys;
}

function langchainJudge(overrides: Partial<JudgeAdapterConfig> = {}, deps: LangChainJudgeDeps = {}): LangChainJudge {
  return new LangChainJudge(
    {
      provider: 'openai',
      model: MODEL,
      baseUrl: fake.baseUrl,
      apiKey: 'test-key',
      timeoutMs: 5_000,
      maxRetries: 0,
      concurrency: 2,
      pricing: { input_per_mtok_usd: 2.5, output_per_mtok_usd: 10 },
      ...overrides,
    },
    { env: {}, ...deps },
  );
}

const request = { output: `A short, correct answer. ${OUTPUT_MARKER}`, rubric: 'Answers correctly', expected: { answer: 42 } };

describe('CachedJudge + RedisVerdictCache (J6)', () => {
  it('gate: a miss calls the judge and records; a hit returns the recorded verdict with no HTTP call', async () => {
    const judge = new CachedJudge(langchainJudge(), cache, { scorerVersion: SCORER_VERSION });
    const first = await judge.judge(request, { useCache: true });
    expect(first).toMatchObject({ verdict: 'pass', score: 0.8, cached: false, model: MODEL, prompt_version: 'judge-v1' });
    expect(first.cost_usd).toBeGreaterThan(0);
    expect(fake.requestCount).toBe(1);

    // The remote judge would now say something else: the gate still gets the recorded verdict.
    fake.script(scripts.verdict('fail', 0.1));
    const second = await judge.judge(request, { useCache: true });
    expect(fake.requestCount).toBe(1);
    expect(second).toEqual({
      verdict: 'pass',
      score: 0.8,
      model: MODEL,
      prompt_version: 'judge-v1',
      usage: { input_tokens: 0, output_tokens: 0 },
      usage_estimated: false,
      cost_usd: 0,
      cached: true,
    });
    expect(judge.stats()).toEqual({ hits: 1, misses: 1, stores: 1, errors: 0 });

    // Outside the gate the judge is called again, and may differ.
    const ordinary = await judge.judge(request);
    expect(fake.requestCount).toBe(2);
    expect(ordinary).toMatchObject({ verdict: 'fail', score: 0.1, cached: false });
  });

  it('stores {verdict, score} only, under the prefix, with a TTL', async () => {
    const judge = new CachedJudge(langchainJudge(), cache, { scorerVersion: SCORER_VERSION });
    await judge.judge(request, { useCache: true });
    const keys = await allKeys();
    expect(keys).toEqual([`${prefix}${judge.keyOf(request)}`]);
    expect(keys[0]).toMatch(new RegExp(`^${prefix.replace(/[:]/g, '\\:')}[0-9a-f]{64}$`));
    expect(JSON.parse((await redis.get(keys[0])) as string)).toEqual({ verdict: 'pass', score: 0.8 });
    const ttl = await redis.ttl(keys[0]);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(120);
  });

  it('a change of prompt version misses', async () => {
    await new CachedJudge(langchainJudge(), cache, { scorerVersion: SCORER_VERSION }).judge(request, { useCache: true });
    expect(fake.requestCount).toBe(1);
    const v2 = new CachedJudge(langchainJudge({}, { prompt: { ...JUDGE_PROMPT_V1, id: 'judge-v2-test' } }), cache, { scorerVersion: SCORER_VERSION });
    const verdict = await v2.judge(request, { useCache: true });
    expect(verdict).toMatchObject({ cached: false, prompt_version: 'judge-v2-test' });
    expect(fake.requestCount).toBe(2);
    expect(v2.stats()).toMatchObject({ hits: 0, misses: 1 });
  });

  it('a change of model pin misses', async () => {
    await new CachedJudge(langchainJudge(), cache, { scorerVersion: SCORER_VERSION }).judge(request, { useCache: true });
    const other = new CachedJudge(langchainJudge({ model: 'gpt-4o-2024-11-20' }), cache, { scorerVersion: SCORER_VERSION });
    const verdict = await other.judge(request, { useCache: true });
    expect(verdict).toMatchObject({ cached: false, model: 'gpt-4o-2024-11-20' });
    expect(fake.requestCount).toBe(2);
    expect(fake.requests[1].model).toBe('gpt-4o-2024-11-20');
  });

  it('a change of scorer version, rubric, expected or output misses', async () => {
    const judge = new CachedJudge(langchainJudge(), cache, { scorerVersion: SCORER_VERSION });
    await judge.judge(request, { useCache: true });
    await new CachedJudge(langchainJudge(), cache, { scorerVersion: '1.0.1' }).judge(request, { useCache: true });
    await judge.judge({ ...request, rubric: 'Answers correctly and briefly' }, { useCache: true });
    await judge.judge({ ...request, expected: { answer: 43 } }, { useCache: true });
    await judge.judge({ ...request, output: `${request.output}!` }, { useCache: true });
    expect(fake.requestCount).toBe(5);
    await judge.judge(request, { useCache: true });
    expect(fake.requestCount).toBe(5);
  });

  it('an error is not recorded: the next gate call asks again', async () => {
    fake.script(scripts.verdictFirst());
    const judge = new CachedJudge(langchainJudge(), cache, { scorerVersion: SCORER_VERSION });
    await expect(judge.judge(request, { useCache: true })).rejects.toMatchObject({ code: 'judge_unparseable' });
    expect(await allKeys()).toEqual([]);
    fake.script(scripts.verdict('fail', 0.3));
    await expect(judge.judge(request, { useCache: true })).resolves.toMatchObject({ verdict: 'fail', cached: false });
    expect(fake.requestCount).toBe(2);
  });

  it('a corrupted entry is a miss, never a verdict', async () => {
    const judge = new CachedJudge(langchainJudge(), cache, { scorerVersion: SCORER_VERSION });
    await redis.set(`${prefix}${judge.keyOf(request)}`, JSON.stringify({ verdict: 'pass', score: 1, note: 'x' }));
    await expect(judge.judge(request, { useCache: true })).resolves.toMatchObject({ cached: false });
    expect(fake.requestCount).toBe(1);
  });

  it('J2, D1: the reasoning and the output appear in no Redis key or value', async () => {
    fake.script(() => completion(verdictReply('pass', 0.9), { usage: { prompt_tokens: 10, completion_tokens: 10 } }));
    const judge = new CachedJudge(langchainJudge(), cache, { scorerVersion: SCORER_VERSION });
    for (let i = 0; i < 3; i++) await judge.judge({ ...request, output: `${request.output} #${i}` }, { useCache: true });
    const keys = await allKeys();
    expect(keys).toHaveLength(3);
    for (const key of keys) {
      const value = (await redis.get(key)) as string;
      for (const text of [key, value]) {
        expect(text).not.toContain(REASONING_MARKER);
        expect(text).not.toContain(OUTPUT_MARKER);
        expect(text).not.toContain(request.rubric);
      }
    }
  });
});

verdictCacheContract('Redis', async () => {
  const contractPrefix = testRedisPrefix('vcc');
  return {
    cache: new RedisVerdictCache(redis, { prefix: contractPrefix, ttlSeconds: 120 }),
    raw: (key) => redis.get(contractPrefix + key),
    async teardown() {
      const keys = await redis.keys(`${contractPrefix}*`);
      if (keys.length > 0) await redis.del(...keys);
    },
  };
});
