/** What a composition root (the embedded all-in-one, apps/cli/src/embedded) may use of this app. */
export { WorkerModule } from './worker.module';
export { loadWorkerConfig } from './config';
export type { WorkerConfig } from './config';
