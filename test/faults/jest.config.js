// `npm run test:faults` (docs/reliability.md "Faults"): the fault suite stops and starts the machine's
// PostgreSQL, Redis and NATS, so it has its own configuration and is never part of `npm test`.
const path = require('node:path');
const base = require('../../jest.config.js');

const e2e = base.projects.find((p) => p.displayName === 'e2e');

module.exports = {
  ...e2e,
  rootDir: path.resolve(__dirname, '../..'),
  displayName: 'faults',
  testMatch: ['<rootDir>/test/faults/**/*.fault-spec.ts'],
};
