/**
 * The promptfoo agreement set (issue 29 part 3): every mapped deterministic assertion type, each with outputs
 * that pass and outputs that fail it, several assertions on one test (all must pass; weights and a
 * threshold), defaultTest, and a CSV file of `__expected` columns. The echo provider returns the prompt
 * `{{output}}`, so each test's output is its `output` var.
 *
 * Kept out, as docs/suites.md ("Importing", "Where the verdicts differ on purpose") says why: non-ASCII
 * letters under the i* types, YAML-only or unclosed `{...}` under contains-json, JavaScript-only regex
 * syntax. `llm-rubric` needs a model on both sides and is checked by the importer's unit spec instead.
 * Outputs never contain `{{` or `{%` (promptfoo's prompt template would render them).
 */
type Assert = Record<string, unknown>;

export interface AgreementTest {
  readonly description: string;
  readonly vars: { readonly output: string; readonly [name: string]: string };
  readonly assert: readonly Assert[];
  readonly threshold?: number;
}

/** One assertion with outputs chosen to pass and to fail it (the pool below adds more of both). */
const FAMILIES: readonly [Assert, readonly string[]][] = [
  [{ type: 'equals', value: 'hello' }, ['hello', 'hello ', 'Hello', 'hell']],
  [{ type: 'equals', value: 42 }, ['42', '42.0', ' 42']],
  [{ type: 'equals', value: { a: 1, b: [1, 2] } }, ['{"b":[1,2],"a":1}', '{"a":1,"b":[2,1]}', '{"a":1.0,"b":[1,2]}', 'not json']],
  [{ type: 'not-equals', value: 'hello' }, ['hello', 'bye']],
  [{ type: 'contains', value: 'fund' }, ['refund', 'FUND', 'fun d']],
  [{ type: 'contains', value: 7 }, ['a7b', 'seven']],
  [{ type: 'icontains', value: 'FUND' }, ['Refund', 'REFUND', 'fun d']],
  [{ type: 'not-contains', value: 'x' }, ['abc', 'xyz']],
  [{ type: 'not-icontains', value: 'X' }, ['abc', 'axb', 'AXB']],
  [{ type: 'contains-any', value: ['cat', 'dog'] }, ['hotdog', 'bird', 'CAT']],
  [{ type: 'contains-any', value: 'cat, "d, g"' }, ['a d, g', 'cat', 'dog']],
  [{ type: 'icontains-any', value: ['CAT', 'Dog'] }, ['a cat', 'DOG!', 'bird']],
  [{ type: 'icontains-any', value: 'cat, dog' }, ['Cat', 'fish']],
  [{ type: 'contains-all', value: ['alpha', 'beta'] }, ['alpha beta', 'beta alpha', 'alpha', 'ALPHA BETA']],
  [{ type: 'contains-all', value: 'alpha, beta' }, ['alphabeta', 'beta']],
  [{ type: 'icontains-all', value: ['ALPHA', 'beta'] }, ['Alpha Beta', 'alpha']],
  [{ type: 'not-contains-any', value: ['cat', 'dog'] }, ['bird', 'hotdog']],
  [{ type: 'not-icontains-any', value: ['CAT', 'DOG'] }, ['bird', 'Hotdog']],
  [{ type: 'not-contains-all', value: ['alpha', 'beta'] }, ['alpha beta', 'alpha']],
  [{ type: 'not-icontains-all', value: ['ALPHA', 'BETA'] }, ['alpha beta', 'Beta']],
  [{ type: 'starts-with', value: 'He' }, ['Hello', 'hello', ' He', 'He']],
  [{ type: 'not-starts-with', value: 'He' }, ['Hello', 'hello']],
  [{ type: 'regex', value: '^\\d{3}-\\d{4}$' }, ['555-1234', '555-12345', 'x555-1234']],
  [{ type: 'regex', value: 'colou?r' }, ['my color', 'my colour', 'COLOR']],
  [{ type: 'regex', value: '(?i)^yes' }, ['Yes sir', 'no']], // not JS syntax: kept out below
  [{ type: 'not-regex', value: '\\b\\d{16}\\b' }, ['card 4111111111111111', 'no card']],
  [{ type: 'is-json' }, ['{"a":1}', '[1,2]', '1', 'abc', '{"a":1,}', ' {"a":1} ', '"x"', 'true']],
  [{ type: 'not-is-json' }, ['{"a":1}', 'abc']],
  [{ type: 'contains-json' }, ['text {"a":1} more', 'none', '[1,2]', '{"a": {"b": 2}} x', 'x {bad} {"ok":true}', '{"a":"}"}']],
  [{ type: 'not-contains-json' }, ['x {"a":1}', 'plain']],
  [{ type: 'levenshtein', value: 'kitten' }, ['sitting', 'kitten', 'kitten!!!!!!', 'kitten!!!!!']],
  [{ type: 'levenshtein', value: 'kitten', threshold: 2 }, ['sitting', 'kiten', 'mitten']],
];

