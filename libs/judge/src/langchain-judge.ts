/**
 * `LangChainJudge`: the judge port (J1) over a LangChain chat model.
 *
 * - Prompt `judge-v1` (reasoning first, verdict last, length not rewarded - J2); the reply is parsed for
 *   its last verdict object and the reasoning dropped on the spot (J2, D1); an unparseable reply is
 *   `judge_unparseable`, never a pass (J3).
 * - Every verdict carries the exact model pin and the prompt version, token usage and cost.
 * - Per call: a timeout (`judge_timeout`); bounded retries with exponential backoff and jitter on 429 and
 *   5xx only (then `judge_rate_limited` / `judge_unavailable`); at most `concurrency` calls in flight per
 *   instance.
 * - No API key for a provider that needs one: `judge_credential_missing`, with no network call.
 * - Nothing is logged. Errors carry codes, statuses and counts, never text of the output or the reply.
 */
import {
  JUDGE_PROMPT_V1,
  JudgeError,
  PAIRWISE_PROMPT_V1,
  buildJudgeMessages,
  buildPairwiseMessages,
  decidePairwise,
  estimateTokens,
  judgeCost,
  judgeMessageChars,
  parseJudgeReply,
  parsePairwiseReply,
  type JudgeChatMessage,
  type JudgeCallOptions,
  type JudgePort,
  type JudgeRequest,
  type JudgeUsage,
  type JudgeVerdict,
  type PairwiseChoice,
  type PairwiseDecision,
  type PairwiseOrder,
  type PairwiseRequest,
  type JudgePromptTemplate,
  type ReplyParse,
} from '@evals/domain';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type * as LangChainMessages from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';
import { type Env, type JudgeAdapterConfig, leakyLangChainSwitch, providerNeedsApiKey, validateJudgeConfig } from './config';
import { type ChatModelFactory, createChatModel } from './chat-model';
import { classifyProviderError } from './provider-errors';
import { type BackoffPolicy, DEFAULT_BACKOFF, realSleep, retryDelayMs } from './retry';
import { Semaphore } from './semaphore';

export interface LangChainJudgeDeps {
  /** Builds the chat model (default: the LangChain model of the configured provider). */
  readonly createModel?: ChatModelFactory;
  /** Jitter source in [0, 1) (default Math.random). */
  readonly random?: () => number;
  /** Waits between retries (default setTimeout). */
  readonly sleep?: (ms: number) => Promise<void>;
  readonly backoff?: BackoffPolicy;
  /** Checked on every call for LangChain tracing/verbose switches (default process.env). */
  readonly env?: Env;
  /** The judge prompt (default `JUDGE_PROMPT_V1`); its id is the prompt version of every verdict. */
  readonly prompt?: JudgePromptTemplate;
  /** The pairwise prompt (default `PAIRWISE_PROMPT_V1`). */
  readonly pairwisePrompt?: JudgePromptTemplate;
  /**
   * Told of every HTTP call to the provider as it ends (each retry is one), with its outcome: `ok`,
   * `unparseable`, or the provider failure's kind. Metrics only (`evals_judge_calls_total`); never told of a
   * call that was not made (no key, a cache hit).
   */
  readonly onCall?: (outcome: JudgeCallOutcome) => void;
}

/** How one HTTP call to the provider ended. */
export type JudgeCallOutcome = 'ok' | 'unparseable' | 'timeout' | ReturnType<typeof classifyProviderError>['kind'];

/** What one provider call left once its reply was reduced to text: tokens and cost, never the text itself beyond parsing. */
interface CallCost {
  readonly usage: JudgeUsage;
  readonly usage_estimated: boolean;
  readonly cost_usd: number;
}

/** One pairwise comparison (J5): both orders' choices, the decision, and what the two calls cost. */
export interface PairwiseComparison extends PairwiseDecision {
  /** The judge's choice with A shown first. */
  readonly ab: PairwiseChoice;
  /** The judge's choice with B shown first. */
  readonly ba: PairwiseChoice;
  readonly model: string;
  readonly prompt_version: string;
  readonly usage: JudgeUsage;
  readonly usage_estimated: boolean;
  readonly cost_usd: number;
}

/** The text of a reply; thinking/tool blocks are dropped, only text blocks kept (and only for parsing). */
function replyText(message: BaseMessage): string {
  const content: unknown = message.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const block of content) {
    if (typeof block === 'string') text += block;
    else if (block && typeof block === 'object' && (block as { type?: unknown }).type === 'text') {
      const t = (block as { text?: unknown }).text;
      if (typeof t === 'string') text += t;
    }
  }
  return text;
}

function reportedUsage(message: BaseMessage): JudgeUsage | null {
  const meta = (message as { usage_metadata?: { input_tokens?: unknown; output_tokens?: unknown } }).usage_metadata;
  const input = meta?.input_tokens;
  const output = meta?.output_tokens;
  const ok = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
  if (!ok(input) || !ok(output)) return null;
  // A real call always reads its prompt: zero input tokens means the provider did not count.
  if (input === 0) return null;
  return { input_tokens: input, output_tokens: output };
}

