import { generateApiKey, hashApiKeySecret, apiKeyHashesEqual, parseApiKey, type ApiKeyRecord, type ApiKeyTier, type ProjectRecord } from '@evals/persistence';
import type { ApiKeyStore } from './api-key-store';

/** An in-memory ApiKeyStore with the repository's key format and hashing, for tests without PostgreSQL. */
export function memoryKeyStore(pepper = 'test-pepper'): ApiKeyStore & { rows: Map<string, ApiKeyRecord & { secret_hash: string }>; projects: Map<string, ProjectRecord> } {
  const rows = new Map<string, ApiKeyRecord & { secret_hash: string }>();
  const projects = new Map<string, ProjectRecord>([['default', { id: 'default', name: 'default', created_at: new Date(0).toISOString(), created_by: null }]]);
  const pub = (r: ApiKeyRecord & { secret_hash: string }): ApiKeyRecord => {
    const { secret_hash: _hash, ...rest } = r;
    return rest;
  };
  return {
    rows,
    projects,
    async create(input: { name: string; tier: ApiKeyTier; project?: string | null; createdBy?: string | null }) {
      const project = input.project === undefined ? 'default' : input.project;
      if (project !== null && !projects.has(project)) throw new RangeError(`no project ${project}`);
      const k = generateApiKey();
      const row = { id: k.id, name: input.name, tier: input.tier, prefix: k.prefix, created_at: new Date().toISOString(), revoked_at: null, created_by: input.createdBy ?? null, project, secret_hash: hashApiKeySecret(pepper, k.id, k.secret) };
      rows.set(k.id, row);
      return { key: k.key, record: pub(row) };
    },
    async find(id) {
      const r = rows.get(id);
      return r ? pub(r) : null;
    },
    async list(options = {}) {
      return [...rows.values()].filter((r) => (options.includeRevoked || r.revoked_at === null) && (options.project === undefined || r.project === options.project)).map(pub);
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
    async findProject(id) {
      return projects.get(id) ?? null;
    },
    async createProject(input) {
      if (projects.has(input.id)) return null;
      const record = { id: input.id, name: input.name, created_at: new Date().toISOString(), created_by: input.createdBy ?? null };
      projects.set(input.id, record);
      return record;
    },
    async listProjects() {
      return [...projects.values()];
    },
  };
}
