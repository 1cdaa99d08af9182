import type { INestApplication } from '@nestjs/common';
import { buildAsyncApiDocument } from '@evals/contracts';
import type { Request, Response } from 'express';

/**
 * The bus contract's AsyncAPI 3 document (issue 16), served at `/asyncapi.json` by every app next to
 * `/openapi.json`: the modules that consume our subjects read the contract from any running instance. Built
 * once at boot from @evals/contracts - the same bytes as docs/asyncapi.json (`npm run docs:asyncapi`). It
 * describes message shapes only, no data, and is served like `/openapi.json` (straight on the HTTP adapter).
 */
export function serveAsyncApi(app: INestApplication, version: string): void {
  const body = JSON.stringify(buildAsyncApiDocument({ version }));
  app.getHttpAdapter().get('/asyncapi.json', (_req: Request, res: Response) => {
    res.status(200).type('application/json').send(body);
  });
}
