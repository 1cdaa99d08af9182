import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { ApiParam, ApiQuery } from '@nestjs/swagger';
import type { ApiKeyRecord } from '@evals/persistence';
import { refuse as fail } from '../api-error';
import { ApiRoute } from '../api-route';
import { ApiKeyAnswerDto, ApiKeyCreateBody, ApiKeyIssuedDto, ApiKeysDto } from '../platform.dto';
import { API_KEY_STORE, type ApiKeyStore } from './api-key-store';
import { Principal, ProjectScope, RequireTier } from './decorators';
import { keyProject, type AuthPrincipal } from './tiers';

/**
 * Key management over HTTP (admin tier; docs/security.md). `POST /v1/keys` answers the new key once, in
 * `key`; nothing ever shows it again. `DELETE /v1/keys/:id` revokes (the row stays, revoked, for the record).
 * Issue 30: a project's admin manages its own project's keys; a platform admin key, any project's and the
 * platform keys. Another project's key answers KEY_NOT_FOUND, as a missing one does.
 */
@Controller('v1/keys')
@RequireTier('admin')
export class KeysController {
  constructor(@Inject(API_KEY_STORE) private readonly keys: ApiKeyStore) {}

  @ApiRoute({
    tier: 'admin',
    summary: "Create an API key in the request's project (or a platform key); the answer shows it once",
    body: ApiKeyCreateBody,
    ok: { status: 201, type: ApiKeyIssuedDto, description: 'The key and its record.' },
    errors: ['INVALID_REQUEST', 'FORBIDDEN', 'PROJECT_NOT_FOUND'],
  })
  @Post()
  @HttpCode(201)
  async create(@Body() body: ApiKeyCreateBody, @Principal() principal: AuthPrincipal | null, @ProjectScope() project: string): Promise<{ key: string; api_key: ApiKeyRecord }> {
    // The global pipe validated the body against ApiKeyCreateBody (@ValidateAtEdge): a name of the pattern, a tier, a project id or null.
    const own = keyProject(principal);
    const platform = own === null;
    if (body.project === null && !platform) fail('FORBIDDEN', 'only a platform key may create a platform key', 'project');
    const target = body.project === undefined ? project : body.project;
    if (target !== null && !platform && target !== own) fail('PROJECT_NOT_FOUND', 'no such project for this key', 'project');
    if (target !== null && target !== project && (await this.keys.findProject(target)) === null) fail('PROJECT_NOT_FOUND', 'no such project for this key', 'project');
    const createdBy = principal ? `key:${principal.key_id} (${principal.name})` : null;
    const issued = await this.keys.create({ name: body.name, tier: body.tier, project: target, createdBy });
    return { key: issued.key, api_key: issued.record };
  }

  @ApiRoute({ tier: 'admin', summary: "The API keys of the key's project - every key, for a platform key (never their secrets)", ok: { status: 200, type: ApiKeysDto, description: 'The keys.' } })
  @ApiQuery({ name: 'include_revoked', required: false, schema: { type: 'string', enum: ['true', '1', 'false', '0'] } })
  @Get()
  async list(@Principal() principal: AuthPrincipal | null, @Query('include_revoked') includeRevoked?: string): Promise<{ api_keys: ApiKeyRecord[] }> {
    const own = keyProject(principal);
    return { api_keys: await this.keys.list({ includeRevoked: includeRevoked === 'true' || includeRevoked === '1', ...(own !== null ? { project: own } : {}) }) };
  }

  @ApiRoute({ tier: 'admin', summary: 'Revoke an API key (the row stays, revoked)', ok: { status: 200, type: ApiKeyAnswerDto, description: 'The revoked key.' }, errors: ['KEY_NOT_FOUND'] })
  @ApiParam({ name: 'id', description: 'The key id (16 hex digits).' })
  @Delete(':id')
  async revoke(@Param('id') id: string, @Principal() principal: AuthPrincipal | null): Promise<{ api_key: ApiKeyRecord }> {
    const own = keyProject(principal);
    const existing = await this.keys.find(id);
    const visible = existing !== null && (own === null || existing.project === own);
    const record = visible ? await this.keys.revoke(id) : null;
    if (!record) fail('KEY_NOT_FOUND', /^[0-9a-f]{16}$/.test(id) ? `no API key ${id}` : 'no such API key', 'id');
    return { api_key: record };
  }
}
