import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { renderAsyncApiJson } from '@evals/contracts';
import { serveAsyncApi } from './asyncapi';

@Module({})
class EmptyModule {}

const root = join(__dirname, '..', '..', '..');

describe('serveAsyncApi (issue 16: the bus contract served by every app)', () => {
  it('answers GET /asyncapi.json with the document docs/asyncapi.json holds', async () => {
    const app = await NestFactory.create(EmptyModule, { logger: false });
    serveAsyncApi(app, '0.1.0');
    await app.listen(0, '127.0.0.1');
    try {
      const { port } = app.getHttpServer().address() as { port: number };
      const res = await fetch(`http://127.0.0.1:${port}/asyncapi.json`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toEqual(JSON.parse(renderAsyncApiJson()));
      expect(JSON.parse(readFileSync(join(root, 'docs', 'asyncapi.json'), 'utf8'))).toEqual(await (await fetch(`http://127.0.0.1:${port}/asyncapi.json`)).json());
    } finally {
      await app.close();
    }
  });

  it.each(['apps/ingestion/src/main.ts', 'apps/scoring-worker/src/main.ts', 'apps/read-model/src/main.ts', 'apps/regression/src/main.ts', 'apps/cli/src/embedded/embedded-app.ts'])(
    '%s serves it next to /openapi.json',
    (file) => {
      const source = readFileSync(join(root, file), 'utf8');
      expect(source).toContain('serveOpenApi(app');
      expect(source).toContain('serveAsyncApi(app');
    },
  );
});
