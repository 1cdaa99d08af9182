/**
 * The API key command (docs/security.md): bootstrap the first admin key, create, list and revoke keys,
 * straight against the database - no running app, no existing key needed. Applies pending migrations first.
 *
 *   npm run keys -- --tier admin --name ops            prints the new key ONCE on stdout (only its hash is stored)
 *   npm run keys -- --tier viewer --name grafana --json
 *   npm run keys -- --list [--all]                     ids, names, tiers, prefixes (never a secret)
 *   npm run keys -- --revoke <id>
 *   npm run keys -- --create-project team-a [--name "Team A"]        issue 30: a project
 *   npm run keys -- --tier operator --name ci --project team-a        a key of that project (default: default)
 *   npm run keys -- --tier admin --name ops --platform                a platform key, across projects
 *
 * Reads DATABASE_URL, DATABASE_SCHEMA and EVALS_API_KEY_PEPPER (the same pepper as the apps, or the key
 * will not work). Exit codes: 0 done, 1 failed, 2 bad usage or configuration.
 */
import { DEFAULT_PROJECT, isProjectId, PROJECT_ID_RULE } from '@evals/contracts';
import { API_KEY_TIERS, ApiKeyRepository, createDataSource, isApiKeyTier, migrate, ProjectRepository, type ApiKeyRecord, type Sql } from '@evals/persistence';
import { authConfigSpec, commonConfigSpec, ConfigError, loadConfig } from '../config';

export const KEYS_USAGE = `usage: keys --tier viewer|operator|admin --name NAME [--project ID | --platform] [--created-by WHO] [--json]
       keys --revoke ID [--json]
       keys --list [--all] [--project ID] [--json]
       keys --create-project ID [--name NAME] [--json]

Creates, lists or revokes API keys in the database of DATABASE_URL (schema DATABASE_SCHEMA), applying pending
migrations first. A new key is printed once, on stdout; only its hash is stored. Set EVALS_API_KEY_PEPPER
exactly as the apps have it.

A key belongs to one project (--project, default: default) or, with --platform, to none: a platform key acts
in any project (the X-Evals-Project header picks it) and alone may create projects (docs/adr/0009-projects.md).

examples:
  npm run keys -- --tier admin --name ops
  npm run keys -- --create-project team-a --name "Team A"
  npm run keys -- --tier operator --name team-a-ci --project team-a
  npm run keys -- --revoke 0f3a9c2b7d1e4f60`;

export type KeysCommand =
  | { kind: 'create'; tier: (typeof API_KEY_TIERS)[number]; name: string; project: string | null; createdBy: string; json: boolean }
  | { kind: 'revoke'; id: string; json: boolean }
  | { kind: 'list'; all: boolean; project?: string; json: boolean }
  | { kind: 'create-project'; id: string; name: string; createdBy: string; json: boolean }
  | { kind: 'help' };

/** Parses the arguments; throws a UsageError naming the problem. */
export function parseKeysArgs(argv: readonly string[], defaultCreatedBy = 'keys-command'): KeysCommand {
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') return { kind: 'help' };
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!m) throw new UsageError(`unexpected argument: ${arg}`);
    const name = m[1]!;
    if (['json', 'list', 'all', 'platform'].includes(name)) {
      flags.set(name, true);
      continue;
    }
    if (!['tier', 'name', 'revoke', 'created-by', 'project', 'create-project'].includes(name)) throw new UsageError(`unknown option --${name}`);
    const value = m[2] ?? argv[++i];
    if (value === undefined || value.startsWith('--')) throw new UsageError(`--${name} needs a value`);
    flags.set(name, value);
  }
  const json = flags.has('json');
  const modes = ['revoke', 'list', 'tier', 'create-project'].filter((k) => flags.has(k));
  if (modes.length > 1) throw new UsageError('choose one of --tier (create), --revoke, --list, --create-project');
  const project = flags.get('project');
  if (project !== undefined && !isProjectId(project)) throw new UsageError(`--project must be a project id: ${PROJECT_ID_RULE}`);
  if (project !== undefined && flags.has('platform')) throw new UsageError('a key has a --project or is --platform, not both');
  const createdBy = flags.get('created-by');
  const by = typeof createdBy === 'string' ? createdBy : defaultCreatedBy;
  if (flags.has('revoke')) return { kind: 'revoke', id: String(flags.get('revoke')), json };
  if (flags.has('list')) return { kind: 'list', all: flags.has('all'), ...(typeof project === 'string' ? { project } : {}), json };
  const tier = flags.get('tier');
  const name = flags.get('name');
  if (flags.has('create-project')) {
    const id = flags.get('create-project');
    if (!isProjectId(id)) throw new UsageError(`--create-project must be a project id: ${PROJECT_ID_RULE}`);
    return { kind: 'create-project', id, name: typeof name === 'string' ? name : id, createdBy: by, json };
  }
  if (tier === undefined && name === undefined) return { kind: 'help' };
  if (!isApiKeyTier(tier)) throw new UsageError(`--tier must be one of ${API_KEY_TIERS.join(', ')}`);
  if (typeof name !== 'string') throw new UsageError('--name is required');
  return { kind: 'create', tier, name, project: flags.has('platform') ? null : typeof project === 'string' ? project : DEFAULT_PROJECT, createdBy: by, json };
}

