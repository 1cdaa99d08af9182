import { ApiKeyRepository, type ApiKeyAuthentication, type ApiKeyRecord, type ApiKeyTier, type IssuedApiKey, type Sql } from '@evals/persistence';

/** What access control needs of the key table; InfrastructureModule binds it to PostgreSQL. */
export interface ApiKeyStore {
  authenticate(key: string): Promise<ApiKeyAuthentication>;
  create(input: { name: string; tier: ApiKeyTier; createdBy?: string | null }): Promise<IssuedApiKey>;
  find(id: string): Promise<ApiKeyRecord | null>;
  list(options?: { includeRevoked?: boolean }): Promise<ApiKeyRecord[]>;
  revoke(id: string): Promise<ApiKeyRecord | null>;
}

export const API_KEY_STORE = Symbol('API_KEY_STORE');

export function sqlApiKeyStore(sql: Sql, pepper: string): ApiKeyStore {
  const repo = new ApiKeyRepository({ pepper });
  return {
    authenticate: (key) => repo.authenticate(sql, key),
    create: (input) => repo.create(sql, input),
    find: (id) => repo.find(sql, id),
    list: (options) => repo.list(sql, options),
    revoke: (id) => repo.revoke(sql, id),
  };
}
