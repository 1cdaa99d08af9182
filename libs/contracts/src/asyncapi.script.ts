/**
 * `npm run docs:asyncapi`: writes docs/asyncapi.json from the contract classes. asyncapi.spec.ts fails while
 * the committed file differs from what this writes, so a contract change cannot ship without its document.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderAsyncApiJson } from './asyncapi';

export const ASYNCAPI_DOC_PATH = join(__dirname, '..', '..', '..', 'docs', 'asyncapi.json');

if (require.main === module) {
  writeFileSync(ASYNCAPI_DOC_PATH, renderAsyncApiJson());
  process.stdout.write(`wrote ${ASYNCAPI_DOC_PATH}\n`);
}
