import { failure, fakeFetch, networkFailure } from './cli.testing';
import { ApiError, CliError, EXIT, exitForHttpStatus } from './exit-codes';
import { ApiClient, resolveApiKey, resolveEndpoints } from './http';

const endpoints = { ingestion: 'http://evals.test:3001', read: 'http://evals.test:3003', regression: 'http://evals.test:3004' };

describe('unit: exit codes from HTTP results (X5)', () => {
  it.each([
    [200, EXIT.PASS],
    [201, EXIT.PASS],
    [400, EXIT.USAGE],
    [401, EXIT.USAGE],
    [403, EXIT.USAGE],
    [404, EXIT.USAGE],
    [409, EXIT.USAGE],
    [413, EXIT.USAGE],
    [422, EXIT.USAGE],
    [408, EXIT.UNREACHABLE],
    [429, EXIT.UNREACHABLE],
    [500, EXIT.UNREACHABLE],
    [502, EXIT.UNREACHABLE],
    [503, EXIT.UNREACHABLE],
    [504, EXIT.UNREACHABLE],
  ])('HTTP %i exits %i', (status, code) => {
    expect(exitForHttpStatus(status)).toBe(code);
  });

  it.each([400, 404, 409, 413, 422])('a %i refusal is exit 2 and carries the server code, message and field', async (status) => {
    const { fetch } = fakeFetch(() => ({ status, json: { code: 'SUITE_NOT_FOUND', message: 'no suite with key nope', field: 'suite_key' } }));
    const e = await failure(new ApiClient(endpoints, { timeoutMs: 1000, fetch }).post(`${endpoints.ingestion}/v1/runs`, { json: { outputs: [{ case_id: 'a', output: 'SECRET-OUTPUT' }] } }));
    expect(e).toBeInstanceOf(ApiError);
    expect(e.exitCode).toBe(EXIT.USAGE);
    expect(e.message).toContain(`HTTP ${status} SUITE_NOT_FOUND: no suite with key nope (field: suite_key)`);
    expect(e.message).not.toContain('SECRET-OUTPUT');
  });

  it.each([500, 502, 503])('a %i is exit 3, even when the body is not JSON', async (status) => {
    const { fetch } = fakeFetch(() => ({ status, text: '<html>Bad Gateway</html>' }));
    const e = await failure(new ApiClient(endpoints, { timeoutMs: 1000, fetch }).get(`${endpoints.read}/v1/scorecards`));
    expect(e.exitCode).toBe(EXIT.UNREACHABLE);
    expect(e.message).toContain(`HTTP ${status}`);
    expect(e.message).not.toContain('<html>');
  });

  it.each([
    ['ECONNREFUSED', /connection refused/],
    ['ENOTFOUND', /host not found \(DNS\)/],
    ['EAI_AGAIN', /host not found \(DNS\)/],
    ['ECONNRESET', /ECONNRESET/],
    ['UND_ERR_CONNECT_TIMEOUT', /connection timed out/],
  ])('no answer (%s) is exit 3', async (code, message) => {
    const { fetch } = fakeFetch(() => networkFailure(code));
    const e = await failure(new ApiClient(endpoints, { timeoutMs: 1000, fetch }).get(`${endpoints.ingestion}/v1/suites/x`));
    expect(e.exitCode).toBe(EXIT.UNREACHABLE);
    expect(e.message).toMatch(message);
    expect(e.message).toContain('http://evals.test:3001');
  });

  it('a timeout is exit 3 and names --timeout', async () => {
    const slow = (async (_url: string, init: RequestInit) =>
      new Promise((_resolve, reject) => init.signal!.addEventListener('abort', () => reject(init.signal!.reason)))) as unknown as typeof fetch;
    const e = await failure(new ApiClient(endpoints, { timeoutMs: 30, fetch: slow }).get(`${endpoints.ingestion}/v1/suites/x`));
    expect(e.exitCode).toBe(EXIT.UNREACHABLE);
    expect(e.message).toMatch(/no answer .* within .* \(--timeout\)/);
  });

  it('a 200 that is not JSON is a configuration error (exit 2): the URL is not the evals API', async () => {
    const { fetch } = fakeFetch(() => ({ status: 200, text: '<html>welcome to nginx</html>' }));
    const e = await failure(new ApiClient(endpoints, { timeoutMs: 1000, fetch }).get(`${endpoints.ingestion}/v1/suites/x`));
    expect(e.exitCode).toBe(EXIT.USAGE);
    expect(e.message).toMatch(/not the evals API/);
  });

  it('sends Authorization: Bearer only when a key is set, and 401/403 say what to fix', async () => {
    const rec = fakeFetch(() => ({ status: 401, json: { code: 'UNAUTHENTICATED', message: 'missing or invalid API key' } }));
    const e = await failure(new ApiClient(endpoints, { timeoutMs: 1000, fetch: rec.fetch, apiKey: 'k-123' }).get(`${endpoints.ingestion}/v1/gate/g`));
    expect(rec.calls[0].headers.authorization).toBe('Bearer k-123');
    expect(e.exitCode).toBe(EXIT.USAGE);
    expect(e.message).toContain('EVALS_API_KEY');
    expect(e.message).not.toContain('k-123');
    const none = fakeFetch(() => ({ status: 200, json: {} }));
    await new ApiClient(endpoints, { timeoutMs: 1000, fetch: none.fetch }).get(`${endpoints.ingestion}/health`);
    expect(none.calls[0].headers.authorization).toBeUndefined();
  });
});

