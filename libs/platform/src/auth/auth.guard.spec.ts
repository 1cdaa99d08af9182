import 'reflect-metadata';
import { Controller, Delete, Get, Global, Module, Post, type INestApplication } from '@nestjs/common';
import { APP_FILTER, APP_PIPE, NestFactory } from '@nestjs/core';
import { EdgeTextPipe } from '../edge-text.pipe';
import { ApiExceptionFilter } from '../api-exception.filter';
import { JsonLogger } from '../logger';
import { LOGGER } from '../tokens';
import { API_KEY_STORE } from './api-key-store';
import { AuthModule } from './auth.module';
import type { AuthSettings } from './auth.guard';
import { Principal, ProjectScope, Public, RequireTier } from './decorators';
import { KeysController } from './keys.controller';
import { ProjectsController } from './projects.controller';
import { memoryKeyStore } from './memory-key-store.testing';
import { MemoryRateLimiter } from './rate-limiter';
import { UndeclaredRouteAccessError } from './route-audit';
import type { AuthPrincipal } from './tiers';

@Controller('t')
class TierController {
  @RequireTier('viewer')
  @Get('read')
  read(@Principal() principal: AuthPrincipal | null) {
    return { principal };
  }

  @RequireTier('operator')
  @Post('write')
  write() {
    return { ok: true };
  }

  @RequireTier('admin')
  @Delete('admin')
  admin() {
    return { ok: true };
  }

  @RequireTier('viewer')
  @Get('project')
  project(@ProjectScope() project: string) {
    return { project };
  }

  @Public()
  @Get('open')
  open(@Principal() principal: AuthPrincipal | null) {
    return { principal };
  }
}

@Controller('c')
@RequireTier('operator')
class ClassLevelController {
  @Get()
  inherited() {
    return { ok: true };
  }

  @RequireTier('viewer')
  @Get('lower')
  overridden() {
    return { ok: true };
  }
}

@Controller('u')
class UndeclaredController {
  @RequireTier('viewer')
  @Get('fine')
  fine() {
    return {};
  }

  @Post('forgotten')
  forgotten() {
    return {};
  }
}

async function boot(controllers: Array<new (...args: never[]) => unknown>, settings: Partial<AuthSettings> = {}, perMinute = 1000) {
  const lines: string[] = [];
  const store = memoryKeyStore();
  const limiter = new MemoryRateLimiter(perMinute);
  @Global()
  // As InfrastructureModule does: the one exception filter answers the domain errors (ApiError) with their
  // codes, and the global pipe validates the bodies of DTOs marked @ValidateAtEdge.
  @Module({ providers: [{ provide: LOGGER, useValue: new JsonLogger('test', 'debug', (l) => lines.push(l)) }, { provide: API_KEY_STORE, useValue: store }, { provide: APP_FILTER, useClass: ApiExceptionFilter }, { provide: APP_PIPE, useClass: EdgeTextPipe }], exports: [LOGGER, API_KEY_STORE] })
  class FakeInfrastructure {}
  @Module({
    imports: [FakeInfrastructure, AuthModule.forRoot({ mode: 'required', rateLimitPerMinute: perMinute, redisUrl: '', redisKeyPrefix: 't:', ...settings }, { rateLimiter: limiter })],
    controllers,
  })
  class TestApp {}
  const app = await NestFactory.create(TestApp, { logger: false });
  return { app, store, lines };
}

