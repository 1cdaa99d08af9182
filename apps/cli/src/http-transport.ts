import type * as http from 'node:http';

/**
 * The CLI's requests over node:http rather than the global fetch. fetch is undici, loaded on first use, and
 * its HTTP parser is WebAssembly that V8 compiles with TurboFan in the background: measured on `evals run`,
 * about 40 MB of peak RSS and 0.4-0.65 s that the process waits at exit for that compilation (issue 15: the
 * client under 200 MB for 100 000 outputs). node:http parses in C++ and costs neither. Only what ApiClient
 * uses is here: a string body, an abort signal (the --timeout), redirects followed as fetch follows them.
 */
export interface TransportAnswer {
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  text(): Promise<string>;
}

export interface TransportInit {
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
  readonly signal: AbortSignal;
  readonly redirect: 'follow';
}

/** The global fetch fits this too (tests and `Io.fetch` pass one). */
export type Transport = (url: string, init: TransportInit) => Promise<TransportAnswer>;

const MAX_REDIRECTS = 20;

export const nodeTransport: Transport = async (url, init) => {
  let target = new URL(url);
  let { method, body } = init;
  let headers = { ...init.headers };
  for (let hops = 0; ; hops++) {
    const res = await send(target, method, headers, body, init.signal);
    const location = res.headers.location;
    if (!isRedirect(res.statusCode) || location === undefined) return answer(res, init.signal);
    res.resume();
    if (hops >= MAX_REDIRECTS) throw Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('too many redirects'), { code: 'ERR_TOO_MANY_REDIRECTS' }) });
    const next = new URL(location, target);
    // As fetch: 303 (and 301/302 after a POST) turn into a GET without a body; 307/308 repeat the request.
    if (res.statusCode === 303 || ((res.statusCode === 301 || res.statusCode === 302) && method === 'POST')) {
      method = 'GET';
      body = undefined;
      headers = withoutBodyHeaders(headers);
    }
    // The API key never follows a redirect to another origin.
    if (next.origin !== target.origin) headers = Object.fromEntries(Object.entries(headers).filter(([k]) => k.toLowerCase() !== 'authorization'));
    target = next;
  }
};

function isRedirect(status: number | undefined): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

function withoutBodyHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !['content-type', 'content-length'].includes(k.toLowerCase())));
}

function send(target: URL, method: string, headers: Record<string, string>, body: string | undefined, signal: AbortSignal): Promise<http.IncomingMessage> {
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return Promise.reject(new TypeError(`fetch failed: unsupported protocol ${target.protocol}`));
  // https (and with it TLS) is loaded only for an https URL.
  const lib: typeof http = target.protocol === 'https:' ? require('node:https') : require('node:http');
  return new Promise((resolve, reject) => {
    const req = lib.request(target, { method, headers: body !== undefined ? { ...headers, 'content-length': String(Buffer.byteLength(body, 'utf8')) } : headers, signal }, resolve);
    req.on('error', (error) => reject(aborted(signal) ?? Object.assign(new TypeError('fetch failed'), { cause: error })));
    if (body !== undefined) req.end(body, 'utf8');
    else req.end();
  });
}

/** The signal's reason (a TimeoutError for --timeout), as fetch rejects with it. */
function aborted(signal: AbortSignal): unknown {
  return signal.aborted ? signal.reason : undefined;
}

function answer(res: http.IncomingMessage, signal: AbortSignal): TransportAnswer {
  return {
    status: res.statusCode ?? 0,
    headers: { get: (name) => header(res.headers[name.toLowerCase()]) },
    text: () => readBody(res, signal),
  };
}

function header(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}

function readBody(res: http.IncomingMessage, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let stream: NodeJS.ReadableStream = res;
    // No Accept-Encoding is sent, but a gateway may compress anyway: decoded as fetch would.
    const encoding = String(res.headers['content-encoding'] ?? '').trim().toLowerCase();
    if (encoding === 'gzip' || encoding === 'x-gzip' || encoding === 'deflate' || encoding === 'br') {
      const zlib: typeof import('node:zlib') = require('node:zlib');
      const decoder = encoding === 'br' ? zlib.createBrotliDecompress() : encoding === 'deflate' ? zlib.createInflate() : zlib.createGunzip();
      decoder.on('error', (error) => reject(Object.assign(new TypeError('terminated'), { cause: error })));
      stream = res.pipe(decoder);
    }
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      resolve(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    });
    res.on('error', (error) => reject(aborted(signal) ?? Object.assign(new TypeError('terminated'), { cause: error })));
    res.on('aborted', () => reject(aborted(signal) ?? Object.assign(new TypeError('terminated'), { cause: Object.assign(new Error('aborted'), { code: 'ECONNRESET' }) })));
  });
}
