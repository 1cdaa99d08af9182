import { templateMigrations } from '@evals/pglite';
import { migrations } from './data-source';

// Issue 31: a new embedded data directory is unpacked from a template that holds the migrations applied.
// A migration added without `npm run pglite:template` would still run on a newcomer's first start - correct,
// but the first run would pay for it again - so the template must hold every migration, in order.
describe('the PGlite data directory template (issue 31)', () => {
  it('holds every migration of libs/persistence, in order (after a new migration: npm run pglite:template)', () => {
    expect(templateMigrations()).toEqual(migrations.map((m) => new m().name));
  });
});