/** Outputs every family is also tried on: most fail most assertions, some pass. */
const POOL = ['hello', 'FORBIDDEN hello', 'Hello world', 'refund please', '555-1234', '{"a":1}', 'alpha beta', 'kitten', '[1, 2]', 'cat and dog', 'x [bad] y'];

/** Several assertions on one test: all must pass, or with a threshold the weighted share must reach it. */
const COMBINED: readonly [Omit<AgreementTest, 'description' | 'vars'>, readonly string[]][] = [
  [{ assert: [{ type: 'contains', value: 'refund' }, { type: 'starts-with', value: 'Your' }] }, ['Your refund', 'Your order', 'A refund']],
  [{ assert: [{ type: 'is-json' }, { type: 'contains', value: '"ok"' }, { type: 'not-contains', value: 'error' }] }, ['{"ok":1}', '{"ok":"error"}', '{"no":1}', 'ok']],
  [{ assert: [{ type: 'contains', value: 'a', weight: 0 }, { type: 'contains', value: 'b' }] }, ['ab', 'b', 'a']], // a weight-0 assertion counts as passed
  [{ assert: [{ type: 'contains', value: 'a', weight: 3 }, { type: 'contains', value: 'b' }, { type: 'contains', value: 'c' }], threshold: 0.6 }, ['a', 'bc', 'ab', 'c']],
  [{ assert: [{ type: 'contains', value: 'a' }, { type: 'contains', value: 'b' }], threshold: 0.5 }, ['a', 'b', 'x']],
  [{ assert: [{ type: 'contains', value: 'a', weight: 0 }, { type: 'contains', value: 'b', weight: 2 }], threshold: 0.9 }, ['a', 'b', 'ab']],
  [{ assert: [{ type: 'regex', value: '^\\d+$' }, { type: 'levenshtein', value: '1234', threshold: 1 }] }, ['1234', '1235', '12a4', '99']],
];

/** The promptfoo tests file (tests.json) and the CSV file (more.csv) of the agreement config. */
export function agreementTests(): { json: AgreementTest[]; csv: string; csvOutputs: string[] } {
  const json: AgreementTest[] = [];
  const add = (assert: readonly Assert[], output: string, threshold?: number) =>
    json.push({ description: `c${json.length + 1}-${String(assert[0]['type'])}`, vars: { output }, assert, ...(threshold !== undefined ? { threshold } : {}) });
  for (const [assertion, outputs] of FAMILIES) {
    if (assertion['value'] === '(?i)^yes') continue; // RE2-only syntax: kept out (listed in docs/suites.md)
    for (const output of [...outputs, ...POOL.filter((p) => !outputs.includes(p))]) add([assertion], output);
  }
  for (const [test, outputs] of COMBINED) for (const output of outputs) add(test.assert, output, test.threshold);
  // Assertion values rendered with the test's vars (promptfoo: Nunjucks; the importer: the {{ var }} form).
  for (const [word, output] of [['refund', 'a refund'], ['refund', 'a return'], ['Hello', 'Hello there'], ['Hello', 'hi Hello']] as const) {
    json.push({ description: `c${json.length + 1}-templated`, vars: { output, word }, assert: [{ type: 'contains', value: '{{word}}' }, { type: 'starts-with', value: '{{ word }}' }] });
    json.push({ description: `c${json.length + 1}-templated-any`, vars: { output, word }, assert: [{ type: 'icontains-any', value: ['{{word}}', 'zzz'] }] });
  }
  const rows: [string, string, string][] = [
    ['hello world', 'contains: hello', 'levenshtein: hello world'],
    ['hello world', 'icontains: WORLD', 'levenshtein: hello world!'], // the CSV default threshold 0.75 is distance 0
    ['555-1234', 'regex: ^\\d{3}-\\d{4}$', 'not-contains: x'],
    ['{"a":1}', 'is-json', 'contains-json'],
    ['alpha', 'contains-all: alpha, beta', ''],
    ['beta', 'icontains-any: ALPHA, BETA', 'starts-with: be'],
    ['plain', 'plain', ''], // a cell of no known type is equals
    ['plain!', 'plain', 'not-starts-with: x'],
  ];
  const quote = (s: string) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  const csv = ['output,__expected1,__expected2', ...rows.map((r) => r.map(quote).join(','))].join('\n') + '\n';
  return { json, csv, csvOutputs: rows.map((r) => r[0]) };
}

/** Every assertion type the set uses (the test checks that each mapped type is present). */
export const AGREEMENT_TYPES = [
  'equals', 'not-equals', 'contains', 'icontains', 'not-contains', 'not-icontains', 'contains-any', 'icontains-any', 'contains-all', 'icontains-all',
  'not-contains-any', 'not-icontains-any', 'not-contains-all', 'not-icontains-all', 'starts-with', 'not-starts-with', 'regex', 'not-regex',
  'is-json', 'not-is-json', 'contains-json', 'not-contains-json', 'levenshtein',
] as const;

/** defaultTest: one assertion every test gets (and which one pool-like output fails). */
export const DEFAULT_TEST = { assert: [{ type: 'not-contains', value: 'FORBIDDEN' }] };
