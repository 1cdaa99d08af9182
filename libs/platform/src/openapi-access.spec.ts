import 'reflect-metadata';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Controller, Get, Global, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ApiProperty } from '@nestjs/swagger';
import { ApiRoute } from './api-route';
import { serveAsyncApi } from './asyncapi';
import { API_KEY_STORE } from './auth/api-key-store';
import { AuthModule } from './auth/auth.module';
import { memoryKeyStore } from './auth/memory-key-store.testing';
import { MemoryRateLimiter } from './auth/rate-limiter';
import { JsonLogger } from './logger';
import { PUBLIC_PATHS, serveOpenApi } from './openapi';
import { LOGGER } from './tokens';

class ThingDto {
  @ApiProperty() id!: string;
}

@Controller('v1/things')
class ThingsController {
  @ApiRoute({ tier: 'viewer', summary: 'read', ok: { status: 200, type: ThingDto, description: 'a thing' } })
  @Get()
  read(): ThingDto {
    return { id: 'x' };
  }
}

describe('the API descriptions are public, the API is not (docs/security.md, X3)', () => {
  let app: INestApplication | undefined;
  afterAll(async () => {
    await app?.close();
  });

  it('with auth required: /openapi.json, /docs and /asyncapi.json answer without a key; a route of the same app is 401', async () => {
    @Global()
    @Module({ providers: [{ provide: LOGGER, useValue: new JsonLogger('test', 'error', () => undefined) }, { provide: API_KEY_STORE, useValue: memoryKeyStore() }], exports: [LOGGER, API_KEY_STORE] })
    class FakeInfrastructure {}
    @Module({
      imports: [FakeInfrastructure, AuthModule.forRoot({ mode: 'required', rateLimitPerMinute: 100, redisUrl: '', redisKeyPrefix: 't:' }, { rateLimiter: new MemoryRateLimiter(100) })],
      controllers: [ThingsController],
    })
    class TestApp {}
    app = await NestFactory.create(TestApp, { logger: false });
    serveOpenApi(app, 'test', '0.0.0');
    serveAsyncApi(app, '0.0.0');
    await app.listen(0, '127.0.0.1');
    const base = (await app.getUrl()).replace('[::1]', '127.0.0.1');

    const doc = await fetch(`${base}/openapi.json`);
    expect(doc.status).toBe(200);
    const body = (await doc.json()) as { paths: Record<string, unknown>; info: { title: string } };
    expect(Object.keys(body.paths)).toEqual(['/v1/things']);
    expect(body.info.title).toBe('evals test');
    expect((await fetch(`${base}/docs`)).status).toBe(200);
    expect((await fetch(`${base}/asyncapi.json`)).status).toBe(200);
    // Only the JSON document: no YAML twin outside the list of public paths.
    expect((await fetch(`${base}/docs-yaml`)).status).toBe(404);
    const refused = await fetch(`${base}/v1/things`);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('docs/security.md names every public path as public', () => {
    const page = fs.readFileSync(path.resolve(__dirname, '../../../docs/security.md'), 'utf8');
    const publicRows = page.split('\n').filter((line) => line.startsWith('|') && /\|\s*public\s*\|\s*$/.test(line));
    for (const p of PUBLIC_PATHS) expect(publicRows.join('\n')).toContain(`GET ${p}`);
  });
});
