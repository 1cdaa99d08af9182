import { Catch, HttpException, Inject, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { LOGGER, type JsonLogger } from '@evals/platform';
import type { Response } from 'express';

/** Every error answers JSON `{code, message, field?}` with a stable code; internals are never echoed. */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  constructor(@Inject(LOGGER) private readonly logger: JsonLogger) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    if (res.headersSent) {
      res.end();
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
    this.logger.event('error', 'request failed', { error: error instanceof Error ? error.name : 'error' });
    res.status(500).json({ code: 'INTERNAL', message: 'the request could not be completed' });
  }
}
