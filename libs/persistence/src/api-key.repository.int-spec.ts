import type { DataSource } from 'typeorm';
import { createTestSchema, type TestSchema } from '../../../test/support/isolation';
import { testServers } from '../../../test/support/servers';
import { ApiKeyRepository, hashApiKeySecret, parseApiKey } from './api-key.repository';
import { createDataSource, migrate } from './data-source';
import { ProjectRepository } from './project.repository';

describe('integration: API key repository on PostgreSQL (docs/security.md)', () => {
  let schema: TestSchema;
  let ds: DataSource;
  const repo = new ApiKeyRepository({ pepper: 'int-pepper' });

  beforeAll(async () => {
    schema = await createTestSchema('apikeys');
    ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize: 2 });
    await ds.initialize();
    await migrate(ds);
  });

  afterAll(async () => {
    await ds?.destroy();
    await schema?.drop();
  });

  it('creates a key, stores only its peppered hash and a short prefix, and finds it by id', async () => {
    const issued = await repo.create(ds, { name: 'ops', tier: 'admin', createdBy: 'bootstrap' });
    const parsed = parseApiKey(issued.key)!;
    expect(issued.record).toEqual({ id: parsed.id, name: 'ops', tier: 'admin', prefix: issued.key.slice(0, 25), created_at: expect.stringMatching(/Z$/), revoked_at: null, created_by: 'bootstrap', project: 'default' });
    const [row] = await ds.query(`SELECT * FROM api_keys WHERE id = $1`, [parsed.id]);
    expect(row.secret_hash).toBe(hashApiKeySecret('int-pepper', parsed.id, parsed.secret));
    expect(JSON.stringify(row)).not.toContain(parsed.secret);
    expect(await repo.find(ds, parsed.id)).toEqual(issued.record);
    expect(await repo.find(ds, 'ffffffffffffffff')).toBeNull();
    expect(await repo.find(ds, "x' OR '1'='1")).toBeNull();
  });

  it('issue 30: gives a key one project or none (a platform key), refuses a missing project, lists per project and keeps the project immutable', async () => {
    const projects = new ProjectRepository();
    expect(await projects.create(ds, { id: 'keys-team', name: 'Keys team' })).toMatchObject({ id: 'keys-team', name: 'Keys team' });
    expect(await projects.create(ds, { id: 'keys-team', name: 'again' })).toBeNull();
    const mine = await repo.create(ds, { name: 'team-ci', tier: 'operator', project: 'keys-team' });
    const platform = await repo.create(ds, { name: 'platform', tier: 'admin', project: null });
    expect(mine.record.project).toBe('keys-team');
    expect(platform.record.project).toBeNull();
    expect((await repo.authenticate(ds, mine.key)).ok && (await repo.authenticate(ds, mine.key))).toMatchObject({ record: { project: 'keys-team' } });
    await expect(repo.create(ds, { name: 'lost', tier: 'viewer', project: 'no-such-team' })).rejects.toThrow(RangeError);
    expect((await ds.query(`SELECT count(*)::int AS n FROM api_keys WHERE name = 'lost'`))[0].n).toBe(0);
    expect((await repo.list(ds, { project: 'keys-team' })).map((k) => k.id)).toEqual([mine.record.id]);
    expect((await repo.list(ds)).map((k) => k.id)).toEqual(expect.arrayContaining([mine.record.id, platform.record.id]));
    await expect(ds.query(`UPDATE api_keys SET project = 'default' WHERE id = $1`, [mine.record.id])).rejects.toThrow(/only revocation/);
    // A project is never renamed or deleted (the guard caches found ones), and a key cannot name a missing one.
    await expect(ds.query(`DELETE FROM projects WHERE id = 'keys-team'`)).rejects.toThrow();
    await expect(ds.query(`UPDATE projects SET id = 'renamed' WHERE id = 'keys-team'`)).rejects.toThrow();
    await expect(ds.query(`INSERT INTO api_keys (id, name, tier, prefix, secret_hash, project) VALUES ('00000000000000aa', 'x', 'viewer', 'p', repeat('a', 64), 'no-such-team')`)).rejects.toThrow(/foreign key/);
  });

  it('authenticates the exact key only: another secret, another pepper, a forged id all fail', async () => {
    const issued = await repo.create(ds, { name: 'ci', tier: 'operator' });
    const { id, secret } = parseApiKey(issued.key)!;
    expect(await repo.authenticate(ds, issued.key)).toEqual({ ok: true, record: issued.record });
    const flipped = `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
    expect(await repo.authenticate(ds, `evk_${id}_${flipped}`)).toEqual({ ok: false, reason: 'unknown', key_id: id });
    expect(await new ApiKeyRepository({ pepper: 'other' }).authenticate(ds, issued.key)).toEqual({ ok: false, reason: 'unknown', key_id: id });
    expect(await repo.authenticate(ds, `evk_ffffffffffffffff_${secret}`)).toEqual({ ok: false, reason: 'unknown', key_id: 'ffffffffffffffff' });
    expect(await repo.authenticate(ds, 'Bearer nonsense')).toEqual({ ok: false, reason: 'malformed' });
  });

  it('revokes once (idempotent, first time kept); a revoked key authenticates as revoked', async () => {
    const issued = await repo.create(ds, { name: 'leaked', tier: 'viewer' });
    const first = await repo.revoke(ds, issued.record.id);
    expect(first?.revoked_at).toEqual(expect.stringMatching(/Z$/));
    const again = await repo.revoke(ds, issued.record.id);
    expect(again?.revoked_at).toBe(first?.revoked_at);
    expect(await repo.authenticate(ds, issued.key)).toEqual({ ok: false, reason: 'revoked', key_id: issued.record.id });
    expect(await repo.revoke(ds, 'ffffffffffffffff')).toBeNull();
    expect((await repo.list(ds)).map((r) => r.id)).not.toContain(issued.record.id);
    expect((await repo.list(ds, { includeRevoked: true })).map((r) => r.id)).toContain(issued.record.id);
  });

  it('the database allows revocation and nothing else: no un-revoking, no tier change, no DELETE or TRUNCATE', async () => {
    const issued = await repo.create(ds, { name: 'locked', tier: 'viewer' });
    const id = issued.record.id;
    await expect(ds.query(`UPDATE api_keys SET tier = 'admin' WHERE id = $1`, [id])).rejects.toThrow(/only revocation/);
    await expect(ds.query(`UPDATE api_keys SET tier = 'admin', revoked_at = now() WHERE id = $1`, [id])).rejects.toThrow(/only revocation/);
    await expect(ds.query(`UPDATE api_keys SET secret_hash = repeat('0', 64) WHERE id = $1`, [id])).rejects.toThrow(/only revocation/);
    await repo.revoke(ds, id);
    await expect(ds.query(`UPDATE api_keys SET revoked_at = NULL WHERE id = $1`, [id])).rejects.toThrow(/only revocation/);
    await expect(ds.query(`DELETE FROM api_keys WHERE id = $1`, [id])).rejects.toThrow(/DELETE refused/);
    await expect(ds.query(`TRUNCATE api_keys`)).rejects.toThrow(/TRUNCATE refused/);
    expect((await repo.find(ds, id))?.tier).toBe('viewer');
  });

  it('refuses bad names and tiers before the database, and the database refuses them too', async () => {
    await expect(repo.create(ds, { name: '', tier: 'viewer' })).rejects.toThrow(RangeError);
    await expect(repo.create(ds, { name: 'x', tier: 'root' as 'viewer' })).rejects.toThrow(RangeError);
    await expect(
      ds.query(`INSERT INTO api_keys (id, name, tier, prefix, secret_hash) VALUES ('0123456789abcdef', 'x', 'root', 'p', repeat('0', 64))`),
    ).rejects.toThrow(/check constraint/);
  });
});
