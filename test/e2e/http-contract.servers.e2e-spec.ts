import * as fs from 'node:fs';
import { startCluster, type AppName } from '../support/app-processes';
import { createTestSchema, deleteTestStreams, uniqueSuffix } from '../support/isolation';
import { CONTRACT_ENV, httpApiContract, type ContractApp } from './http-contract';

/**
 * The HTTP API contract (issue 7) on the deployment with servers: the four apps as separate processes on
 * PostgreSQL (a schema of its own) and NATS JetStream (streams and subjects of their own).
 */
const APP: Record<ContractApp, AppName> = { ingestion: 'ingestion', read: 'read-model', regression: 'regression' };

httpApiContract('real servers', async () => {
  const suffix = uniqueSuffix();
  const streamPrefix = `E2HC_${suffix}_`;
  const schema = await createTestSchema('e2hc');
  const cleanup = async () => {
    await deleteTestStreams(streamPrefix);
    await schema.drop();
  };
  let cluster;
  try {
    cluster = await startCluster({ schema: schema.schema, streamPrefix, subjectPrefix: `e2hc_${suffix}`, apps: ['ingestion', 'scoring-worker', 'read-model', 'regression'], env: { ...CONTRACT_ENV } });
  } catch (error) {
    await cleanup();
    throw error;
  }
  const started = cluster;
  return {
    url: (app, path) => started.url(APP[app], path),
    async stop() {
      await started.stopAll();
      await cleanup();
      fs.rmSync(started.logDir, { recursive: true, force: true });
    },
  };
});
