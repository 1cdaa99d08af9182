/**
 * `CachedJudge` (J6): the judge as the gate uses it. With `{ useCache: true }` a recorded verdict is looked
 * up first and returned on a hit, with no call to the model; a miss calls the judge and records its
 * verdict. Without it (every ordinary `llm_judge` run outside the gate) the judge is called again and may
 * differ, and nothing is recorded.
 *
 * A cache that cannot be read or written never fails a call: it counts as a miss (or an unrecorded
 * verdict) and is counted in `stats().errors`.
 *
 * The cache is per project (issue 30, docs/adr/0009-projects.md): `options.project` (the run's) joins the
 * key, so one project's recorded verdict is never another's hit; `default` keeps the keys it always had.
 */
import type { JudgeCallOptions, JudgePort, JudgeRequest, JudgeVerdict, VerdictCache } from '@evals/domain';
import { verdictCacheKey } from './verdict-cache';

export interface CachedJudgeOptions {
  /** The `llm_judge` scorer version (S4): part of the key. */
  readonly scorerVersion: string;
  /** When set, keys are HMAC-SHA256 with this secret instead of plain SHA-256. */
  readonly keySecret?: string;
}

export interface VerdictCacheStats {
  readonly hits: number;
  readonly misses: number;
  /** Verdicts recorded after a miss. */
  readonly stores: number;
  /** Cache reads or writes that failed (each read failure also counts as a miss). */
  readonly errors: number;
}

export class CachedJudge implements JudgePort {
  private hits = 0;
  private misses = 0;
  private stores = 0;
  private errors = 0;

  constructor(
    private readonly inner: JudgePort,
    private readonly cache: VerdictCache,
    private readonly options: CachedJudgeOptions,
  ) {
    if (typeof options?.scorerVersion !== 'string' || options.scorerVersion === '') throw new TypeError('CachedJudge needs the llm_judge scorerVersion');
  }

  get model(): string {
    return this.inner.model;
  }

  get promptVersion(): string {
    return this.inner.promptVersion;
  }

  /** The cache key of a request for this judge (model pin, prompt version, scorer version, repeat index and project included). */
  keyOf(request: JudgeRequest, repeat = 0, project?: string): string {
    return verdictCacheKey(
      {
        request,
        model: this.inner.model,
        prompt_version: this.inner.promptVersion,
        scorer_version: this.options.scorerVersion,
        repeat,
        ...(project !== undefined ? { project } : {}),
      },
      this.options.keySecret,
    );
  }

  async judge(request: JudgeRequest, options: JudgeCallOptions = {}): Promise<JudgeVerdict> {
    if (!options.useCache) return this.inner.judge(request);
    const key = this.keyOf(request, options.repeat ?? 0, options.project);
    let recorded = null;
    try {
      recorded = await this.cache.get(key);
    } catch {
      this.errors++;
    }
    if (recorded) {
      this.hits++;
      return {
        verdict: recorded.verdict,
        score: recorded.score,
        model: this.inner.model,
        prompt_version: this.inner.promptVersion,
        usage: { input_tokens: 0, output_tokens: 0 },
        usage_estimated: false,
        cost_usd: 0,
        cached: true,
      };
    }
    this.misses++;
    const verdict = await this.inner.judge(request);
    try {
      await this.cache.set(key, { verdict: verdict.verdict, score: verdict.score });
      this.stores++;
    } catch {
      this.errors++;
    }
    return verdict;
  }

  stats(): VerdictCacheStats {
    return { hits: this.hits, misses: this.misses, stores: this.stores, errors: this.errors };
  }
}
