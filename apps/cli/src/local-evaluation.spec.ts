import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadSuite, SuiteRefused } from './local-evaluation';

describe('unit: loadSuite reads a suite file once per content (issue 15, the checked-locally start)', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evals-load-suite-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const suite = (key: string, expected: string) =>
    JSON.stringify({ key, default_scorer: { type: 'exact' }, pass_threshold: 0.8, regression_threshold: 0.1, cases: [{ id: 'c1', input: 'q', expected }] });

  it('answers a second read of the same text from the first parse, and any change of the text from a new one', () => {
    const file = path.join(dir, 'a.suite.json');
    fs.writeFileSync(file, suite('memo-a', 'x'));
    const first = loadSuite(file);
    expect(loadSuite(file)).toBe(first);
    fs.writeFileSync(file, suite('memo-a', 'y'));
    const changed = loadSuite(file);
    expect(changed).not.toBe(first);
    expect(changed.suite.cases[0]!.expected).toBe('y');
  });

  it('still refuses an invalid file every time it is read', () => {
    const file = path.join(dir, 'bad.suite.json');
    fs.writeFileSync(file, '{"key": "Not A Key"}');
    expect(() => loadSuite(file)).toThrow(SuiteRefused);
    expect(() => loadSuite(file)).toThrow(SuiteRefused);
  });
});
