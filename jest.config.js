// Three projects, by kind (see docs/testing.md): pure unit specs beside the code, integration specs
// against the real PostgreSQL / NATS JetStream / Redis, and end-to-end tests across processes.
const fs = require('node:fs');
const path = require('node:path');

const swcrc = JSON.parse(fs.readFileSync(path.join(__dirname, '.swcrc'), 'utf8'));
const transform = { '^.+\\.(t|j)s$': ['@swc/jest', { ...swcrc, swcrc: false }] };
const moduleNameMapper = { '^@evals/([a-z-]+)$': '<rootDir>/libs/$1/src/index.ts' };
// NestJS 12 ships as ESM only; Jest's module system needs it compiled to CommonJS (swc, cached).
const transformIgnorePatterns = ['/node_modules/(?!(@nestjs)/)'];
const common = { rootDir: __dirname, transform, transformIgnorePatterns, moduleNameMapper, testEnvironment: 'node' };

module.exports = {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/{apps,libs,bench,deploy}/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'int',
      testMatch: ['<rootDir>/{apps,libs,test}/**/*.int-spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
    },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
    },
  ],
};
