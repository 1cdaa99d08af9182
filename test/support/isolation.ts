import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { STREAMS } from '@evals/bus';
import { createDataSource, deploymentSchemas, migrate } from '@evals/persistence';
import type { DataSource } from 'typeorm';
import { testServers } from './servers';

/**
 * Every integration test gets its own PostgreSQL schema, JetStream stream and subject names, and Redis key
 * prefix, so tests running side by side (or left over from a crashed run) never see each other's data.
 */
export function uniqueSuffix(): string {
  return randomUUID().replace(/-/g, '').slice(0, 12);
}

export interface TestSchema {
  readonly schema: string;
  /** A connection string whose sessions use only this schema and its apps' schemas beside it (search_path). */
  readonly url: string;
  drop(): Promise<void>;
}

/** `serverUrl`: how to reach the server (the benchmarks may go through its Unix socket); the test server by default. */
export async function createTestSchema(label = 'it', serverUrl: string = testServers.postgres.url): Promise<TestSchema> {
  const schema = `${label.replace(/[^a-z0-9_]/g, '_')}_${uniqueSuffix()}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA "${schema}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.searchParams.set('options', `-c search_path=${deploymentSchemas(schema).join(',')}`);
  return {
    schema,
    url: url.toString(),
    async drop() {
      const client = new Client({ connectionString: serverUrl });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS ${deploymentSchemas(schema).map((s) => `"${s}"`).join(', ')} CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

/** A data source on the test server in a schema of its own, migrated; `close` destroys it and drops the schema. */
export async function migratedTestSchema(label: string, poolSize = 4): Promise<{ readonly ds: DataSource; close(): Promise<void> }> {
  const schema = await createTestSchema(label);
  const ds = createDataSource({ url: testServers.postgres.url, schema: schema.schema, poolSize });
  await ds.initialize();
  await migrate(ds);
  return {
    ds,
    async close() {
      await ds.destroy();
      await schema.drop();
    },
  };
}

/** Stream and subject names for one test: `IT_<suffix>_<NAME>` and `it_<suffix>.<subject>`. */
export function testBusNames(label = 'it'): { suffix: string; stream(name: string): string; subject(subject: string): string } {
  const suffix = uniqueSuffix();
  return {
    suffix,
    stream: (name) => `${label.toUpperCase()}_${suffix}_${name}`,
    subject: (subject) => `${label}_${suffix}.${subject}`,
  };
}

export function testRedisPrefix(label = 'it'): string {
  return `${label}:${uniqueSuffix()}:`;
}

/**
 * Deletes the service's streams a test made under `streamPrefix` (EVALS_STREAM_PREFIX of its apps), once its
 * apps have stopped. Streams that are not there are skipped.
 */
export async function deleteTestStreams(streamPrefix: string): Promise<void> {
  // Loaded here, not at the top: most integration specs use this module and never talk to NATS.
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const { connect } = await import('@nats-io/transport-node');
  const nc = await connect({ servers: testServers.nats.url });
  try {
    const jsm = await jetstreamManager(nc);
    for (const s of STREAMS) await jsm.streams.delete(`${streamPrefix}${s.name}`).catch(() => undefined);
  } finally {
    await nc.close();
  }
}
