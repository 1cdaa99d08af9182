import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SUITE_ERROR_CODES } from './suite-error';
import { parseSuiteYaml } from './suite.parser';

const DOC = readFileSync(join(__dirname, '..', '..', '..', '..', 'docs', 'suites.md'), 'utf8');

describe('docs/suites.md', () => {
  it('shows a minimal suite that validates', () => {
    const block = /```yaml\n([\s\S]*?)\n```/.exec(DOC)?.[1] ?? '';
    const r = parseSuiteYaml(block, 'docs/suites.md');
    expect(r.ok ? 'ok' : JSON.stringify(r.errors)).toBe('ok');
  });

  it('documents every suite error code', () => {
    for (const code of Object.values(SUITE_ERROR_CODES)) expect(DOC).toContain(`| \`${code}\``);
  });
});
