/** What a composition root (the embedded all-in-one, apps/cli/src/embedded) may use of this app. */
export { IngestionModule } from './ingestion.module';
export { loadIngestionConfig } from './config';
export type { IngestionConfig } from './config';
