/** What a composition root (the embedded all-in-one, apps/cli/src/embedded) may use of this app. */
export { ReadModelModule } from './read-model.module';
export { loadReadModelConfig } from './config';
export type { ReadModelConfig } from './config';
