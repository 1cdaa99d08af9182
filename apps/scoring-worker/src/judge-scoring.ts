/**
 * The judge path of the scoring worker (S3, J1-J3, J6, GT2, GT4, D1).
 *
 * `llm_judge` cases of a micro-batch are judged concurrently before the batch transaction; the judge's own
 * semaphore keeps at most `JUDGE_CONCURRENCY` provider calls in flight. Each case becomes evidence through
 * `judgeOutcome`: a verdict's score and the S3 pass rule, or - for any error - score 0, failed, label = the
 * error code (never a pass, J3). The model pin, prompt version, tokens, cost and cache use are recorded
 * beside it; the reasoning never leaves the adapter (J2), and nothing here logs or stores the output (D1).
 *
 * Gate runs (`run.opened.judge_cache`) go through the verdict cache (J6) when Redis is configured; every
 * other run calls the judge again. (A run opened with `judge_skip` - GT4 - never gets here: OutputScorer
 * fails its judge cases with that label, without a call.) The cache is per project (issue 30, ADR 0009):
 * each call names the run's project, which joins the key, so one team's gate never hits another's verdict.
 */
import type { BusMessage } from '@evals/bus';
import {
  JudgeError,
  judgeRequestFor,
  repeatedJudgeEvidence,
  type CaseEvidence,
  type CompiledCase,
  type JudgePort,
  type JudgeVerdict,
  type ScoringContext,
} from '@evals/domain';
import { CachedJudge, LangChainJudge, MemoryVerdictCache, RedisVerdictCache, type JudgeAdapterConfig, type JudgeCallOutcome } from '@evals/judge';
import { llmJudgeScorer } from '@evals/scorers';
import type RedisClient from 'ioredis';

/** The judge as the worker holds it: the port, and whether the port honours `useCache` (a verdict cache is wired). */
export interface WorkerJudge {
  readonly port: JudgePort;
  readonly cache: boolean;
  close(): Promise<void>;
}

export interface WorkerJudgeOptions {
  /** Redis for the verdict cache; empty or absent: no shared cache. */
  readonly redisUrl?: string;
  /** Without Redis, cache verdicts in this process's memory (the embedded all-in-one). */
  readonly memoryCache?: boolean;
  readonly cachePrefix?: string;
  readonly cacheTtlSeconds?: number;
  /** Keys are HMAC-SHA256 with this secret, so a short output cannot be confirmed by hashing guesses (D1). */
  readonly keySecret?: string;
  /** Told of every HTTP call to the provider with its outcome (`evals_judge_calls_total`, issue 13). */
  readonly onCall?: (outcome: JudgeCallOutcome) => void;
}

/** Builds the worker's judge from `loadJudgeConfig(env)`; null when no judge is configured. */
export function createWorkerJudge(config: JudgeAdapterConfig | null, options: WorkerJudgeOptions = {}): WorkerJudge | null {
  if (!config) return null;
  const judge = new LangChainJudge(config, options.onCall ? { onCall: options.onCall } : {});
  if (!options.redisUrl && options.memoryCache) {
    const memory = new MemoryVerdictCache({ ttlSeconds: options.cacheTtlSeconds });
    const port = new CachedJudge(judge, memory, { scorerVersion: llmJudgeScorer.version, ...(options.keySecret ? { keySecret: options.keySecret } : {}) });
    return { port, cache: true, close: async () => undefined };
  }
  if (!options.redisUrl) return { port: judge, cache: false, close: async () => undefined };
  // Loaded only with a Redis to talk to (the embedded all-in-one has none; issue 15, the cold start).
  const Redis = (require('ioredis') as { default: typeof RedisClient }).default;
  const redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 2_000, commandTimeout: 2_000 });
  // A cache that cannot be read is a miss (CachedJudge counts it), never a failed case; the client's own
  // error events are swallowed here so they never reach a log with a connection string in them.
  redis.on('error', () => undefined);
  const cache = new RedisVerdictCache(redis, { prefix: options.cachePrefix, ttlSeconds: options.cacheTtlSeconds });
  const port = new CachedJudge(judge, cache, { scorerVersion: llmJudgeScorer.version, ...(options.keySecret ? { keySecret: options.keySecret } : {}) });
  return {
    port,
    cache: true,
    close: async () => {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/** One `llm_judge` case to grade: its output lives only in this object, in memory, until the batch is scored. */
export interface JudgeJob {
  readonly compiled: CompiledCase;
  readonly output: string;
  readonly msg: BusMessage;
  readonly useCache: boolean;
  /** The run's project (issue 30): the verdict cache's entries are per project. */
  readonly project: string;
  readonly ctx: ScoringContext;
}

/** Counts for metrics and logs: labels and cache results only. */
export interface JudgeTally {
  /** Judge cases by resulting label (`judge_pass`, `judge_unparseable`, ...). */
  readonly labels: Record<string, number>;
  cacheHits: number;
  cacheMisses: number;
}

export function emptyTally(): JudgeTally {
  return { labels: {}, cacheHits: 0, cacheMisses: 0 };
}

/**
 * Grades every job; resolves with one evidence row per job, in job order. Never rejects on a judge failure:
 * a failure is that case's evidence. While calls are outstanding the jobs' messages are kept alive
 * (`working()` every `heartbeatMs`), so a slow provider does not make the bus redeliver them.
 */
export async function judgeJobs(judge: WorkerJudge, jobs: readonly JudgeJob[], tally: JudgeTally, heartbeatMs: number): Promise<CaseEvidence[]> {
  if (jobs.length === 0) return [];
  const messages = [...new Set(jobs.map((j) => j.msg))];
  const timer = setInterval(() => {
    for (const msg of messages) msg.working();
  }, heartbeatMs);
  timer.unref();
  try {
    return await Promise.all(jobs.map((job) => judgeOne(judge, job, tally)));
  } finally {
    clearInterval(timer);
  }
}

/**
 * One case: judged `repeats` times (issue 13; once by default), each repeat its own call and - in a gate
 * run - its own cache entry (the key carries the repeat index), then reduced to the majority outcome.
 */
async function judgeOne(judge: WorkerJudge, job: JudgeJob, tally: JudgeTally): Promise<CaseEvidence> {
  const count = (label: string) => (tally.labels[label] = (tally.labels[label] ?? 0) + 1);
  const request = judgeRequestFor(job.compiled, job.output);
  if (!request || job.compiled.scorer.kind !== 'judge') throw new TypeError('judge job for a case that is not llm_judge');
  const useCache = judge.cache && job.useCache;
  const repeats = Math.max(1, job.compiled.scorer.config.repeats ?? 1);
  const results = await Promise.all(
    Array.from({ length: repeats }, async (_, repeat): Promise<JudgeVerdict | JudgeError> => {
      let result: JudgeVerdict | JudgeError;
      try {
        result = await judge.port.judge(request, { useCache, project: job.project, ...(repeat > 0 ? { repeat } : {}) });
      } catch (error) {
        // Only a code ever leaves this scope: a foreign error's message may quote the request (D1).
        result = error instanceof JudgeError ? error : new JudgeError('judge_unavailable', 'the judge call failed unexpectedly', { reason: 'unexpected_error' });
      }
      if (useCache) {
        if (!(result instanceof JudgeError) && result.cached) tally.cacheHits++;
        else tally.cacheMisses++;
      }
      return result;
    }),
  );
  const evidence = repeatedJudgeEvidence(job.compiled, job.output, results, { model: judge.port.model, promptVersion: judge.port.promptVersion, cacheUsed: useCache }, job.ctx);
  count(evidence.label);
  return evidence;
}
