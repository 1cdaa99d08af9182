import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { suiteContentHash } from './suite-hash';
import type { SuiteCase } from './suite.model';
import { parseSuiteYaml, streamSuiteYaml } from './suite.parser';

const ROOT = join(__dirname, '..', '..', '..', '..');
const FILE = 'big.suite.yaml';

/** streamSuiteYaml's answer beside parseSuiteYaml's: the same problems (positions included) in the same order, or the same suite. */
async function expectSameAsParse(text: string): Promise<{ batches: number[] }> {
  const whole = parseSuiteYaml(text, FILE, { scorers: false });
  const got: SuiteCase[] = [];
  const batches: number[] = [];
  const dry = await streamSuiteYaml(text, FILE);
  const streamed = await streamSuiteYaml(text, FILE, (cases, from) => {
    expect(from).toBe(got.length);
    got.push(...cases);
    batches.push(cases.length);
  });
  expect(streamed).toEqual(dry);
  if (!whole.ok) {
    expect(streamed.ok ? [] : streamed.errors).toEqual(whole.errors);
    return { batches };
  }
  if (!streamed.ok) throw new Error(JSON.stringify(streamed.errors));
  const { cases, ...head } = whole.suite;
  expect(streamed.head).toEqual(head);
  expect(streamed.case_count).toBe(cases.length);
  expect(got).toEqual(cases);
  expect(streamed.content_hash).toBe(suiteContentHash(whole.suite));
  return { batches };
}

/** A suite in the common layout with `n` cases; `bad(i)` may replace case i's lines. */
function yamlSuite(n: number, bad: (i: number) => string | undefined = () => undefined, head = ''): string {
  let text = `key: big\n${head}default_scorer: {type: contains, value: "1"}\npass_threshold: 0.8\nregression_threshold: 0.1\ncases:\n`;
  for (let i = 0; i < n; i++) text += bad(i) ?? `  - id: c${i}\n    input: case ${i}\n    expected: "1"\n${i % 3 === 0 ? '    tags: [b, a]\n' : ''}`;
  return text;
}

describe('streamSuiteYaml answers what parseSuiteYaml answers (issue 31)', () => {
  it.each(readdirSync(join(ROOT, 'examples')).filter((f) => f.endsWith('.suite.yaml')))('examples/%s', async (file) => {
    await expectSameAsParse(readFileSync(join(ROOT, 'examples', file), 'utf8'));
  });

  it('a 500-case suite: valid, given in slices of at most 50 cases, never whole', async () => {
    const { batches } = await expectSameAsParse(yamlSuite(500));
    expect(batches).toHaveLength(10);
    expect(Math.max(...batches)).toBe(50);
    expect((await streamSuiteYaml(yamlSuite(500), FILE)).read).toBe('slices');
  });

  it('says when it read a text whole, and reads a text whole when told (a second pass after a whole first one)', async () => {
    const anchored = yamlSuite(70, (i) => (i === 1 ? `  - id: c1\n    input: &a x\n` : i === 2 ? `  - id: c2\n    input: *a\n` : undefined));
    expect(await streamSuiteYaml(anchored, FILE)).toMatchObject({ ok: true, read: 'whole' });
    const text = yamlSuite(120);
    const sliced = await streamSuiteYaml(text, FILE);
    const got: SuiteCase[] = [];
    const forced = await streamSuiteYaml(text, FILE, (cases) => void got.push(...cases), { whole: true });
    expect(forced).toEqual({ ...sliced, read: 'whole' });
    expect(got).toHaveLength(120);
  });

  const invalid: Array<[string, string]> = [
    ['duplicate ids across slices', yamlSuite(300, (i) => (i === 260 || i === 299 ? `  - id: c7\n    input: again\n` : undefined))],
    ['bad fields in several slices', yamlSuite(200, (i) => (i === 3 ? `  - id: bad id\n    input: ""\n` : i === 120 ? `  - id: t\n    input: x\n    tags: [A, A]\n    expect: 1\n` : i === 199 ? `  - input: no id\n` : undefined))],
    ['a scorer problem of the default for one case', yamlSuite(120, (i) => (i === 77 ? `  - id: c77\n    input: no expected\n` : undefined)).replace('value: "1"', 'value: null')],
    ['header problems and a case problem', yamlSuite(60, (i) => (i === 55 ? `  - id: c55\n    input: {}\n` : undefined), 'name: x\ndescription: 3\n').replace('pass_threshold: 0.8', 'pass_threshold: "0.8"')],
    ['a YAML error in a slice', yamlSuite(120, (i) => (i === 90 ? `  - id: c90\n    input: [unclosed\n` : undefined))],
    ['a duplicate key in a slice', yamlSuite(80, (i) => (i === 70 ? `  - id: c70\n    id: c71\n    input: x\n` : undefined))],
    ['anchors (read whole)', yamlSuite(70, (i) => (i === 1 ? `  - id: c1\n    input: &a x\n` : i === 2 ? `  - id: c1\n    input: *a\n` : undefined))],
    ['JSON (read whole)', JSON.stringify({ key: 'j', default_scorer: { type: 'exact' }, pass_threshold: 2, regression_threshold: 0.1, cases: [{ id: 'a', input: 'x' }, { id: 'a', input: 'y' }] })],
    ['cases not ending the file', `${yamlSuite(60)}extra: 1\n`],
    ['empty cases', 'key: e\ndefault_scorer: {type: exact}\npass_threshold: 0.5\nregression_threshold: 0.1\ncases:\n'],
  ];
  it.each(invalid)('%s: the same problems, positions and order', async (_, text) => {
    expect(parseSuiteYaml(text, FILE).ok).toBe(false);
    await expectSameAsParse(text);
  });

  it('random problems scattered over a 150-case suite', async () => {
    const lines = [`  - id: c0\n    input: dup\n`, `  - id: Bad!\n    input: x\n`, `  - id: q\n    input: ""\n`, `  - id: r\n    input: x\n    tags: x\n`, `  - id: s\n    input: x\n    scorer: {type: regex, pattern: "("}\n`, `  - id: u\n    input: x\n    what: 1\n`, `  - 3\n`];
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.integer({ min: 0, max: 149 }).map(String), fc.integer({ min: 0, max: lines.length - 1 }), { maxKeys: 6 }), async (at) => {
        await expectSameAsParse(yamlSuite(150, (i) => (at[String(i)] !== undefined ? lines[at[String(i)]!] : undefined)));
      }),
      { numRuns: 40 },
    );
  });
});
