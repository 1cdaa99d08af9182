import { Catch, HttpException, Inject, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { ApiError, statusOfCode } from './api-error';
import { BODY_TOO_DEEP_TYPE, MAX_BODY_DEPTH } from './body-depth';
import type { JsonLogger } from './logger';
import { LOGGER } from './tokens';

/**
 * Every error of every app answers JSON `{code, message, field?, details?}` with a stable code (registered
 * globally by InfrastructureModule): an ApiError's status comes from the code's entry in API_ERROR_CODES,
 * the one mapping of codes to statuses. Nothing of a request is echoed (D1): a body-parser error carries the raw body,
 * and Node's JSON error quotes a piece of it, so it is reduced to its code; a framework error's message is
 * not trusted either; an unexpected error is logged by name only.
 */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  constructor(@Inject(LOGGER) private readonly logger: JsonLogger) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    if (res.headersSent) {
      res.end();
      return;
    }
    if (error instanceof ApiError) {
      if (typeof error.retryAfterSeconds === 'number') res.setHeader('Retry-After', String(Math.max(0, Math.ceil(error.retryAfterSeconds))));
      res.status(statusOfCode(error.code)).json({ code: error.code, message: error.message, ...(error.field ? { field: error.field } : {}), ...(error.details ? { details: error.details } : {}) });
      return;
    }
    // body-parser's error type; Nest 12 wraps it in an HttpException with the original as `cause`.
    const type = (error as { type?: unknown } | null)?.type ?? (error as { cause?: { type?: unknown } } | null)?.cause?.type;
    if (type === 'entity.too.large') {
      res.status(statusOfCode('PAYLOAD_TOO_LARGE')).json({ code: 'PAYLOAD_TOO_LARGE', message: 'the request body is larger than the server accepts' });
      return;
    }
    if (type === BODY_TOO_DEEP_TYPE) {
      res.status(statusOfCode('BODY_TOO_DEEP')).json({ code: 'BODY_TOO_DEEP', message: `the JSON body nests objects or arrays deeper than ${MAX_BODY_DEPTH} levels`, field: 'body' });
      return;
    }
    if (type === 'entity.parse.failed' || type === 'encoding.unsupported' || type === 'charset.unsupported') {
      res.status(statusOfCode('MALFORMED_JSON')).json({ code: 'MALFORMED_JSON', message: 'the request body is not valid JSON', field: 'body' });
      return;
    }
    if (error instanceof HttpException) {
      const body = error.getResponse();
      // The access guard's refusals (UNAUTHENTICATED, FORBIDDEN, RATE_LIMITED) carry catalogue codes and fields of their own.
      const code = typeof body === 'object' && body !== null ? (body as { code?: unknown }).code : undefined;
      if (typeof code === 'string') {
        res.status(statusOfCode(code) === 500 ? error.getStatus() : statusOfCode(code)).json(body);
        return;
      }
      res.status(error.getStatus()).json({ code: error.getStatus() === 404 ? 'NOT_FOUND' : 'HTTP_ERROR', message: `the request failed (${error.getStatus()})` });
      return;
    }
    this.logger.event('error', 'request failed', { error: error instanceof Error ? error.name : 'error' });
    res.status(500).json({ code: 'INTERNAL', message: 'the request could not be completed' });
  }
}