// Loaded at the first judge call, not with the module: every app and CLI command imports @evals/judge, and
// @langchain/core's messages (with langsmith and zod) are about 13% of the embedded server's module loading
// (issue 15), paid even when no judge is configured.
let messageClasses: typeof LangChainMessages | undefined;

function toLangChain(messages: readonly JudgeChatMessage[]): BaseMessage[] {
  const { HumanMessage, SystemMessage } = (messageClasses ??= require('@langchain/core/messages') as typeof LangChainMessages);
  return messages.map((m) => (m.role === 'system' ? new SystemMessage(m.content) : new HumanMessage(m.content)));
}

function addCosts(a: CallCost, b: CallCost): CallCost {
  return {
    usage: { input_tokens: a.usage.input_tokens + b.usage.input_tokens, output_tokens: a.usage.output_tokens + b.usage.output_tokens },
    usage_estimated: a.usage_estimated || b.usage_estimated,
    cost_usd: a.cost_usd + b.cost_usd,
  };
}

export class LangChainJudge implements JudgePort {
  readonly model: string;
  readonly promptVersion: string;
  readonly pairwisePromptVersion: string;
  readonly provider: JudgeAdapterConfig['provider'];

  private readonly config: JudgeAdapterConfig;
  private readonly semaphore: Semaphore;
  private readonly createModel: ChatModelFactory;
  private readonly random: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly backoff: BackoffPolicy;
  private readonly env: Env;
  private readonly prompt: JudgePromptTemplate;
  private readonly pairwisePrompt: JudgePromptTemplate;
  private readonly onCall: (outcome: JudgeCallOutcome) => void;
  private chat: BaseChatModel | null = null;

  constructor(config: JudgeAdapterConfig, deps: LangChainJudgeDeps = {}) {
    this.config = validateJudgeConfig(config);
    this.model = config.model;
    this.provider = config.provider;
    this.semaphore = new Semaphore(config.concurrency);
    this.createModel = deps.createModel ?? createChatModel;
    this.random = deps.random ?? Math.random;
    this.sleep = deps.sleep ?? realSleep;
    this.backoff = deps.backoff ?? DEFAULT_BACKOFF;
    this.env = deps.env ?? process.env;
    this.prompt = deps.prompt ?? JUDGE_PROMPT_V1;
    this.pairwisePrompt = deps.pairwisePrompt ?? PAIRWISE_PROMPT_V1;
    this.onCall = deps.onCall ?? (() => undefined);
    this.promptVersion = this.prompt.id;
    this.pairwisePromptVersion = this.pairwisePrompt.id;
  }

  /** True when the provider needs a key and none is configured: every call is `judge_credential_missing` (GT2). */
  get credentialMissing(): boolean {
    return providerNeedsApiKey(this.config.provider) && !(this.config.apiKey && this.config.apiKey.trim() !== '');
  }

  /** Calls in flight and waiting on this instance's concurrency limit. */
  load(): { readonly inFlight: number; readonly queued: number; readonly limit: number } {
    return { inFlight: this.semaphore.inUse, queued: this.semaphore.queued, limit: this.semaphore.limit };
  }

  /** J1-J3. `options.useCache` is the cache decorator's business; this judge always calls the model. */
  async judge(request: JudgeRequest, _options?: JudgeCallOptions): Promise<JudgeVerdict> {
    checkRequest(request);
    const messages = buildJudgeMessages(request, this.prompt);
    const { parsed, cost } = await this.ask(messages, parseJudgeReply);
    return {
      verdict: parsed.verdict,
      score: parsed.score,
      model: this.model,
      prompt_version: this.promptVersion,
      ...cost,
      cached: false,
    };
  }

  /** J5: judges the pair in both orders (A first, then B first) and decides. */
  async compare(request: PairwiseRequest): Promise<PairwiseComparison> {
    if (typeof request?.a !== 'string' || typeof request.b !== 'string') throw new TypeError('pairwise request needs answers `a` and `b` as strings');
    checkRubric(request.rubric);
    const order = (o: PairwiseOrder) => this.ask(buildPairwiseMessages(request, o, this.pairwisePrompt), parsePairwiseReply);
    const [ab, ba] = await Promise.allSettled([order('ab'), order('ba')]);
    if (ab.status === 'rejected') throw ab.reason;
    if (ba.status === 'rejected') throw ba.reason;
    const decision = decidePairwise(ab.value.parsed.winner, ba.value.parsed.winner);
    return {
      ...decision,
      ab: ab.value.parsed.winner,
      ba: ba.value.parsed.winner,
      model: this.model,
      prompt_version: this.pairwisePromptVersion,
      ...addCosts(ab.value.cost, ba.value.cost),
    };
  }

