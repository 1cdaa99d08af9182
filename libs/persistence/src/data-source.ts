import { DataSource } from 'typeorm';
import { InitialSchema1764460800000 } from './migrations/1764460800000-initial-schema.migration';

/** Every schema change, in order. The schema is never synchronised from entities. */
export const migrations = [InitialSchema1764460800000];

export interface PostgresConfig {
  readonly url: string;
  /** Optional schema (tests use one each); unqualified table names resolve through search_path. */
  readonly schema?: string;
  readonly poolSize?: number;
  readonly applicationName?: string;
}

export function createDataSource(config: PostgresConfig): DataSource {
  const schemaOptions = config.schema ? `-c search_path=${config.schema}` : undefined;
  return new DataSource({
    type: 'postgres',
    url: config.url,
    schema: config.schema,
    synchronize: false,
    migrationsRun: false,
    migrations,
    migrationsTableName: 'schema_migrations',
    entities: [],
    logging: false,
    extra: {
      max: config.poolSize ?? 10,
      application_name: config.applicationName ?? 'evals',
      ...(schemaOptions ? { options: schemaOptions } : {}),
    },
  });
}

/** Applies pending migrations, each in its own transaction. Safe to call from several processes. */
export async function migrate(dataSource: DataSource): Promise<string[]> {
  const applied = await dataSource.runMigrations({ transaction: 'each' });
  return applied.map((m) => m.name);
}
