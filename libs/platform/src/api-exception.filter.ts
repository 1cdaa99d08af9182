import { Catch, HttpException, Inject, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import type { JsonLogger } from './logger';
import { LOGGER } from './tokens';

/**
 * A domain error an app throws to answer a request: a stable code, an HTTP status, the offending field.
 * Apps declare their own codes (e.g. ingestion's IntakeError); this filter only needs the shape.
 */
export interface ApiError {
  readonly code: string;
  readonly status: number;
  readonly message: string;
  readonly field?: string;
  readonly details?: unknown;
  /** A transient refusal (e.g. 503 `BUS_UNAVAILABLE`): the same request may be retried after this many seconds. */
  readonly retryAfterSeconds?: number;
}

function isApiError(error: unknown): error is ApiError {
  const e = error as Partial<ApiError> | null;
  return error instanceof Error && typeof e?.code === 'string' && typeof e?.status === 'number';
}

/**
 * Every error of every app answers JSON `{code, message, field?}` with a stable code (registered globally
 * by InfrastructureModule). Nothing of a request is echoed (D1): a body-parser error carries the raw body,
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
    if (isApiError(error)) {
      if (typeof error.retryAfterSeconds === 'number') res.setHeader('Retry-After', String(Math.max(0, Math.ceil(error.retryAfterSeconds))));
      res.status(error.status).json({ code: error.code, message: error.message, ...(error.field ? { field: error.field } : {}), ...(error.details ? { details: error.details } : {}) });
      return;
    }
    // body-parser's error type; Nest 12 wraps it in an HttpException with the original as `cause`.
    const type = (error as { type?: unknown } | null)?.type ?? (error as { cause?: { type?: unknown } } | null)?.cause?.type;
    if (type === 'entity.too.large') {
      res.status(413).json({ code: 'PAYLOAD_TOO_LARGE', message: 'the request body is larger than the server accepts' });
      return;
    }
    if (type === 'entity.parse.failed' || type === 'encoding.unsupported' || type === 'charset.unsupported') {
      res.status(400).json({ code: 'MALFORMED_JSON', message: 'the request body is not valid JSON', field: 'body' });
      return;
    }
    if (error instanceof HttpException) {
      const body = error.getResponse();
      if (typeof body === 'object' && body !== null && 'code' in body) {
        res.status(error.getStatus()).json(body);
        return;
      }
      res.status(error.getStatus()).json({ code: error.getStatus() === 404 ? 'NOT_FOUND' : 'HTTP_ERROR', message: `the request failed (${error.getStatus()})` });
      return;
    }
    this.logger.event('error', 'request failed', { error: error instanceof Error ? error.name : 'error' });
    res.status(500).json({ code: 'INTERNAL', message: 'the request could not be completed' });
  }
}