describe('unit: where the APIs live (docs/cli.md, Servers)', () => {
  it('defaults to 127.0.0.1:3001 and derives the read model (+2) and regression (+3) ports', () => {
    expect(resolveEndpoints({}, {})).toEqual({ ingestion: 'http://127.0.0.1:3001', read: 'http://127.0.0.1:3003', regression: 'http://127.0.0.1:3004' });
    expect(resolveEndpoints({}, { EVALS_SERVER: 'http://evals:4001' })).toEqual({ ingestion: 'http://evals:4001', read: 'http://evals:4003', regression: 'http://evals:4004' });
  });

  it('flags beat variables; explicit read and regression servers beat derivation; a gateway URL without a port serves all', () => {
    const env = { EVALS_SERVER: 'http://a:1', EVALS_READ_SERVER: 'http://r:2', EVALS_REGRESSION_SERVER: 'http://g:3/' };
    expect(resolveEndpoints({}, env)).toEqual({ ingestion: 'http://a:1', read: 'http://r:2', regression: 'http://g:3' });
    expect(resolveEndpoints({ server: 'http://b:5', 'read-server': 'http://rr:6' }, env)).toEqual({ ingestion: 'http://b:5', read: 'http://rr:6', regression: 'http://g:3' });
    expect(resolveEndpoints({ server: 'https://evals.example.com/api/' }, {})).toEqual({
      ingestion: 'https://evals.example.com/api',
      read: 'https://evals.example.com/api',
      regression: 'https://evals.example.com/api',
    });
  });

  it.each([['not a url'], ['ftp://x:1'], ['http://user:pw@x:1'], ['http://x:1/?q=1']])('refuses %s with exit 2', (server) => {
    let code = -1;
    try {
      resolveEndpoints({ server }, {});
    } catch (e) {
      code = (e as CliError).exitCode;
    }
    expect(code).toBe(EXIT.USAGE);
  });

  it('takes the API key from --api-key, else EVALS_API_KEY; refuses one that cannot be a header', () => {
    expect(resolveApiKey({}, {})).toBeUndefined();
    expect(resolveApiKey({}, { EVALS_API_KEY: 'env-key' })).toBe('env-key');
    expect(resolveApiKey({ 'api-key': 'flag-key' }, { EVALS_API_KEY: 'env-key' })).toBe('flag-key');
    expect(() => resolveApiKey({ 'api-key': 'bad key\n' }, {})).toThrow(CliError);
  });
});
