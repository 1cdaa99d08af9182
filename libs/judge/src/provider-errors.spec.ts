import { classifyProviderError, statusOf } from './provider-errors';

describe('classifyProviderError', () => {
  it.each([
    [{ status: 429 }, 'rate_limited', true],
    [{ status: 500 }, 'server_error', true],
    [{ status: 503 }, 'server_error', true],
    [{ status_code: 502 }, 'server_error', true],
    [{ status: 401 }, 'credential_rejected', false],
    [{ status: 403 }, 'credential_rejected', false],
    [{ status: 400 }, 'request_refused', false],
    [{ status: 404 }, 'request_refused', false],
    [Object.assign(new Error('x'), { name: 'TimeoutError' }), 'timeout', false],
    [new Error('ECONNREFUSED'), 'connection_failed', false],
    [undefined, 'connection_failed', false],
  ])('%j -> %s (retryable %s)', (error, kind, retryable) => {
    expect(classifyProviderError(error)).toMatchObject({ kind, retryable });
  });

  it('reads only integer HTTP statuses', () => {
    expect(statusOf({ status: '500' })).toBeUndefined();
    expect(statusOf({ response: { status: 502 } })).toBe(502);
  });
});
