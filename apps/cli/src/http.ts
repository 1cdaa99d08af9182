import { PROJECT_HEADER } from '@evals/limits';
import { ApiError, CliError, EXIT, UnreachableError } from './exit-codes';
import { positiveSeconds, type Io } from './command';
import type { AnswerOf, ApiUrl, BodyOf, PlainUrl } from './api/api-types';
import { checkProjectId } from './project';
import { nodeTransport, type Transport, type TransportAnswer } from './http-transport';

/**
 * The CLI's HTTP side: where the three APIs live, and one client that turns every way a request can end
 * into either a parsed answer or an error carrying the right exit code (docs/cli.md, "Exit codes").
 */
export interface Endpoints {
  /** Ingestion: /v1/suites, /v1/runs, /v1/gate. */
  readonly ingestion: string;
  /** Read model: /v1/runs/:id, /v1/scorecards. */
  readonly read: string;
  /** Regression: /v1/baselines. */
  readonly regression: string;
}

export const DEFAULT_SERVER = 'http://127.0.0.1:3001';

export interface ServerFlags {
  server?: string;
  'read-server'?: string;
  'regression-server'?: string;
  'api-key'?: string;
  project?: string;
  timeout?: string;
}

export { PROJECT_HEADER };

/**
 * `--server` / EVALS_SERVER (default http://127.0.0.1:3001) is the ingestion API. The read model and the
 * regression app are `--read-server` / EVALS_READ_SERVER and `--regression-server` /
 * EVALS_REGRESSION_SERVER; when not given they are derived from the ingestion URL: the same scheme and host
 * with the port + 2 and + 3 (3001 -> 3003 and 3004, the layout of `npm run start:services`). A URL without
 * an explicit port is taken to be a gateway that routes every path, and is used as it is for all three.
 */
export function resolveEndpoints(flags: ServerFlags, env: Io['env']): Endpoints {
  const ingestion = baseUrl(flags.server ?? nonEmpty(env.EVALS_SERVER) ?? DEFAULT_SERVER, flags.server !== undefined ? '--server' : 'EVALS_SERVER');
  const read = flags['read-server'] ?? nonEmpty(env.EVALS_READ_SERVER);
  const regression = flags['regression-server'] ?? nonEmpty(env.EVALS_REGRESSION_SERVER);
  return {
    ingestion: ingestion.toString().replace(/\/+$/, ''),
    read: read !== undefined ? baseUrl(read, flags['read-server'] !== undefined ? '--read-server' : 'EVALS_READ_SERVER').toString().replace(/\/+$/, '') : derive(ingestion, 2),
    regression:
      regression !== undefined
        ? baseUrl(regression, flags['regression-server'] !== undefined ? '--regression-server' : 'EVALS_REGRESSION_SERVER').toString().replace(/\/+$/, '')
        : derive(ingestion, 3),
  };
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function baseUrl(value: string, source: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliError(EXIT.USAGE, `${source} is not a URL: expected e.g. http://127.0.0.1:3001`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(EXIT.USAGE, `${source} must be an http:// or https:// URL`);
  if (url.username || url.password) throw new CliError(EXIT.USAGE, `${source} must not carry credentials; use EVALS_API_KEY`);
  if (url.search || url.hash) throw new CliError(EXIT.USAGE, `${source} must not have a query or fragment`);
  return url;
}

function derive(ingestion: URL, offset: number): string {
  const url = new URL(ingestion.toString());
  if (url.port !== '') url.port = String(Number(url.port) + offset);
  return url.toString().replace(/\/+$/, '');
}

/** `--api-key` beats EVALS_API_KEY. A key that cannot be a header value is a usage error, never echoed. */
export function resolveApiKey(flags: ServerFlags, env: Io['env']): string | undefined {
  const key = flags['api-key'] ?? nonEmpty(env.EVALS_API_KEY);
  if (key === undefined) return undefined;
  if (!/^[\x21-\x7e]+$/.test(key)) throw new CliError(EXIT.USAGE, `${flags['api-key'] !== undefined ? '--api-key' : 'EVALS_API_KEY'} must be printable ASCII without spaces`);
  return key;
}

/**
 * Issue 30: `--project` beats EVALS_PROJECT; neither: undefined, and no header is sent, so the server takes
 * the key's own project (or `default`) exactly as before projects. An id that is not PROJECT_ID_PATTERN is a
 * usage error (exit 2) before anything is sent: the server would only answer 404 PROJECT_NOT_FOUND.
 */
export function resolveProject(flags: Pick<ServerFlags, 'project'>, env: Io['env']): string | undefined {
  const fromFlag = flags.project !== undefined;
  const project = fromFlag ? flags.project : nonEmpty(env.EVALS_PROJECT);
  return project === undefined ? undefined : checkProjectId(project, fromFlag ? '--project' : 'EVALS_PROJECT');
}

export interface ApiAnswer<T = unknown> {
  readonly status: number;
  readonly body: T;
  readonly contentType: string;
}

export interface RequestOptions {
  readonly json?: unknown;
  readonly text?: string;
  readonly contentType?: string;
  /** `text` returns the body as a string (CSV); default parses JSON. */
  readonly expect?: 'json' | 'text';
  readonly timeoutMs?: number;
}

export class ApiClient {
  private readonly fetchImpl: Transport;

  constructor(
    readonly endpoints: Endpoints,
    private readonly options: { apiKey?: string; timeoutMs: number; fetch?: typeof fetch; /** Sent as X-Evals-Project on every request (issue 30). */ project?: string },
  ) {
    // Not the global fetch by default: http-transport.ts says why.
    this.fetchImpl = options.fetch ?? nodeTransport;
  }

  /** The --timeout of the command, in milliseconds. */
  get timeoutMs(): number {
    return this.options.timeoutMs;
  }

  /**
   * A URL built by `url()` carries its route: the answer is typed by the OpenAPI document (api/api-types.ts).
   * Any other URL (a CSV, a test double) is as untyped as before.
   */
  async get<U extends ApiUrl, O extends RequestOptions = RequestOptions>(url: U, options?: O): Promise<ApiAnswer<O extends { readonly expect: 'text' } ? string : AnswerOf<U, 'get'>>>;
  async get<T = unknown>(url: PlainUrl, options?: RequestOptions): Promise<ApiAnswer<T>>;
  async get(url: string, options: RequestOptions = {}): Promise<ApiAnswer<unknown>> {
    return this.request('GET', url, options);
  }

  /** As `get`; the JSON body must be the route's request body (a typed call never falls back to the untyped one). */
  async post<U extends ApiUrl>(url: U, options?: RequestOptions & { readonly json?: BodyOf<U, 'post'> }): Promise<ApiAnswer<AnswerOf<U, 'post'>>>;
  async post<T = unknown>(url: PlainUrl, options?: RequestOptions): Promise<ApiAnswer<T>>;
  async post(url: string, options: RequestOptions = {}): Promise<ApiAnswer<unknown>> {
    return this.request('POST', url, options);
  }

  /**
   * One request. 2xx: the parsed body. Any other status: ApiError (exit 2 for 4xx, 3 for 5xx/408/429) with
   * the server's `code`, `message` and `field`. No answer at all (refused, DNS, reset, timeout): exit 3.
   */
  async request<T>(method: string, url: string, options: RequestOptions = {}): Promise<ApiAnswer<T>> {
    const headers: Record<string, string> = { accept: options.expect === 'text' ? 'text/csv, text/plain, application/json' : 'application/json', 'user-agent': 'evals-cli' };
    if (this.options.apiKey !== undefined) headers.authorization = `Bearer ${this.options.apiKey}`;
    // Every request, to all three APIs: one command acts in one project (a project key's own, else this one).
    if (this.options.project !== undefined) headers[PROJECT_HEADER] = this.options.project;
    let body: string | undefined;
    if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.json);
    } else if (options.text !== undefined) {
      headers['content-type'] = options.contentType ?? 'text/plain';
      body = options.text;
    }
    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs;
    const where = origin(url);
    let res: TransportAnswer;
    try {
      res = await this.fetchImpl(url, { method, headers, body, signal: AbortSignal.timeout(timeoutMs), redirect: 'follow' });
    } catch (error) {
      throw networkError(error, where, timeoutMs);
    }
    let text: string;
    try {
      text = await res.text();
    } catch (error) {
      throw networkError(error, where, timeoutMs);
    }
    const contentType = res.headers.get('content-type') ?? '';
    if (res.status < 200 || res.status >= 300) {
      const parsed = tryJson(text);
      const e = isObject(parsed) ? parsed : {};
      throw new ApiError(res.status, str(e.code), str(e.message), str(e.field), `${method} ${pathOf(url)}`, parsed ?? null);
    }
    if (options.expect === 'text') return { status: res.status, body: text as T, contentType };
    const parsed = tryJson(text);
    if (parsed === undefined) {
      throw new CliError(EXIT.USAGE, `${where} answered ${method} ${pathOf(url)} with something that is not the evals API (not JSON); check --server and friends`);
    }
    return { status: res.status, body: parsed as T, contentType };
  }
}

