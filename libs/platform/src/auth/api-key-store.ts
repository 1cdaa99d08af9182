import {
  ApiKeyRepository,
  KnownProjects,
  ProjectRepository,
  type ApiKeyAuthentication,
  type ApiKeyRecord,
  type ApiKeyTier,
  type IssuedApiKey,
  type ProjectRecord,
  type Sql,
} from '@evals/persistence';

/**
 * What access control needs of the shared access tables - the keys and the projects they act in (issue 30);
 * InfrastructureModule binds it to PostgreSQL.
 */
export interface ApiKeyStore {
  authenticate(key: string): Promise<ApiKeyAuthentication>;
  /** `project` absent: `default`; null: a platform key. */
  create(input: { name: string; tier: ApiKeyTier; project?: string | null; createdBy?: string | null }): Promise<IssuedApiKey>;
  find(id: string): Promise<ApiKeyRecord | null>;
  /** `project` undefined: every key (a platform key's view). */
  list(options?: { includeRevoked?: boolean; project?: string }): Promise<ApiKeyRecord[]>;
  revoke(id: string): Promise<ApiKeyRecord | null>;
  /** The project, or null; asked by the guard for every request, so cached where it may be (sqlApiKeyStore). */
  findProject(id: string): Promise<ProjectRecord | null>;
  /** Null when the id is taken. */
  createProject(input: { id: string; name: string; createdBy?: string | null }): Promise<ProjectRecord | null>;
  listProjects(): Promise<ProjectRecord[]>;
}

export const API_KEY_STORE = Symbol('API_KEY_STORE');

export function sqlApiKeyStore(sql: Sql, pepper: string): ApiKeyStore {
  const repo = new ApiKeyRepository({ pepper });
  const projects = new ProjectRepository();
  const known = new KnownProjects(projects);
  return {
    authenticate: (key) => repo.authenticate(sql, key),
    create: (input) => repo.create(sql, input),
    find: (id) => repo.find(sql, id),
    list: (options) => repo.list(sql, options),
    revoke: (id) => repo.revoke(sql, id),
    findProject: (id) => known.find(sql, id),
    createProject: (input) => projects.create(sql, input),
    listProjects: () => projects.list(sql),
  };
}