export class UsageError extends Error {}

export interface KeysIo {
  out(text: string): void;
  err(text: string): void;
}

/** Runs one command against `sql`; returns the exit code. */
export async function runKeysCommand(command: KeysCommand, sql: Sql, pepper: string, io: KeysIo): Promise<number> {
  const repo = new ApiKeyRepository({ pepper });
  switch (command.kind) {
    case 'help':
      io.out(KEYS_USAGE);
      return 0;
    case 'create': {
      let issued;
      try {
        issued = await repo.create(sql, { name: command.name, tier: command.tier, project: command.project, createdBy: command.createdBy });
      } catch (error) {
        if (error instanceof RangeError) {
          io.err(`keys: ${error.message}`);
          return 2;
        }
        throw error;
      }
      if (command.json) io.out(JSON.stringify({ key: issued.key, api_key: issued.record }));
      else io.out(issued.key);
      io.err(`keys: created ${issued.record.tier} key ${issued.record.id} (${issued.record.name}, ${issued.record.prefix}...) ${issued.record.project === null ? 'for the platform (every project)' : `in project ${issued.record.project}`}. It is shown only this once: store it now.`);
      return 0;
    }
    case 'revoke': {
      const record = await repo.revoke(sql, command.id);
      if (!record) {
        io.err(`keys: no API key ${/^[0-9a-f]{16}$/.test(command.id) ? command.id : '(not a key id: 16 hex digits)'}`);
        return 1;
      }
      if (command.json) io.out(JSON.stringify({ api_key: record }));
      else io.out(`revoked ${record.id} (${record.name}, ${record.tier}) at ${record.revoked_at}`);
      return 0;
    }
    case 'list': {
      const records = await repo.list(sql, { includeRevoked: command.all, ...(command.project !== undefined ? { project: command.project } : {}) });
      if (command.json) io.out(JSON.stringify({ api_keys: records }));
      else io.out(records.length === 0 ? 'no API keys' : records.map(line).join('\n'));
      return 0;
    }
    case 'create-project': {
      let created;
      try {
        created = await new ProjectRepository().create(sql, { id: command.id, name: command.name, createdBy: command.createdBy });
      } catch (error) {
        if (error instanceof RangeError) {
          io.err(`keys: ${error.message}`);
          return 2;
        }
        throw error;
      }
      if (!created) {
        io.err(`keys: a project ${command.id} exists`);
        return 1;
      }
      if (command.json) io.out(JSON.stringify({ project: created }));
      else io.out(`created project ${created.id} (${created.name})`);
      return 0;
    }
  }
}

function line(r: ApiKeyRecord): string {
  return [r.id, r.tier.padEnd(8), r.project ?? '(platform)', r.prefix, r.name, `created ${r.created_at}${r.created_by ? ` by ${r.created_by}` : ''}`, r.revoked_at ? `REVOKED ${r.revoked_at}` : ''].filter(Boolean).join('  ');
}

export async function main(argv: readonly string[], env: Readonly<Record<string, string | undefined>>, io: KeysIo): Promise<number> {
  let command: KeysCommand;
  try {
    command = parseKeysArgs(argv, env['USER'] ? `keys-command (${env['USER']})` : 'keys-command');
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`keys: ${error.message}\n\n${KEYS_USAGE}`);
      return 2;
    }
    throw error;
  }
  if (command.kind === 'help') return runKeysCommand(command, { query: async () => [] }, '', io);
  const common = commonConfigSpec(0);
  let config: { databaseUrl: string; databaseSchema: string; apiKeyPepper: string };
  try {
    config = loadConfig({ databaseUrl: common.databaseUrl, databaseSchema: common.databaseSchema, apiKeyPepper: authConfigSpec.apiKeyPepper }, env);
  } catch (error) {
    if (error instanceof ConfigError) {
      io.err(`keys: ${error.message}`);
      return 2;
    }
    throw error;
  }
  const ds = createDataSource({ url: config.databaseUrl, schema: config.databaseSchema || undefined, poolSize: 1, applicationName: 'evals-keys' });
  try {
    await ds.initialize();
    await migrate(ds);
    return await runKeysCommand(command, ds, config.apiKeyPepper, io);
  } catch (error) {
    // Names the failure, never a value: a database error may quote the statement, not a secret (none is sent).
    io.err(`keys: failed: ${error instanceof Error ? `${error.name}: ${error.message}` : 'error'}`);
    return 1;
  } finally {
    if (ds.isInitialized) await ds.destroy();
  }
}

if (require.main === module) {
  main(process.argv.slice(2), process.env, {
    out: (t) => process.stdout.write(`${t}\n`),
    err: (t) => process.stderr.write(`${t}\n`),
  }).then((code) => process.exit(code));
}
