import type { ArgumentsHost } from '@nestjs/common';
import { ApiExceptionFilter } from './api-exception.filter';
import type { JsonLogger } from './logger';

function answer(error: unknown): { status: number; headers: Record<string, string>; body: unknown } {
  const sent = { status: 0, headers: {} as Record<string, string>, body: undefined as unknown };
  const res = {
    headersSent: false,
    setHeader: (name: string, value: string) => void (sent.headers[name.toLowerCase()] = value),
    status(code: number) {
      sent.status = code;
      return this;
    },
    json(body: unknown) {
      sent.body = body;
      return this;
    },
  };
  const host = { switchToHttp: () => ({ getResponse: () => res }) } as unknown as ArgumentsHost;
  const logger = { event: () => undefined } as unknown as JsonLogger;
  new ApiExceptionFilter(logger).catch(error, host);
  return sent;
}

function apiError(fields: Record<string, unknown>): Error {
  return Object.assign(new Error(String(fields.message ?? 'x')), fields);
}

describe('unit: ApiExceptionFilter', () => {
  it('answers an app error with its status and {code, message, field}', () => {
    const r = answer(apiError({ code: 'RUN_ID_CONFLICT', status: 409, message: 'run r1 exists with other content', field: 'run_id' }));
    expect(r).toEqual({ status: 409, headers: {}, body: { code: 'RUN_ID_CONFLICT', message: 'run r1 exists with other content', field: 'run_id' } });
  });

  it('adds Retry-After (whole seconds) for a transient refusal such as 503 BUS_UNAVAILABLE', () => {
    const r = answer(apiError({ code: 'BUS_UNAVAILABLE', status: 503, message: 'retry', retryAfterSeconds: 2 }));
    expect(r.status).toBe(503);
    expect(r.headers['retry-after']).toBe('2');
    expect(r.body).toEqual({ code: 'BUS_UNAVAILABLE', message: 'retry' });
    expect(answer(apiError({ code: 'X', status: 503, message: 'm', retryAfterSeconds: 1.2 })).headers['retry-after']).toBe('2');
  });

  it('an unexpected error is a 500 INTERNAL without its message', () => {
    const r = answer(new Error('secret detail'));
    expect(r.status).toBe(500);
    expect(r.body).toEqual({ code: 'INTERNAL', message: 'the request could not be completed' });
    expect(r.headers).toEqual({});
  });
});
