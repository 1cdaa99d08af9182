import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { DEFAULT_PROJECT, isProjectId, PROJECT_ID_RULE } from '@evals/contracts';
import type { Sql } from './sql';

/**
 * API keys (docs/security.md). A key is `evk_<id>_<secret>`: `id` (16 hex digits) names the row and is not
 * secret; `secret` (32 random bytes, base64url) is. Only HMAC-SHA256(pepper, "<id>:<secret>") is stored,
 * compared in constant time. A fast hash is enough: the secret has 256 bits of entropy, so a stolen hash
 * cannot be brute-forced back; the optional pepper (EVALS_API_KEY_PEPPER) additionally makes a stolen
 * table useless without the server's configuration.
 */
export const API_KEY_TIERS = ['viewer', 'operator', 'admin'] as const;
export type ApiKeyTier = (typeof API_KEY_TIERS)[number];

export interface ApiKeyRecord {
  readonly id: string;
  readonly name: string;
  readonly tier: ApiKeyTier;
  /** Non-secret, for recognising a key in lists and logs: `evk_<id>_` and the first 4 characters of the secret. */
  readonly prefix: string;
  readonly created_at: string;
  readonly revoked_at: string | null;
  readonly created_by: string | null;
  /** Issue 30: the project the key acts in; null for a platform key, which may act in any project. */
  readonly project: string | null;
}

export interface IssuedApiKey {
  /** The whole key. Shown once to its creator; never stored, never logged. */
  readonly key: string;
  readonly record: ApiKeyRecord;
}

export type ApiKeyAuthentication =
  | { readonly ok: true; readonly record: ApiKeyRecord }
  | { readonly ok: false; readonly reason: 'malformed' | 'unknown' | 'revoked'; readonly key_id?: string };

const KEY_PATTERN = /^evk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;
const ID_PATTERN = /^[0-9a-f]{16}$/;
export const API_KEY_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9 ._@:/+-]{0,99}$/;

export function isApiKeyTier(value: unknown): value is ApiKeyTier {
  return typeof value === 'string' && (API_KEY_TIERS as readonly string[]).includes(value);
}

export function isApiKeyId(value: unknown): value is string {
  return typeof value === 'string' && ID_PATTERN.test(value);
}

/** The id and secret of a well-formed key; null for anything else (no detail: the input may be a secret). */
export function parseApiKey(key: string): { id: string; secret: string } | null {
  const m = KEY_PATTERN.exec(key);
  return m ? { id: m[1]!, secret: m[2]! } : null;
}

/** The stored form of a secret: lowercase hex HMAC-SHA256 keyed by the pepper, bound to the key's id. */
export function hashApiKeySecret(pepper: string, id: string, secret: string): string {
  return createHmac('sha256', `evals-api-key:${pepper}`).update(`${id}:${secret}`, 'utf8').digest('hex');
}

/** Constant-time equality of two hex digests (different lengths are simply unequal). */
export function apiKeyHashesEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  if (x.length !== y.length) {
    timingSafeEqual(x, x); // same work either way
    return false;
  }
  return timingSafeEqual(x, y);
}

/** A fresh key: 64 random bits of id, 256 random bits of secret. */
export function generateApiKey(random: (n: number) => Buffer = randomBytes): { id: string; secret: string; key: string; prefix: string } {
  const id = random(8).toString('hex');
  const secret = random(32).toString('base64url');
  return { id, secret, key: `evk_${id}_${secret}`, prefix: `evk_${id}_${secret.slice(0, 4)}` };
}

const ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
const COLUMNS = `id, name, tier, prefix, to_char(created_at AT TIME ZONE 'UTC', ${ISO}) AS created_at,
  to_char(revoked_at AT TIME ZONE 'UTC', ${ISO}) AS revoked_at, created_by, project`;

export class ApiKeyRepository {
  private readonly pepper: string;

  constructor(options: { readonly pepper?: string } = {}) {
    this.pepper = options.pepper ?? '';
  }