  /** One logical call: credential check, retries with backoff, concurrency limit, timeout, parse. */
  private async ask<T>(messages: readonly JudgeChatMessage[], parse: (reply: string) => ReplyParse<T>): Promise<{ parsed: T; cost: CallCost }> {
    if (this.credentialMissing) {
      throw new JudgeError('judge_credential_missing', `no API key configured for the ${this.config.provider} judge (JUDGE_API_KEY)`, { reason: 'no_api_key', attempts: 0 });
    }
    const leaky = leakyLangChainSwitch(this.env);
    if (leaky) {
      throw new JudgeError('judge_unavailable', `${leaky}=true would send outputs and reasoning out of the process (D1, J2); refused`, { reason: 'tracing_enabled', attempts: 0 });
    }
    const chat = this.chatModel();
    const lcMessages = toLangChain(messages);
    for (let attempt = 1; ; attempt++) {
      let reply: BaseMessage;
      try {
        reply = await this.semaphore.run(() => this.invokeWithTimeout(chat, lcMessages, attempt));
      } catch (error) {
        if (error instanceof JudgeError) {
          if (error.code === 'judge_timeout') this.onCall('timeout');
          throw error;
        }
        const failure = classifyProviderError(error);
        this.onCall(failure.kind);
        if (failure.retryable && attempt <= this.config.maxRetries) {
          await this.sleep(retryDelayMs(attempt, error, this.backoff, this.random));
          continue;
        }
        throw providerJudgeError(failure.kind, failure.status, attempt, failure.retryable);
      }
      // The reply text lives only in this scope: parsed, then dropped (J2, D1).
      const text = replyText(reply);
      const cost = this.costOf(reply, messages, text.length);
      const parsed = parse(text);
      this.onCall(parsed.ok ? 'ok' : 'unparseable');
      if (!parsed.ok) {
        throw new JudgeError('judge_unparseable', `the judge's reply had no usable verdict (${parsed.reason})`, { reason: parsed.reason, attempts: attempt, ...cost });
      }
      const { ok: _ok, ...value } = parsed;
      return { parsed: value as unknown as T, cost };
    }
  }

  private async invokeWithTimeout(chat: BaseChatModel, messages: BaseMessage[], attempt: number): Promise<BaseMessage> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.config.timeoutMs);
    try {
      return await chat.invoke(messages, { signal: controller.signal });
    } catch (error) {
      if (timedOut || classifyProviderError(error).kind === 'timeout') {
        throw new JudgeError('judge_timeout', `no reply within ${this.config.timeoutMs} ms`, { reason: 'timeout', attempts: attempt });
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  private costOf(reply: BaseMessage, messages: readonly JudgeChatMessage[], replyChars: number): CallCost {
    const reported = reportedUsage(reply);
    const usage = reported ?? { input_tokens: estimateTokens(judgeMessageChars(messages)), output_tokens: estimateTokens(replyChars) };
    return { usage, usage_estimated: reported === null, cost_usd: judgeCost(usage, this.config.pricing) };
  }

  private chatModel(): BaseChatModel {
    if (!this.chat) this.chat = this.createModel(this.config);
    return this.chat;
  }
}

function providerJudgeError(kind: ReturnType<typeof classifyProviderError>['kind'], status: number | undefined, attempts: number, retried: boolean): JudgeError {
  const details = { reason: retried ? 'retries_exhausted' : kind, attempts, ...(status !== undefined ? { status } : {}) };
  switch (kind) {
    case 'rate_limited':
      return new JudgeError('judge_rate_limited', `the provider kept answering 429 after ${attempts} attempt(s)`, details);
    case 'server_error':
      return new JudgeError('judge_unavailable', `the provider answered ${status ?? '5xx'} after ${attempts} attempt(s)`, details);
    case 'timeout':
      return new JudgeError('judge_timeout', 'the provider timed out', details);
    case 'credential_rejected':
      return new JudgeError('judge_unavailable', `the provider refused the credential (${status})`, { ...details, reason: 'credential_rejected' });
    case 'request_refused':
      return new JudgeError('judge_unavailable', `the provider refused the request (${status})`, { ...details, reason: 'request_refused' });
    case 'connection_failed':
      return new JudgeError('judge_unavailable', 'could not reach the provider', { ...details, reason: 'connection_failed' });
  }
}

function checkRubric(rubric: unknown): void {
  if (typeof rubric !== 'string' || rubric.trim() === '') throw new TypeError('judge request needs a non-empty `rubric`');
}

function checkRequest(request: JudgeRequest): void {
  if (typeof request?.output !== 'string') throw new TypeError('judge request needs `output` as a string');
  checkRubric(request.rubric);
  if (request.input !== undefined && typeof request.input !== 'string') throw new TypeError('judge request `input` must be a string when given');
}
