/**
 * What a failed provider call means, from the error LangChain (or the provider SDK beneath it) threw.
 * Only the status code and error class are looked at: a provider's message may echo the request, so it is
 * never copied into a JudgeError (D1).
 */

export type ProviderFailureKind = 'rate_limited' | 'server_error' | 'timeout' | 'credential_rejected' | 'request_refused' | 'connection_failed';

export interface ProviderFailure {
  readonly kind: ProviderFailureKind;
  readonly status?: number;
  /** Retried (with backoff, within the bound): 429 and 5xx only. */
  readonly retryable: boolean;
}

/** The HTTP status an error carries (`status` for OpenAI/Anthropic, `status_code` for Ollama), or undefined. */
export function statusOf(error: unknown): number | undefined {
  if (!error || typeof error !== 'object') return undefined;
  const e = error as { status?: unknown; status_code?: unknown; response?: { status?: unknown } };
  for (const candidate of [e.status, e.status_code, e.response?.status]) {
    if (typeof candidate === 'number' && Number.isInteger(candidate) && candidate >= 100 && candidate <= 599) return candidate;
  }
  return undefined;
}

export function classifyProviderError(error: unknown): ProviderFailure {
  const status = statusOf(error);
  if (status === 429) return { kind: 'rate_limited', status, retryable: true };
  if (status !== undefined && status >= 500) return { kind: 'server_error', status, retryable: true };
  if (status === 401 || status === 403) return { kind: 'credential_rejected', status, retryable: false };
  if (status === 408) return { kind: 'timeout', status, retryable: false };
  if (status !== undefined) return { kind: 'request_refused', status, retryable: false };
  const name = (error as { name?: unknown } | null)?.name;
  if (name === 'TimeoutError') return { kind: 'timeout', retryable: false };
  return { kind: 'connection_failed', retryable: false };
}
