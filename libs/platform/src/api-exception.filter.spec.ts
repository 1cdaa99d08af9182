import { HttpException, type ArgumentsHost } from '@nestjs/common';
import { API_ERROR_CODES, ApiError, codesOfStatus, statusOfCode } from './api-error';
import { ApiExceptionFilter } from './api-exception.filter';
import { BODY_TOO_DEEP_TYPE } from './body-depth';
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

describe('unit: ApiExceptionFilter, the one mapping of codes to statuses', () => {
  it('answers a domain error with the status of its code and {code, message, field}', () => {
    const r = answer(new ApiError('RUN_ID_CONFLICT', 'run r1 exists with other content', 'run_id'));
    expect(r).toEqual({ status: 409, headers: {}, body: { code: 'RUN_ID_CONFLICT', message: 'run r1 exists with other content', field: 'run_id' } });
    expect(answer(new ApiError('SUITE_INVALID', 'bad', 'cases[0].input', { errors: [] })).body).toEqual({ code: 'SUITE_INVALID', message: 'bad', field: 'cases[0].input', details: { errors: [] } });
  });

  it('adds Retry-After (whole seconds) for a transient refusal such as 503 BUS_UNAVAILABLE', () => {
    const r = answer(new ApiError('BUS_UNAVAILABLE', 'retry'));
    expect(r.status).toBe(503);
    expect(r.headers['retry-after']).toBe('2');
    expect(r.body).toEqual({ code: 'BUS_UNAVAILABLE', message: 'retry' });
  });

  it('an error that only looks like one (code and status, not an ApiError) is a 500 INTERNAL without its message', () => {
    for (const error of [new Error('secret detail'), Object.assign(new Error('secret detail'), { code: 'X', status: 418 }), new RangeError('Maximum call stack size exceeded')]) {
      const r = answer(error);
      expect(r.status).toBe(500);
      expect(r.body).toEqual({ code: 'INTERNAL', message: 'the request could not be completed' });
      expect(r.headers).toEqual({});
    }
  });

  it('a body nested too deeply (the body parser verify hook) is 400 BODY_TOO_DEEP, as raised or as Nest wraps it', () => {
    const raised = Object.assign(new Error('x'), { type: BODY_TOO_DEEP_TYPE, status: 400 });
    for (const error of [raised, new HttpException('Bad Request', 400, { cause: raised })]) {
      const r = answer(error);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ code: 'BODY_TOO_DEEP', field: 'body' });
    }
  });

  it("the access guard's refusals keep their fields, with the status of their code", () => {
    const r = answer(new HttpException({ code: 'RATE_LIMITED', message: 'slow down', retry_after_seconds: 3 }, 429));
    expect(r).toMatchObject({ status: 429, body: { code: 'RATE_LIMITED', retry_after_seconds: 3 } });
    expect(answer(new HttpException('Not Found', 404)).body).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('every code has one status; the codes the contract suites and docs rely on keep theirs', () => {
    expect(Object.fromEntries(['INVALID_REQUEST', 'OUTPUT_TOO_LARGE', 'SUITE_NOT_FOUND', 'UNKNOWN_CASE', 'RUN_ID_CONFLICT', 'EMPTY_RUN', 'RUN_PENDING', 'BUS_UNAVAILABLE', 'FINDING_NOT_FOUND', 'TARGET_BELOW_MINIMUM', 'TARGET_INVALID', 'JUDGE_CALL_FAILED', 'SUITE_INVALID', 'BODY_TOO_DEEP'].map((c) => [c, statusOfCode(c)]))).toEqual({
      INVALID_REQUEST: 400,
      OUTPUT_TOO_LARGE: 413,
      SUITE_NOT_FOUND: 404,
      UNKNOWN_CASE: 422,
      RUN_ID_CONFLICT: 409,
      EMPTY_RUN: 422,
      RUN_PENDING: 202,
      BUS_UNAVAILABLE: 503,
      FINDING_NOT_FOUND: 404,
      TARGET_BELOW_MINIMUM: 422,
      TARGET_INVALID: 400,
      JUDGE_CALL_FAILED: 502,
      SUITE_INVALID: 422,
      BODY_TOO_DEEP: 400,
    });
    expect(statusOfCode('NOT_A_CODE')).toBe(500);
    expect(codesOfStatus(401)).toEqual(['UNAUTHENTICATED']);
    for (const [code, entry] of Object.entries(API_ERROR_CODES)) {
      expect(code).toMatch(/^[A-Z][A-Z_]+$/);
      expect(entry.description.length).toBeGreaterThan(10);
    }
  });
});
