/**
 * J1: the Anthropic and Ollama flavours of the judge, through the real LangChain clients against minimal
 * local servers speaking each provider's wire format (Messages API `/v1/messages`, Ollama `/api/chat`).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { JudgeError } from '@evals/domain';
import type { JudgeAdapterConfig, JudgeProvider } from './config';
import { LangChainJudge } from './langchain-judge';

interface Scripted {
  status: number;
  body: unknown;
}

interface ProviderServer {
  readonly baseUrl: string;
  readonly paths: string[];
  readonly bodies: Array<Record<string, unknown>>;
  next: Array<Scripted>;
  close(): Promise<void>;
}

async function startServer(): Promise<ProviderServer> {
  const state = { paths: [] as string[], bodies: [] as Array<Record<string, unknown>>, next: [] as Scripted[] };
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => {
      state.paths.push(`${req.method} ${req.url}`);
      state.bodies.push(JSON.parse(raw || '{}') as Record<string, unknown>);
      const reply = state.next.shift() ?? { status: 500, body: { error: 'unscripted' } };
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    get paths() {
      return state.paths;
    },
    get bodies() {
      return state.bodies;
    },
    get next() {
      return state.next;
    },
    set next(v) {
      state.next = v;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const REPLY = 'HIDDEN-REASONING: the output meets the rubric.\n{"verdict": "pass", "score": 0.75}';

const anthropicOk = (): Scripted => ({
  status: 200,
  body: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-20250514', content: [{ type: 'text', text: REPLY }], stop_reason: 'end_turn', usage: { input_tokens: 120, output_tokens: 30 } },
});

const ollamaOk = (): Scripted => ({
  status: 200,
  body: { model: 'llama3.1:8b', created_at: '2025-01-01T00:00:00Z', message: { role: 'assistant', content: REPLY }, done: true, done_reason: 'stop', prompt_eval_count: 80, eval_count: 20 },
});

let server: ProviderServer;
let sleeps: number[];

beforeAll(async () => {
  server = await startServer();
});

afterAll(async () => {
  await server.close();
});

beforeEach(() => {
  server.paths.length = 0;
  server.bodies.length = 0;
  server.next = [];
  sleeps = [];
});

function judgeFor(provider: JudgeProvider, model: string, overrides: Partial<JudgeAdapterConfig> = {}): LangChainJudge {
  return new LangChainJudge(
    {
      provider,
      model,
      baseUrl: server.baseUrl,
      ...(provider === 'anthropic' ? { apiKey: 'test-key' } : {}),
      timeoutMs: 5_000,
      maxRetries: 2,
      concurrency: 1,
      pricing: { input_per_mtok_usd: 3, output_per_mtok_usd: 15 },
      ...overrides,
    },
    { env: {}, random: () => 0, sleep: async (ms) => void sleeps.push(ms) },
  );
}

const request = { output: 'forty-two', rubric: 'Gives the answer 42' };

describe('J1: Anthropic', () => {
  it('judges through the Messages API with usage and cost', async () => {
    server.next = [anthropicOk()];
    const verdict = await judgeFor('anthropic', 'claude-sonnet-4-20250514').judge(request);
    expect(verdict).toMatchObject({ verdict: 'pass', score: 0.75, model: 'claude-sonnet-4-20250514', usage: { input_tokens: 120, output_tokens: 30 }, usage_estimated: false });
    expect(verdict.cost_usd).toBeCloseTo((120 * 3 + 30 * 15) / 1e6, 15);
    expect(server.paths).toEqual(['POST /v1/messages']);
    expect(server.bodies[0]).toMatchObject({ model: 'claude-sonnet-4-20250514', temperature: 0 });
    expect(JSON.stringify(verdict)).not.toContain('HIDDEN-REASONING');
  });

  it('429 is retried, then succeeds', async () => {
    server.next = [{ status: 429, body: { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } } }, anthropicOk()];
    await expect(judgeFor('anthropic', 'claude-sonnet-4-20250514').judge(request)).resolves.toMatchObject({ verdict: 'pass' });
    expect(server.paths).toHaveLength(2);
    expect(sleeps).toHaveLength(1);
  });

  it('no key: judge_credential_missing without a request', async () => {
    const judge = judgeFor('anthropic', 'claude-sonnet-4-20250514', { apiKey: undefined });
    await expect(judge.judge(request)).rejects.toMatchObject({ code: 'judge_credential_missing' });
    expect(server.paths).toEqual([]);
  });
});

describe('J1: Ollama', () => {
  it('judges through /api/chat with the reported token counts', async () => {
    server.next = [ollamaOk()];
    const verdict = await judgeFor('ollama', 'llama3.1:8b').judge(request);
    expect(verdict).toMatchObject({ verdict: 'pass', score: 0.75, model: 'llama3.1:8b', usage: { input_tokens: 80, output_tokens: 20 }, usage_estimated: false });
    expect(server.paths).toEqual(['POST /api/chat']);
  });

  it('500 is retried up to the bound, then judge_unavailable', async () => {
    server.next = [0, 1, 2].map(() => ({ status: 500, body: { error: 'boom' } }));
    const err = await judgeFor('ollama', 'llama3.1:8b').judge(request).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JudgeError);
    expect(err).toMatchObject({ code: 'judge_unavailable', details: { status: 500, attempts: 3 } });
    expect(server.paths).toHaveLength(3);
  });
});
