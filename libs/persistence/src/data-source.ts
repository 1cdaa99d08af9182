import { DataSource, MigrationExecutor } from 'typeorm';
import { inProcessPgStream } from '@evals/pglite';
import { allMigrationsApplied } from './migration-state';
import { applyOwnershipGrants, deploymentSchemas } from './ownership';
import { loadPgDriver } from './pg-driver';
import { InitialSchema1764460800000 } from './migrations/1764460800000-initial-schema.migration';
import { ReadModel1764460900000 } from './migrations/1764460900000-read-model.migration';
import { Regression1764461000000 } from './migrations/1764461000000-regression.migration';
import { Monitor1764461100000 } from './migrations/1764461100000-monitor.migration';
import { ApiKeys1764461200000 } from './migrations/1764461200000-api-keys.migration';
import { Gate1764461300000 } from './migrations/1764461300000-gate.migration';
import { Judge1764461400000 } from './migrations/1764461400000-judge.migration';
import { RunCompleteness1764461500000 } from './migrations/1764461500000-run-completeness.migration';
import { ReadModelVerdicts1764461600000 } from './migrations/1764461600000-read-model-verdicts.migration';
import { OpenRunsIndex1764461550000 } from './migrations/1764461550000-open-runs-index.migration';
import { CalibrationScope1764461700000 } from './migrations/1764461700000-calibration-scope.migration';
import { JudgeRepeatsBudgets1764461800000 } from './migrations/1764461800000-judge-repeats-budgets.migration';
import { SuiteSources1764500000041 } from './migrations/1764500000041-suite-sources.migration';
import { BudgetReservations1796141924617 } from './migrations/1796141924617-budget-reservations.migration';
import { EvidenceJudgedIndex1796200000000 } from './migrations/1796200000000-evidence-judged-index.migration';
import { AppRoles1796300000000 } from './migrations/1796300000000-app-roles.migration';
import { CalibrationFacts1796300000100 } from './migrations/1796300000100-calibration-facts.migration';
import { AppSchemas1796400000500 } from './migrations/1796400000500-app-schemas.migration';
import { DeadLetterItems1796400000600 } from './migrations/1796400000600-dead-letter-items.migration';
import { SuiteFacts1796400000700 } from './migrations/1796400000700-suite-facts.migration';
import { CaseOutcomes1796500000000 } from './migrations/1796500000000-case-outcomes.migration';
import { Projects1796600000000 } from './migrations/1796600000000-projects.migration';

const MIGRATIONS_TABLE = 'schema_migrations';

/** Every schema change, in order. The schema is never synchronised from entities. */
export const migrations = [InitialSchema1764460800000, ReadModel1764460900000, Regression1764461000000, Monitor1764461100000, ApiKeys1764461200000, Gate1764461300000, Judge1764461400000, RunCompleteness1764461500000, OpenRunsIndex1764461550000, ReadModelVerdicts1764461600000, CalibrationScope1764461700000, JudgeRepeatsBudgets1764461800000, SuiteSources1764500000041, BudgetReservations1796141924617, EvidenceJudgedIndex1796200000000, AppRoles1796300000000, CalibrationFacts1796300000100, AppSchemas1796400000500, DeadLetterItems1796400000600, SuiteFacts1796400000700, CaseOutcomes1796500000000, Projects1796600000000];

export interface PostgresConfig {
  readonly url: string;
  /**
   * The deployment's schema (default `public`; tests use one each): the shared tables live in it, each app's
   * tables in a schema of its own beside it (ownership.ts, `appSchema`). Unqualified table names resolve
   * through the search_path, which lists all of them.
   */
  readonly schema?: string;
  readonly poolSize?: number;
  /**
   * Connections the pool keeps open however idle (pg-pool's `min`, at most `poolSize`): those `warmPool`
   * opened at boot stay for the first burst instead of closing after 10 idle seconds.
   */
  readonly warmConnections?: number;
  readonly applicationName?: string;
}