/** Connection refused, DNS failure, reset, TLS, timeout: the service is unreachable (exit 3). */
export function networkError(error: unknown, where: string, timeoutMs: number): CliError {
  const name = (error as { name?: string })?.name;
  if (name === 'TimeoutError' || name === 'AbortError') return new UnreachableError(`no answer from ${where} within ${(timeoutMs / 1000).toFixed(0)} s (--timeout)`);
  const code = causeCode(error);
  const why =
    code === 'ECONNREFUSED'
      ? 'connection refused (is the service running?)'
      : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
        ? 'host not found (DNS)'
        : code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT'
          ? 'connection timed out'
          : code
            ? code
            : 'no answer';
  return new UnreachableError(`cannot reach ${where}: ${why}`);
}

function causeCode(error: unknown): string | undefined {
  let e: unknown = error;
  for (let i = 0; i < 5 && e; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
}

function tryJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The client for a command's parsed server options. */
export function clientFor(flags: ServerFlags, io: Io, defaultTimeoutSeconds: number): ApiClient {
  const endpoints = resolveEndpoints(flags, io.env);
  const apiKey = resolveApiKey(flags, io.env);
  const project = resolveProject(flags, io.env);
  const timeout = positiveSeconds(flags.timeout, '--timeout', defaultTimeoutSeconds);
  return new ApiClient(endpoints, { apiKey, timeoutMs: Math.round(timeout * 1000), fetch: io.fetch, ...(project !== undefined ? { project } : {}) });
}

/** `base + /v1/...?query`, with undefined query values left out; typed with its route (ApiUrl). */
export function url<R extends string>(base: string, route: R, query: Record<string, string | number | undefined> = {}): ApiUrl<R> {
  const q = Object.entries(query)
    .filter((e): e is [string, string | number] => e[1] !== undefined)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');
  return `${base}${route}${q ? `?${q}` : ''}` as ApiUrl<R>;
}
