import { persistenceContract } from './persistence.contract';
import { pgliteDataSource } from './test-data-sources.testing';

// PGlite loads its WASM through a dynamic import, which Jest's module system runs only with Node's
// --experimental-vm-modules: `npm run test:int` passes it.
persistenceContract('PGlite, in this thread', () => pgliteDataSource('in-process'));
// A command's own all-in-one (embedded-server.ts): PGlite in a worker thread, the same answers.
persistenceContract('PGlite in a worker thread', () => pgliteDataSource('worker'));
