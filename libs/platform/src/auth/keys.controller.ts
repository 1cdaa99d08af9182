import { Body, Controller, Delete, Get, HttpCode, HttpException, Inject, Param, Post, Query } from '@nestjs/common';
import { API_KEY_NAME_PATTERN, API_KEY_TIERS, isApiKeyTier, type ApiKeyRecord } from '@evals/persistence';
import { API_KEY_STORE, type ApiKeyStore } from './api-key-store';
import { Principal, RequireTier } from './decorators';
import type { AuthPrincipal } from './tiers';

function fail(status: number, code: string, message: string, field?: string): never {
  throw new HttpException({ code, message, ...(field ? { field } : {}) }, status);
}

/**
 * Key management over HTTP (admin tier; docs/security.md). `POST /v1/keys` answers the new key once, in
 * `key`; nothing ever shows it again. `DELETE /v1/keys/:id` revokes (the row stays, revoked, for the record).
 */
@Controller('v1/keys')
@RequireTier('admin')
export class KeysController {
  constructor(@Inject(API_KEY_STORE) private readonly keys: ApiKeyStore) {}

  @Post()
  @HttpCode(201)
  async create(@Body() body: unknown, @Principal() principal: AuthPrincipal | null): Promise<{ key: string; api_key: ApiKeyRecord }> {
    const b = (typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {}) as Record<string, unknown>;
    if (typeof b.name !== 'string' || !API_KEY_NAME_PATTERN.test(b.name)) {
      fail(400, 'INVALID_REQUEST', 'name must be 1-100 characters: letters, digits, space and ._@:/+-, starting with a letter or digit', 'name');
    }
    if (!isApiKeyTier(b.tier)) fail(400, 'INVALID_REQUEST', `tier must be one of ${API_KEY_TIERS.join(', ')}`, 'tier');
    const createdBy = principal ? `key:${principal.key_id} (${principal.name})` : null;
    const issued = await this.keys.create({ name: b.name, tier: b.tier, createdBy });
    return { key: issued.key, api_key: issued.record };
  }

  @Get()
  async list(@Query('include_revoked') includeRevoked?: string): Promise<{ api_keys: ApiKeyRecord[] }> {
    return { api_keys: await this.keys.list({ includeRevoked: includeRevoked === 'true' || includeRevoked === '1' }) };
  }

  @Delete(':id')
  async revoke(@Param('id') id: string): Promise<{ api_key: ApiKeyRecord }> {
    const record = await this.keys.revoke(id);
    if (!record) fail(404, 'KEY_NOT_FOUND', /^[0-9a-f]{16}$/.test(id) ? `no API key ${id}` : 'no such API key', 'id');
    return { api_key: record };
  }
}
