/**
 * The migration job (deploy/: Compose `migrate`, Kubernetes `evals-migrate`): applies pending migrations
 * and exits. Reads only DATABASE_URL and DATABASE_SCHEMA, so it needs nothing else of the service.
 * Exit codes: 0 done, 1 failed, 2 bad configuration.
 */
import type { DataSource } from 'typeorm';
import { createDataSource, migrate } from './data-source';
import { APPS, appRole } from './ownership';

/**
 * Issue 27: the apps' login roles get their passwords here, from DATABASE_PASSWORD_<APP> (INGESTION, SCORING,
 * REGRESSION, READ_MODEL) when set - each app's Secret holds its own URL with it (deploy/). Unset: the role
 * keeps what it has (trust authentication locally, or a password an operator set).
 */
async function setRolePasswords(ds: DataSource): Promise<void> {
  for (const app of APPS) {
    const password = process.env[`DATABASE_PASSWORD_${app.toUpperCase()}`];
    if (!password) continue;
    // ALTER ROLE takes no parameters; the literal is quoted as standard_conforming_strings reads it.
    await ds.query(`ALTER ROLE "${appRole(app)}" PASSWORD '${password.replace(/'/g, "''")}'`);
  }
}

async function main(): Promise<number> {
  const url = process.env.DATABASE_URL;
  const schema = process.env.DATABASE_SCHEMA || undefined;
  if (!url || !/^postgres(ql)?:\/\//.test(url)) {
    process.stderr.write('migrate: DATABASE_URL: is required (a postgres URL)\n');
    return 2;
  }
  if (schema !== undefined && !/^[A-Za-z0-9_]+$/.test(schema)) {
    process.stderr.write('migrate: DATABASE_SCHEMA: may contain only letters, digits and _\n');
    return 2;
  }
  const ds = createDataSource({ url, schema, poolSize: 1, applicationName: 'evals-migrate' });
  try {
    await ds.initialize();
    const applied = await migrate(ds);
    await setRolePasswords(ds);
    process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), level: 'info', app: 'migrate', msg: 'migrations applied', applied: applied.join(',') || 'none' })}\n`);
    return 0;
  } catch (error) {
    process.stderr.write(`migrate: failed: ${error instanceof Error ? `${error.name}: ${error.message}` : 'error'}\n`);
    return 1;
  } finally {
    if (ds.isInitialized) await ds.destroy();
  }
}

main().then((code) => process.exit(code));
