/**
 * A real local OpenAI-compatible server for judge tests: `POST /v1/chat/completions` (non-streaming, with
 * `usage`) on 127.0.0.1 and a random port. Each test scripts the answers with a function of the request
 * body; the server records every request (bodies, count) and the highest number it had in flight at once,
 * so tests can assert "no HTTP call" and concurrency limits on what actually reached the wire.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeChatMessage {
  readonly role: string;
  readonly content: string;
}

export interface FakeChatRequest {
  readonly model: string;
  readonly messages: readonly FakeChatMessage[];
  readonly [key: string]: unknown;
}

export interface FakeReply {
  /** HTTP status (200). */
  readonly status?: number;
  /** JSON body (use `completion(...)` for a 200, `errorBody(...)` otherwise). */
  readonly body?: unknown;
  /** A raw body instead of JSON. */
  readonly rawBody?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Wait this long before answering; `Infinity` never answers (until the client gives up). */
  readonly delayMs?: number;
}

/** `index` counts the requests this server received, from 0. */
export type FakeScript = (request: FakeChatRequest, index: number) => FakeReply | Promise<FakeReply>;

export interface FakeOpenAI {
  /** `http://127.0.0.1:<port>/v1`: give it to the judge as its base URL. */
  readonly baseUrl: string;
  /** Every request body received, in order. */
  readonly requests: readonly FakeChatRequest[];
  readonly requestCount: number;
  /** Requests being answered right now. */
  readonly inFlight: number;
  /** The highest `inFlight` seen. */
  readonly maxConcurrent: number;
  /** Requests whose client went away before the answer (e.g. a timeout). */
  readonly abandoned: number;
  /** Replaces the script. */
  script(fn: FakeScript): void;
  /** Forgets recorded requests and the concurrency peak. */
  reset(): void;
  close(): Promise<void>;
}

/** A marker put in every scripted reasoning, to prove the reasoning never escapes the adapter (J2, D1). */
export const REASONING_MARKER = 'REASONING-MARKER-5b1e7c';

export interface CompletionOptions {
  readonly model?: string;
  /** Token counts to report; null leaves `usage` out of the response. */
  readonly usage?: { readonly prompt_tokens: number; readonly completion_tokens: number } | null;
}

/** A 200 chat completion whose assistant message is `content`. */
export function completion(content: string, options: CompletionOptions = {}): FakeReply {
  const usage = options.usage === undefined ? { prompt_tokens: 321, completion_tokens: 54 } : options.usage;
  return {
    status: 200,
    body: {
      id: 'chatcmpl-fake',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: options.model ?? 'fake-model',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      ...(usage === null ? {} : { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } }),
    },
  };
}

/** An OpenAI-style error reply. */
export function errorReply(status: number, message = 'scripted error', headers?: Record<string, string>): FakeReply {
  return { status, body: { error: { message, type: 'fake_error', code: null } }, ...(headers ? { headers } : {}) };
}

/** A well-behaved judge reply: reasoning (with the marker) first, the verdict JSON last. */
export function verdictReply(verdict: 'pass' | 'fail', score: number, reasoning = `${REASONING_MARKER}: I checked the output against each point of the rubric.`): string {
  return `${reasoning}\n\n{"verdict": "${verdict}", "score": ${score}}`;
}

/** A well-behaved pairwise reply. */
export function pairwiseReply(winner: 'first' | 'second' | 'tie'): string {
  return `${REASONING_MARKER}: I compared both answers against the rubric.\n{"winner": "${winner}"}`;
}

function between(text: string, open: string, close: string): string | null {
  const start = text.indexOf(open);
  const end = text.lastIndexOf(close);
  if (start < 0 || end < start) return null;
  return text.slice(start + open.length, end);
}

function userText(request: FakeChatRequest): string {
  return request.messages
    .filter((m) => m.role === 'user')
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))
    .join('\n');
}

/** The candidate output a judge request carries (the text inside `<candidate_output>`), or null. */
export function candidateOutputOf(request: FakeChatRequest): string | null {
  return between(userText(request), '<candidate_output>\n', '\n</candidate_output>');
}

/** The two answers of a pairwise request, in the order shown, or null. */
export function pairwiseAnswersOf(request: FakeChatRequest): { first: string; second: string } | null {
  const text = userText(request);
  const first = between(text, '<answer_first>\n', '\n</answer_first>');
  const second = between(text, '<answer_second>\n', '\n</answer_second>');
  return first === null || second === null ? null : { first, second };
}