describe('AuthGuard and the route audit, in a Nest app', () => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('refuses to boot when a route declares no tier (fail closed), naming it', async () => {
    const booted = await boot([TierController, UndeclaredController]);
    app = booted.app;
    const error = await app.init().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UndeclaredRouteAccessError);
    expect((error as Error).message).toContain('POST /u/forgotten (UndeclaredController.forgotten)');
    expect((error as Error).message).not.toContain('/u/fine');
    expect((error as UndeclaredRouteAccessError).routes).toHaveLength(1);
  });

  describe('with auth required', () => {
    let base: string;
    let store: ReturnType<typeof memoryKeyStore>;
    let lines: string[];
    const keys: Record<string, string> = {};

    beforeEach(async () => {
      const booted = await boot([TierController, ClassLevelController, KeysController], {}, 5);
      app = booted.app;
      store = booted.store;
      lines = booted.lines;
      await app.listen(0, '127.0.0.1');
      base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
      for (const tier of ['viewer', 'operator', 'admin'] as const) keys[tier] = (await store.create({ name: `${tier}-key`, tier })).key;
      const revoked = await store.create({ name: 'gone', tier: 'admin' });
      await store.revoke(revoked.record.id);
      keys.revoked = revoked.key;
    });

    const call = (method: string, path: string, key?: string, body?: unknown) =>
      fetch(`${base}${path}`, {
        method,
        headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });

    it('401 with a WWW-Authenticate challenge without a key, with an unknown one, and with a revoked one', async () => {
      for (const key of [undefined, 'evk_0000000000000000_' + 'a'.repeat(43), 'not-a-key', keys.revoked]) {
        const res = await call('GET', '/t/read', key);
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toBe('Bearer realm="evals"');
        const body = (await res.json()) as Record<string, unknown>;
        expect(body).toEqual({ code: 'UNAUTHENTICATED', message: expect.any(String) });
        if (key) expect(JSON.stringify(body)).not.toContain(key);
      }
      expect(lines.join('\n')).not.toContain(keys.revoked!);
    });

    it('403 with the required tier below it; through at or above it, with the principal handed to the handler', async () => {
      expect(await (await call('GET', '/t/read', keys.viewer)).json()).toEqual({ principal: { key_id: expect.stringMatching(/^[0-9a-f]{16}$/), name: 'viewer-key', tier: 'viewer', project: 'default' } });
      const denied = await call('POST', '/t/write', keys.viewer);
      expect(denied.status).toBe(403);
      expect(await denied.json()).toEqual({ code: 'FORBIDDEN', message: expect.stringContaining('operator'), required_tier: 'operator' });
      expect((await call('POST', '/t/write', keys.operator)).status).toBe(201);
      expect((await call('DELETE', '/t/admin', keys.operator)).status).toBe(403);
      expect((await call('DELETE', '/t/admin', keys.admin)).status).toBe(200);
    });

    it('takes a class-level tier, and a handler-level one overrides it', async () => {
      expect((await call('GET', '/c', keys.viewer)).status).toBe(403);
      expect((await call('GET', '/c', keys.operator)).status).toBe(200);
      expect((await call('GET', '/c/lower', keys.viewer)).status).toBe(200);
    });

    it('serves a public route to anyone, with no principal', async () => {
      expect(await (await call('GET', '/t/open')).json()).toEqual({ principal: null });
      expect((await call('GET', '/t/open', 'garbage')).status).toBe(200);
    });

    it('429 with Retry-After after the per-key write budget; reads and other keys are not affected', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await call('POST', '/t/write', keys.operator)).status);
      expect(statuses).toEqual([201, 201, 201, 201, 201, 429]);
      const limited = await call('POST', '/t/write', keys.operator);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(await limited.json()).toEqual({ code: 'RATE_LIMITED', message: expect.any(String), retry_after_seconds: Number(limited.headers.get('retry-after')) });
      expect((await call('GET', '/t/read', keys.operator)).status).toBe(200);
      expect((await call('POST', '/t/write', keys.admin)).status).toBe(201);
      expect(lines.some((l) => l.includes('"code":"RATE_LIMITED"'))).toBe(true);
    });

    it('manages keys (admin only): create shows the key once, list never shows a secret, delete revokes', async () => {
      expect((await call('POST', '/v1/keys', keys.operator, { name: 'x', tier: 'viewer' })).status).toBe(403);
      expect((await call('POST', '/v1/keys', keys.admin, { name: '', tier: 'viewer' })).status).toBe(400);
      expect((await call('POST', '/v1/keys', keys.admin, { name: 'ok', tier: 'root' })).status).toBe(400);
      const created = await call('POST', '/v1/keys', keys.admin, { name: 'grafana', tier: 'viewer' });
      expect(created.status).toBe(201);
      const body = (await created.json()) as { key: string; api_key: { id: string; tier: string; created_by: string } };
      expect(body.api_key).toMatchObject({ tier: 'viewer', created_by: expect.stringContaining('admin-key') });
      expect((await call('GET', '/t/read', body.key)).status).toBe(200);
      const listed = await (await call('GET', '/v1/keys', keys.admin)).text();
      expect(listed).toContain(body.api_key.id);
      expect(listed).not.toContain(body.key);
      expect(listed).not.toContain('secret_hash');
      expect((await call('DELETE', `/v1/keys/${body.api_key.id}`, keys.admin)).status).toBe(200);
      expect((await call('GET', '/t/read', body.key)).status).toBe(401);
      expect((await call('DELETE', '/v1/keys/ffffffffffffffff', keys.admin)).status).toBe(404);
    });

    it('logs each refusal with its code and key id, never the key', async () => {
      await call('POST', '/t/write', keys.viewer);
      const refusal = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'request refused' && l.code === 'FORBIDDEN');
      expect(refusal).toMatchObject({ route: 'POST /t/write', status: 403, key_id: expect.stringMatching(/^[0-9a-f]{16}$/) });
      for (const key of Object.values(keys)) expect(lines.join('\n')).not.toContain(key.slice(21));
    });
  });

  describe('projects (issue 30)', () => {
    let base: string;
    let store: ReturnType<typeof memoryKeyStore>;
    const keys: Record<string, string> = {};
    const call = (method: string, path: string, key: string, options: { project?: string; body?: unknown } = {}) =>
      fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(options.project !== undefined ? { 'x-evals-project': options.project } : {}), ...(options.body ? { 'content-type': 'application/json' } : {}) },
        ...(options.body ? { body: JSON.stringify(options.body) } : {}),
      });

    beforeEach(async () => {
      const booted = await boot([TierController, KeysController, ProjectsController]);
      app = booted.app;
      store = booted.store;
      await app.listen(0, '127.0.0.1');
      base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
      await store.createProject({ id: 'team-a', name: 'Team A' });
      await store.createProject({ id: 'team-b', name: 'Team B' });
      keys.platform = (await store.create({ name: 'platform', tier: 'admin', project: null })).key;
      keys.adminA = (await store.create({ name: 'a-admin', tier: 'admin', project: 'team-a' })).key;
      keys.viewerA = (await store.create({ name: 'a-viewer', tier: 'viewer', project: 'team-a' })).key;
      keys.adminB = (await store.create({ name: 'b-admin', tier: 'admin', project: 'team-b' })).key;
    });

    it("hands a route the key's project, and a platform key the project its header names", async () => {
      expect(await (await call('GET', '/t/project', keys.viewerA!)).json()).toEqual({ project: 'team-a' });
      expect(await (await call('GET', '/t/project', keys.platform!)).json()).toEqual({ project: 'default' });
      expect(await (await call('GET', '/t/project', keys.platform!, { project: 'team-b' })).json()).toEqual({ project: 'team-b' });
    });

    it("answers a project key naming another project, and anyone naming a missing one, 404 PROJECT_NOT_FOUND alike", async () => {
      const other = await call('GET', '/t/project', keys.viewerA!, { project: 'team-b' });
      const missing = await call('GET', '/t/project', keys.platform!, { project: 'team-z' });
      expect(other.status).toBe(404);
      expect(missing.status).toBe(404);
      expect(await other.json()).toEqual(await missing.json());
      expect((await call('GET', '/t/project', keys.viewerA!, { project: 'Team_B' })).status).toBe(400);
    });

    it('lets a project admin manage the keys of its own project only; a platform admin, any', async () => {
      const made = await call('POST', '/v1/keys', keys.adminA!, { body: { name: 'ci', tier: 'operator' } });
      expect(made.status).toBe(201);
      const issued = (await made.json()) as { api_key: { id: string; project: string } };
      expect(issued.api_key.project).toBe('team-a');
      expect((await call('POST', '/v1/keys', keys.adminA!, { body: { name: 'x', tier: 'viewer', project: 'team-b' } })).status).toBe(404);
      expect((await call('POST', '/v1/keys', keys.adminA!, { body: { name: 'x', tier: 'admin', project: null } })).status).toBe(403);
      const listedB = (await (await call('GET', '/v1/keys', keys.adminB!)).json()) as { api_keys: Array<{ id: string; project: string }> };
      expect(listedB.api_keys.map((k) => k.project)).toEqual(['team-b']);
      // Another project's key is as missing as an unknown one, and stays valid.
      expect((await call('DELETE', `/v1/keys/${issued.api_key.id}`, keys.adminB!)).status).toBe(404);
      expect((await store.find(issued.api_key.id))?.revoked_at).toBeNull();
      const forB = await call('POST', '/v1/keys', keys.platform!, { body: { name: 'b-ci', tier: 'operator', project: 'team-b' } });
      expect(((await forB.json()) as { api_key: { project: string } }).api_key.project).toBe('team-b');
      const all = (await (await call('GET', '/v1/keys', keys.platform!)).json()) as { api_keys: unknown[] };
      expect(all.api_keys).toHaveLength(6);
    });

    it('lets only a platform admin create projects; a project key sees its own project alone', async () => {
      expect((await call('POST', '/v1/projects', keys.adminA!, { body: { id: 'team-c', name: 'C' } })).status).toBe(403);
      expect((await call('POST', '/v1/projects', keys.platform!, { body: { id: 'team-c', name: 'C' } })).status).toBe(201);
      expect((await call('POST', '/v1/projects', keys.platform!, { body: { id: 'team-c', name: 'C' } })).status).toBe(409);
      expect((await call('POST', '/v1/projects', keys.platform!, { body: { id: 'Team C', name: 'C' } })).status).toBe(400);
      const own = (await (await call('GET', '/v1/projects', keys.viewerA!)).json()) as { projects: Array<{ id: string }> };
      expect(own.projects.map((p) => p.id)).toEqual(['team-a']);
      const every = (await (await call('GET', '/v1/projects', keys.platform!)).json()) as { projects: Array<{ id: string }> };
      expect(every.projects.map((p) => p.id).sort()).toEqual(['default', 'team-a', 'team-b', 'team-c']);
      expect((await call('GET', '/v1/projects/team-b', keys.viewerA!)).status).toBe(404);
      expect((await call('GET', '/v1/projects/team-a', keys.viewerA!)).status).toBe(200);
      expect((await call('GET', '/v1/projects/team-b', keys.platform!)).status).toBe(200);
    });
  });

  it('with auth disabled: every declared route is served as the auth-disabled admin, and a loud warning is logged at boot', async () => {
    const booted = await boot([TierController], { mode: 'disabled' });
    app = booted.app;
    await app.listen(0, '127.0.0.1');
    const base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    expect(await (await fetch(`${base}/t/read`)).json()).toEqual({ principal: expect.objectContaining({ name: 'auth-disabled', tier: 'admin' }) });
    expect((await fetch(`${base}/t/admin`, { method: 'DELETE' })).status).toBe(200);
    const warning = booted.lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.level === 'warn');
    expect(warning?.msg).toMatch(/AUTHENTICATION IS DISABLED/);
  });
});
