import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as zlib from 'node:zlib';
import { failure } from './cli.testing';
import { CliError, EXIT } from './exit-codes';
import { ApiClient } from './http';
import { nodeTransport } from './http-transport';

/**
 * The CLI's default transport (node:http instead of fetch) against a loopback server: what ApiClient relied
 * on fetch for - status, body, JSON, timeouts, refused connections, redirects, compressed answers - still holds.
 */
interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

type Handler = (req: Seen, res: http.ServerResponse) => void;

async function listen(handler: Handler): Promise<{ base: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => {
      const s = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      seen.push(s);
      handler(s, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function client(base: string, timeoutMs = 5000, apiKey?: string): ApiClient {
  return new ApiClient({ ingestion: base, read: base, regression: base }, { timeoutMs, ...(apiKey ? { apiKey } : {}) });
}

describe('unit: the CLI requests over node:http (http-transport.ts)', () => {
  it('sends the method, headers and a UTF-8 body with its length; parses the JSON answer', async () => {
    const s = await listen((_req, res) => {
      res.setHeader('content-type', 'application/json; charset=utf-8');
      res.end(JSON.stringify({ ok: 'ü ✓' }));
    });
    try {
      const answer = await client(s.base, 5000, 'k-1').post(`${s.base}/v1/runs`, { json: { output: 'é😀' } });
      expect(answer).toEqual({ status: 200, body: { ok: 'ü ✓' }, contentType: 'application/json; charset=utf-8' });
      expect(s.seen[0]).toMatchObject({ method: 'POST', url: '/v1/runs', body: JSON.stringify({ output: 'é😀' }) });
      expect(s.seen[0].headers).toMatchObject({ 'content-type': 'application/json', authorization: 'Bearer k-1', 'content-length': String(Buffer.byteLength(JSON.stringify({ output: 'é😀' }))) });
    } finally {
      await s.close();
    }
  });

  it('a refusal keeps its status, code and exit code', async () => {
    const s = await listen((_req, res) => {
      res.statusCode = 422;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ code: 'UNKNOWN_CASE', message: 'no case x', field: 'outputs[0].case_id' }));
    });
    try {
      const e = await failure(client(s.base).post(`${s.base}/v1/streamed-runs/r/outputs`, { text: '{"outputs":[]}', contentType: 'application/json' }));
      expect(e.exitCode).toBe(EXIT.USAGE);
      expect(e.message).toContain('HTTP 422 UNKNOWN_CASE: no case x (field: outputs[0].case_id)');
    } finally {
      await s.close();
    }
  });

  it('no answer within --timeout is exit 3 and names --timeout', async () => {
    const s = await listen(() => undefined);
    try {
      const e = await failure(client(s.base, 200).get(`${s.base}/v1/suites/x`));
      expect(e.exitCode).toBe(EXIT.UNREACHABLE);
      expect(e.message).toMatch(/no answer from http:\/\/127\.0\.0\.1:\d+ within 0 s \(--timeout\)/);
    } finally {
      await s.close();
    }
  });

  it('a timeout while the body is read is a timeout too', async () => {
    const s = await listen((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.write('{"partial":');
    });
    try {
      const e = await failure(client(s.base, 300).get(`${s.base}/v1/runs/r`));
      expect(e.exitCode).toBe(EXIT.UNREACHABLE);
      expect(e.message).toMatch(/\(--timeout\)/);
    } finally {
      await s.close();
    }
  });

  it('a refused connection is exit 3 with "connection refused"', async () => {
    const s = await listen(() => undefined);
    const base = s.base;
    await s.close();
    const e = await failure(client(base).get(`${base}/health`));
    expect(e.exitCode).toBe(EXIT.UNREACHABLE);
    expect(e.message).toContain(`cannot reach ${base}: connection refused`);
  });

  it('follows redirects as fetch does: 307 repeats the POST, 303 turns it into a GET', async () => {
    const s = await listen((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/a') {
        res.statusCode = 307;
        res.setHeader('location', '/b');
        return res.end();
      }
      if (req.url === '/b') {
        res.statusCode = 303;
        res.setHeader('location', '/c');
        return res.end();
      }
      res.end(JSON.stringify({ method: req.method, body: req.body }));
    });
    try {
      const answer = await client(s.base).post(`${s.base}/a`, { json: { x: 1 } });
      expect(answer.body).toEqual({ method: 'GET', body: '' });
      expect(s.seen.map((r) => [r.method, r.url, r.body])).toEqual([
        ['POST', '/a', '{"x":1}'],
        ['POST', '/b', '{"x":1}'],
        ['GET', '/c', ''],
      ]);
    } finally {
      await s.close();
    }
  });

  it('the API key does not follow a redirect to another origin', async () => {
    const other = await listen((_req, res) => res.end('{}'));
    const s = await listen((_req, res) => {
      res.statusCode = 302;
      res.setHeader('location', `${other.base.replace('127.0.0.1', 'localhost')}/elsewhere`);
      res.end();
    });
    try {
      await client(s.base, 5000, 'k-secret').get(`${s.base}/v1/suites`);
      expect(s.seen[0].headers.authorization).toBe('Bearer k-secret');
      expect(other.seen[0].url).toBe('/elsewhere');
      expect(other.seen[0].headers.authorization).toBeUndefined();
    } finally {
      await s.close();
      await other.close();
    }
  });

  it('decodes a compressed answer and drops a byte order mark', async () => {
    const s = await listen((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/gzip') {
        res.setHeader('content-encoding', 'gzip');
        return res.end(zlib.gzipSync(JSON.stringify({ z: 'gzip' })));
      }
      res.setHeader('content-encoding', 'br');
      res.end(zlib.brotliCompressSync('\ufeff' + JSON.stringify({ z: 'br' })));
    });
    try {
      expect((await client(s.base).get(`${s.base}/gzip`)).body).toEqual({ z: 'gzip' });
      const raw = await nodeTransport(`${s.base}/br`, { method: 'GET', headers: {}, signal: AbortSignal.timeout(5000), redirect: 'follow' });
      expect(raw.headers.get('Content-Type')).toBe('application/json');
      expect(await raw.text()).toBe(JSON.stringify({ z: 'br' }));
    } finally {
      await s.close();
    }
  });
});
