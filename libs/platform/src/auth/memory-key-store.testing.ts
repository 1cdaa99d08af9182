import { generateApiKey, hashApiKeySecret, apiKeyHashesEqual, parseApiKey, type ApiKeyRecord, type ApiKeyTier } from '@evals/persistence';
import type { ApiKeyStore } from './api-key-store';

/** An in-memory ApiKeyStore with the repository's key format and hashing, for tests without PostgreSQL. */
export function memoryKeyStore(pepper = 'test-pepper'): ApiKeyStore & { rows: Map<string, ApiKeyRecord & { secret_hash: string }> } {
  const rows = new Map<string, ApiKeyRecord & { secret_hash: string }>();
  const pub = (r: ApiKeyRecord & { secret_hash: string }): ApiKeyRecord => {
    const { secret_hash: _hash, ...rest } = r;
    return rest;
  };
  return {
    rows,
    async create(input: { name: string; tier: ApiKeyTier; createdBy?: string | null }) {
      const k = generateApiKey();
      const row = { id: k.id, name: input.name, tier: input.tier, prefix: k.prefix, created_at: new Date().toISOString(), revoked_at: null, created_by: input.createdBy ?? null, secret_hash: hashApiKeySecret(pepper, k.id, k.secret) };
      rows.set(k.id, row);
      return { key: k.key, record: pub(row) };
    },
    async find(id) {
      const r = rows.get(id);
      return r ? pub(r) : null;
    },
    async list(options = {}) {
      return [...rows.values()].filter((r) => options.includeRevoked || r.revoked_at === null).map(pub);
    },
    async revoke(id) {
      const r = rows.get(id);
      if (!r) return null;
      if (r.revoked_at === null) rows.set(id, { ...r, revoked_at: new Date().toISOString() });
      return pub(rows.get(id)!);
    },
    async authenticate(key) {
      const p = parseApiKey(key);
      if (!p) return { ok: false, reason: 'malformed' };
      const r = rows.get(p.id);
      if (!r || !apiKeyHashesEqual(r.secret_hash, hashApiKeySecret(pepper, p.id, p.secret))) return { ok: false, reason: 'unknown', key_id: p.id };
      if (r.revoked_at !== null) return { ok: false, reason: 'revoked', key_id: r.id };
      return { ok: true, record: pub(r) };
    },
  };
}
