/**
 * The migration job (deploy/: Compose `migrate`, Kubernetes `evals-migrate`): applies pending migrations
 * and exits. Reads only DATABASE_URL and DATABASE_SCHEMA, so it needs nothing else of the service.
 * Exit codes: 0 done, 1 failed, 2 bad configuration.
 */
import { createDataSource, migrate } from './data-source';

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
