import { Catch, HttpException, Inject, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { LOGGER, type JsonLogger } from '@evals/platform';
import type { Response } from 'express';

/**
 * The regression app's API errors (calibration and comparison take candidate outputs in their bodies):
 * JSON `{code, message, field?}` with a stable code. A body-parser error carries the raw body (and Node's
 * JSON error quotes a piece of it), so it is reduced to its code: no output is ever echoed (D1).
 */
@Catch()
export class RegressionApiExceptionFilter implements ExceptionFilter {
  constructor(@Inject(LOGGER) private readonly logger: JsonLogger) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    if (res.headersSent) {
      res.end();
      return;
    }
    const type = (error as { type?: unknown } | null)?.type;
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
      // Our own errors always carry a code; a framework one's message is not trusted to be free of request data.
      res.status(error.getStatus()).json({ code: error.getStatus() === 404 ? 'NOT_FOUND' : 'HTTP_ERROR', message: `the request failed (${error.getStatus()})` });
      return;
    }
    this.logger.event('error', 'request failed', { error: error instanceof Error ? error.name : 'error' });
    res.status(500).json({ code: 'INTERNAL', message: 'the request could not be completed' });
  }
}