  /** Creates a key and returns it whole, once; only its hash is written. */
  /**
   * Creates a key of `project` (absent: `default`; null: a platform key) and returns it whole, once; only its
   * hash is written. A project that does not exist is refused (RangeError) in the same statement.
   */
  async create(sql: Sql, input: { name: string; tier: ApiKeyTier; project?: string | null; createdBy?: string | null }): Promise<IssuedApiKey> {
    const project = input.project === undefined ? DEFAULT_PROJECT : input.project;
    if (!API_KEY_NAME_PATTERN.test(input.name)) throw new RangeError('name must be 1-100 characters: letters, digits, space and ._@:/+-');
    if (!isApiKeyTier(input.tier)) throw new RangeError(`tier must be one of ${API_KEY_TIERS.join(', ')}`);
    if (project !== null && !isProjectId(project)) throw new RangeError(`project: ${PROJECT_ID_RULE}`);
    const fresh = generateApiKey();
    const rows = await sql.query(
      `INSERT INTO api_keys (id, name, tier, prefix, secret_hash, created_by, project)
       SELECT $1, $2, $3, $4, $5, $6, $7::text WHERE $7::text IS NULL OR EXISTS (SELECT 1 FROM projects WHERE id = $7::text)
       RETURNING ${COLUMNS}`,
      [fresh.id, input.name, input.tier, fresh.prefix, hashApiKeySecret(this.pepper, fresh.id, fresh.secret), input.createdBy ?? null, project],
    );
    if (rows.length === 0) throw new RangeError(`no project ${project}`);
    return { key: fresh.key, record: toRecord(rows[0]) };
  }

  async find(sql: Sql, id: string): Promise<ApiKeyRecord | null> {
    if (!isApiKeyId(id)) return null;
    const rows = await sql.query(`SELECT ${COLUMNS} FROM api_keys WHERE id = $1`, [id]);
    return rows.length === 0 ? null : toRecord(rows[0]);
  }

  /** The keys of `project` (every key, platform ones too, when `project` is undefined), oldest first; revoked ones only when asked. */
  async list(sql: Sql, options: { includeRevoked?: boolean; project?: string } = {}): Promise<ApiKeyRecord[]> {
    const where = [...(options.includeRevoked ? [] : ['revoked_at IS NULL']), ...(options.project !== undefined ? ['project = $1'] : [])];
    const rows = await sql.query(
      `SELECT ${COLUMNS} FROM api_keys ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at, id`,
      options.project !== undefined ? [options.project] : [],
    );
    return rows.map(toRecord);
  }

  /** Revokes a key (idempotent: a revoked key keeps its first revocation time); null when there is no such key. */
  async revoke(sql: Sql, id: string): Promise<ApiKeyRecord | null> {
    if (!isApiKeyId(id)) return null;
    await sql.query(`UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL`, [id]);
    return this.find(sql, id);
  }

  /**
   * Who presents `key`: the row when the key is well formed, its id exists, its secret's hash matches (in
   * constant time) and it is not revoked. `revoked` is only said to someone who holds the whole key.
   */
  async authenticate(sql: Sql, key: string): Promise<ApiKeyAuthentication> {
    const parsed = parseApiKey(key);
    if (!parsed) return { ok: false, reason: 'malformed' };
    const rows = await sql.query(`SELECT ${COLUMNS}, secret_hash FROM api_keys WHERE id = $1`, [parsed.id]);
    const row = rows[0] as (Record<string, unknown> & { secret_hash: string }) | undefined;
    const candidate = hashApiKeySecret(this.pepper, parsed.id, parsed.secret);
    if (!row || !apiKeyHashesEqual(row.secret_hash, candidate)) return { ok: false, reason: 'unknown', key_id: parsed.id };
    const record = toRecord(row);
    if (record.revoked_at !== null) return { ok: false, reason: 'revoked', key_id: record.id };
    return { ok: true, record };
  }
}

function toRecord(row: Record<string, unknown>): ApiKeyRecord {
  return {
    id: String(row.id),
    name: String(row.name),
    tier: row.tier as ApiKeyTier,
    prefix: String(row.prefix),
    created_at: String(row.created_at),
    revoked_at: row.revoked_at === null || row.revoked_at === undefined ? null : String(row.revoked_at),
    created_by: row.created_by === null || row.created_by === undefined ? null : String(row.created_by),
    project: row.project === null || row.project === undefined ? null : String(row.project),
  };
}