export function createDataSource(config: PostgresConfig): DataSource {
  const schemaOptions = `-c search_path=${deploymentSchemas(config.schema ?? 'public').join(',')}`;
  // An in-process PGlite's URL (embedded-postgres.ts): the driver's connection is a stream into it.
  const stream = inProcessPgStream(config.url);
  loadPgDriver();
  return new DataSource({
    type: 'postgres',
    url: config.url,
    schema: config.schema,
    synchronize: false,
    migrationsRun: false,
    migrations,
    migrationsTableName: MIGRATIONS_TABLE,
    entities: [],
    logging: false,
    extra: {
      max: config.poolSize ?? 10,
      min: Math.min(config.warmConnections ?? 0, config.poolSize ?? 10),
      application_name: config.applicationName ?? 'evals',
      options: schemaOptions,
      ...(stream ? { stream } : {}),
    },
  });
}

/**
 * Opens `count` of the pool's connections at once and hands them back idle (issue 28). A burst that meets
 * a cold pool opens its connections while it waits on them - a fork and a login each on a server as busy
 * as the burst makes it -, and at 5 000 cases/s that first second was the latency's worst window. Kept
 * open only with `warmConnections` of the same count.
 */
export async function warmPool(dataSource: DataSource, count: number): Promise<void> {
  const runners = Array.from({ length: count }, () => dataSource.createQueryRunner());
  // All settled before any is released: a connection still opening when another failed would be held forever.
  const opened = await Promise.allSettled(runners.map((r) => r.connect()));
  await Promise.all(runners.map((r) => r.release()));
  const failed = opened.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failed) throw failed.reason;
}

/** Arbitrary but fixed: the advisory lock that serialises migrations across processes. */
const MIGRATION_LOCK = 72_430_001;

/**
 * Applies pending migrations, each in its own transaction. Every app calls it at boot, so it holds a
 * session advisory lock meanwhile: processes started together migrate one after the other, and the later
 * ones find nothing left to do.
 */
export async function migrate(dataSource: DataSource): Promise<string[]> {
  // Every start but the first finds nothing to do: one query says so (migration-state.ts).
  if (await allMigrationsApplied(dataSource, MIGRATIONS_TABLE, migrations.map((m) => new m().name))) return [];
  // The roles' grants (ownership.ts) touch cluster-wide role dependencies, which another database session -
  // another schema's migration or DROP SCHEMA on a shared server - may hold in the other order: PostgreSQL
  // then aborts one side with a deadlock. The failed migration rolled back; it is simply run again.
  for (let attempt = 1; ; attempt++) {
    try {
      return await migrateOnce(dataSource);
    } catch (error) {
      if (attempt >= 5 || (error as { code?: string }).code !== '40P01') throw error;
    }
  }
}

async function migrateOnce(dataSource: DataSource): Promise<string[]> {
  const lock = dataSource.createQueryRunner();
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const schema = (dataSource.options as { schema?: string }).schema;
    if (schema) await lock.query(`CREATE SCHEMA IF NOT EXISTS "${schema.replace(/"/g, '')}"`);
    // On the lock's own connection: a pool of one must not wait for a second connection that never comes.
    const executor = new MigrationExecutor(dataSource, lock);
    executor.transaction = 'each';
    const applied = await executor.executePendingMigrations();
    // A table a migration created lands in the shared schema (first on the search_path): put it in its
    // owner's schema and grant it, in one transaction, whichever migration made it.
    if (applied.length > 0) {
      const [{ base }] = (await lock.query('SELECT current_schema() AS base')) as Array<{ base: string }>;
      await lock.startTransaction();
      try {
        await applyOwnershipGrants(lock, base);
        await lock.commitTransaction();
      } catch (error) {
        await lock.rollbackTransaction();
        throw error;
      }
    }
    return applied.map((m) => m.name);
  } finally {
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await lock.release();
  }
}
