/**
 * The LangChain chat model behind a judge (J1). LangChain's and the SDKs' own retries are off
 * (`maxRetries: 0`): the judge retries itself, within its bound and only on 429/5xx. The key is passed
 * explicitly; a model is only ever built with one (or for Ollama, which needs none), so no SDK falls back
 * to a key found in the process environment.
 */
import type * as Anthropic from '@langchain/anthropic';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type * as Ollama from '@langchain/ollama';
import type * as OpenAI from '@langchain/openai';
import { JUDGE_DEFAULTS, type JudgeAdapterConfig } from './config';

// Each provider's package is loaded when a model of it is built, not when this module is: a process with
// no judge, or with one provider, never pays for the others (about 0.4 s each at start-up).

export type ChatModelFactory = (config: JudgeAdapterConfig) => BaseChatModel;

function temperatureOf(config: JudgeAdapterConfig): { temperature?: number } {
  if (config.temperature === null) return {};
  return { temperature: config.temperature ?? 0 };
}

export const createChatModel: ChatModelFactory = (config) => {
  const maxTokens = config.maxOutputTokens ?? JUDGE_DEFAULTS.maxOutputTokens;
  switch (config.provider) {
    case 'openai': {
      const { ChatOpenAICompletions } = require('@langchain/openai') as typeof OpenAI;
      // The Chat Completions flavour of ChatOpenAI: always POST {baseURL}/chat/completions, which is what
      // every OpenAI-compatible server (vLLM, LiteLLM, llama.cpp, Azure-compatible gateways) implements.
      return new ChatOpenAICompletions({
        model: config.model,
        apiKey: config.apiKey,
        configuration: config.baseUrl !== undefined ? { baseURL: config.baseUrl } : {},
        maxRetries: 0,
        maxTokens,
        streaming: false,
        ...temperatureOf(config),
      });
    }
    case 'anthropic': {
      const { ChatAnthropic } = require('@langchain/anthropic') as typeof Anthropic;
      return new ChatAnthropic({
        model: config.model,
        apiKey: config.apiKey,
        ...(config.baseUrl !== undefined ? { anthropicApiUrl: config.baseUrl } : {}),
        maxRetries: 0,
        maxTokens,
        streaming: false,
        ...temperatureOf(config),
      });
    }
    case 'ollama': {
      const { ChatOllama } = require('@langchain/ollama') as typeof Ollama;
      return new ChatOllama({
        model: config.model,
        ...(config.baseUrl !== undefined ? { baseUrl: config.baseUrl } : {}),
        ...(config.apiKey !== undefined ? { headers: { Authorization: `Bearer ${config.apiKey}` } } : {}),
        maxRetries: 0,
        numPredict: maxTokens,
        streaming: false,
        ...temperatureOf(config),
      });
    }
  }
};
