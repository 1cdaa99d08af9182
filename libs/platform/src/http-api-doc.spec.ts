import * as fs from 'node:fs';
import * as path from 'node:path';
import { API_ERROR_CODES } from './api-error';
import { MAX_BODY_DEPTH } from './body-depth';

/** docs/http-api.md is the reference of the error codes: it lists each, with the status the catalogue maps it to. */
describe('unit: docs/http-api.md lists every error code with its status (X6)', () => {
  const page = fs.readFileSync(path.resolve(__dirname, '../../../docs/http-api.md'), 'utf8');
  const table = page.slice(page.indexOf('| status | code | meaning |'));
  const rows = table.split('\n').slice(2);
  const documented = new Map<string, number>();
  for (const row of rows.slice(0, rows.findIndex((r) => !r.startsWith('|')))) {
    const [, status, codes] = row.split('|').map((c) => c.trim());
    for (const m of codes!.matchAll(/`([A-Z_]+)`/g)) documented.set(m[1]!, Number(status));
  }

  it('each code of API_ERROR_CODES once, with its status', () => {
    const expected = new Map(Object.entries(API_ERROR_CODES).filter(([code]) => code !== 'HTTP_ERROR').map(([code, e]) => [code, e.status]));
    expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(expected));
    expect(page).toContain('`HTTP_ERROR`');
  });

  it('states the nesting limit the code applies', () => {
    expect(page).toContain(`deeper than ${MAX_BODY_DEPTH} levels`);
  });
});
