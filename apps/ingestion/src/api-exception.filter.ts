import { Catch, HttpException, Inject, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { LOGGER, type JsonLogger } from '@evals/platform';
import type { Response } from 'express';
import { IntakeError } from './intake-error';

/**
 * Every error answers JSON `{code, message, field?}` with a stable code. Nothing of the request body is
 * echoed (D1): an express body-parser error, for example, carries the raw body and is reduced to its code.
 */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  constructor(@Inject(LOGGER) private readonly logger: JsonLogger) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    if (error instanceof IntakeError) {
      res.status(error.status).json({ code: error.code, message: error.message, ...(error.field ? { field: error.field } : {}), ...(error.details ? { details: error.details } : {}) });
      return;
    }
    const status = (error as { status?: number; statusCode?: number }).status ?? (error as { statusCode?: number }).statusCode;
    const type = (error as { type?: string }).type;
    if (type === 'entity.too.large') {
      res.status(413).json({ code: 'PAYLOAD_TOO_LARGE', message: 'the request body is larger than the server accepts' });
      return;
    }
    if (type === 'entity.parse.failed') {
      res.status(400).json({ code: 'MALFORMED_JSON', message: 'the request body is not valid JSON', field: 'body' });
      return;
    }
    if (error instanceof HttpException) {
      const body = error.getResponse();
      if (typeof body === 'object' && body !== null && 'code' in body) {
        res.status(error.getStatus()).json(body);
        return;
      }
      res.status(error.getStatus()).json({ code: error.getStatus() === 404 ? 'NOT_FOUND' : 'HTTP_ERROR', message: error.message });
      return;
    }
    this.logger.event('error', 'request failed', { error: error instanceof Error ? error.name : 'error', status: status ?? 500 });
    res.status(500).json({ code: 'INTERNAL', message: 'the request could not be completed' });
  }
}
