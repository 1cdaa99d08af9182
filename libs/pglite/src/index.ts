// PostgreSQL without a server, for the embedded all-in-one (docs/embedded.md): PGlite, reached by the `pg`
// driver. A library of its own, importing nothing but Node and PGlite, so that the all-in-one can start
// PGlite before it loads anything else (issue 15).
export { EMBEDDED_SEARCH_PATH, inProcessPgStream, startEmbeddedPostgres } from './embedded-postgres';
export type { EmbeddedPostgres, EmbeddedPostgresOptions } from './embedded-postgres';
export { templateMigrations } from './data-dir-template';