/** Ready-made scripts for the behaviours the judge must handle. */
export const scripts = {
  /** Always the same well-formed verdict. */
  verdict: (verdict: 'pass' | 'fail', score: number, options?: CompletionOptions): FakeScript => () => completion(verdictReply(verdict, score), options),
  /** The verdict written before the reasoning. */
  verdictFirst: (): FakeScript => () => completion(`{"verdict": "pass", "score": 0.95}\n${REASONING_MARKER}: then my reasoning.`),
  /** A reply whose verdict is not valid JSON. */
  malformed: (): FakeScript => () => completion(`${REASONING_MARKER}: fine.\n{"verdict": pass, "score": 0.9`),
  /** Never answers (until the client aborts). */
  hang: (): FakeScript => () => ({ delayMs: Number.POSITIVE_INFINITY }),
  /** Always `status`. */
  status: (status: number, headers?: Record<string, string>): FakeScript => () => errorReply(status, 'scripted error', headers),
  /** `failures` answers of `status` (e.g. 429), then `then`. */
  failThen: (failures: number, status: number, then: FakeScript): FakeScript => (request, index) => (index < failures ? errorReply(status) : then(request, index)),
  /** Length-biased judge: pass iff the candidate output is at least `minChars` long. */
  lengthBiased: (minChars: number): FakeScript => (request) => {
    const output = candidateOutputOf(request) ?? '';
    return completion(output.length >= minChars ? verdictReply('pass', 0.9) : verdictReply('fail', 0.2));
  },
  /** Order-biased pairwise judge: always prefers the answer shown first. */
  orderBiased: (): FakeScript => () => completion(pairwiseReply('first')),
  /** A fair pairwise judge: prefers the answer containing `marker`, whatever the order. */
  prefers: (marker: string): FakeScript => (request) => {
    const answers = pairwiseAnswersOf(request);
    if (!answers) return errorReply(400, 'not a pairwise request');
    const winner = answers.first.includes(marker) ? 'first' : answers.second.includes(marker) ? 'second' : 'tie';
    return completion(pairwiseReply(winner));
  },
};

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, reply: FakeReply): void {
  if (res.destroyed || res.writableEnded) return;
  const status = reply.status ?? 200;
  const body = reply.rawBody ?? JSON.stringify(reply.body ?? {});
  res.writeHead(status, { 'content-type': 'application/json', ...(reply.headers ?? {}) });
  res.end(body);
}

export async function startFakeOpenAI(initial: FakeScript = scripts.verdict('pass', 0.9)): Promise<FakeOpenAI> {
  let script = initial;
  let requests: FakeChatRequest[] = [];
  let inFlight = 0;
  let maxConcurrent = 0;
  let abandoned = 0;

  const server: Server = createServer((req, res) => {
    inFlight++;
    maxConcurrent = Math.max(maxConcurrent, inFlight);
    let open = true;
    res.on('close', () => {
      if (!open) return;
      open = false;
      inFlight--;
      if (!res.writableFinished) abandoned++;
    });
    void (async () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        send(res, errorReply(404, `no route ${req.method} ${req.url}`));
        return;
      }
      const raw = await readBody(req);
      let body: FakeChatRequest;
      try {
        body = JSON.parse(raw) as FakeChatRequest;
      } catch {
        send(res, errorReply(400, 'body is not JSON'));
        return;
      }
      const index = requests.length;
      requests.push(body);
      let reply: FakeReply;
      try {
        reply = await script(body, index);
      } catch {
        reply = errorReply(500, 'script threw');
      }
      const delay = reply.delayMs ?? 0;
      if (delay === Number.POSITIVE_INFINITY) return; // answered never; the client's abort closes it
      if (delay > 0) {
        const timer = setTimeout(() => send(res, reply), delay);
        res.on('close', () => clearTimeout(timer));
        return;
      }
      send(res, reply);
    })().catch(() => send(res, errorReply(500, 'fake server failure')));
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    get requests() {
      return requests;
    },
    get requestCount() {
      return requests.length;
    },
    get inFlight() {
      return inFlight;
    },
    get maxConcurrent() {
      return maxConcurrent;
    },
    get abandoned() {
      return abandoned;
    },
    script(fn) {
      script = fn;
    },
    reset() {
      requests = [];
      maxConcurrent = inFlight;
      abandoned = 0;
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    },
  };
}
