/**
 * promptfoo configs to suites (issue 29 part 1; docs/suites.md, "Importing"). Pure but for `read`, which the
 * command gives (files relative to the config's folder).
 *
 * Every test (defaultTest's vars and assertions merged in, as promptfoo does) becomes a case: `vars` the input,
 * its assertions one scorer - several combine with `all`, as promptfoo combines them (AssertionsResult: every
 * assertion must pass, a weight-0 one counting as passed; with the test's `threshold`, the weighted mean score
 * must reach it). The mapping is
 * promptfoo 0.120.0's own code read case by case (dist/src/index.cjs, handleContains ... handleStartsWith).
 */
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { validateScorerSpec } from '@evals/scorers';
import { parseCsv } from './csv';
import type { ImportedCase, LeftOut } from './suite-file';

export type ReadFile = (file: string) => string;

interface Assertion {
  readonly type?: unknown;
  readonly value?: unknown;
  readonly threshold?: unknown;
  readonly weight?: unknown;
  readonly transform?: unknown;
  readonly [key: string]: unknown;
}

interface TestCase {
  readonly description?: unknown;
  readonly vars?: unknown;
  readonly assert?: unknown;
  readonly threshold?: unknown;
  readonly options?: unknown;
}

export interface PromptfooImport {
  readonly title?: string;
  /** One per test, in order; undefined where the whole test is left out. */
  readonly cases: readonly ({ readonly name?: string } & ImportedCase | undefined)[];
  readonly leftOut: readonly LeftOut[];
  /** Assertion types mapped, with how many times (the report). */
  readonly mapped: ReadonlyMap<string, number>;
}

type Spec = Record<string, unknown>;
/** An assertion mapped: its scorer spec and, for `equals`, the case `expected` it compares with. */
type Mapped = { readonly spec: Spec; readonly expected?: unknown } | { readonly unsupported: string };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** promptfoo's list forms: a string is split on commas (contains-any keeps "quoted, parts" together). */
function listValue(type: string, value: unknown): string[] | undefined {
  if (Array.isArray(value)) return value.map((v) => String(v));
  if (typeof value !== 'string' || value === '') return undefined;
  if (type === 'contains-any') return value.match(/(".*?"|[^,]+)(?=\s*,|\s*$)/g)?.map((v) => v.trim().replace(/^"|"$/g, '')) ?? [];
  return value.split(',').map((v) => v.trim());
}

/** promptfoo renders assertion values with Nunjucks and the test's vars; the `{{ var }}` form is done here. */
function render(value: unknown, vars: Record<string, unknown>): { value: unknown } | { unsupported: string } {
  // Lists and mappings are rendered item by item, as promptfoo's renderVarsInObject does.
  if (Array.isArray(value) || isRecord(value)) {
    const entries = Object.entries(value).map(([k, v]) => [k, render(v, vars)] as const);
    const failed = entries.find(([, r]) => 'unsupported' in r);
    if (failed) return failed[1];
    const rendered = entries.map(([k, r]) => [k, (r as { value: unknown }).value] as const);
    return { value: Array.isArray(value) ? rendered.map(([, v]) => v) : Object.fromEntries(rendered) };
  }
  if (typeof value !== 'string') return { value };
  if (/\{%|\{#/.test(value)) return { unsupported: 'a Nunjucks tag in the value (only {{ var }} is rendered)' };
  let failed = false;
  const out = value.replace(/\{\{\s*([^}]*?)\s*\}\}/g, (_, name: string) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || !(name in vars)) {
      failed = true;
      return '';
    }
    const v = vars[name];
    return typeof v === 'string' ? v : JSON.stringify(v);
  });
  return failed ? { unsupported: 'a template expression other than a known {{ var }}' } : { value: out };
}

function strings(values: string[] | undefined): values is string[] {
  return values !== undefined && values.length > 0 && values.every((v) => v !== '');
}

/** promptfoo runs `new RegExp(value)`; a pattern it cannot compile fails there whatever the output. */
function compilesInJavaScript(pattern: string): boolean {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
}

/** One assertion to a scorer spec, or why it cannot be (the report's reason). */
export function mapAssertion(a: Assertion, vars: Record<string, unknown>): Mapped {
  const type = typeof a.type === 'string' ? a.type : '';
  if (a.transform !== undefined) return { unsupported: 'a `transform` runs code on the output' };
  if (type === 'assert-set') return { unsupported: 'nested assertion sets are not imported' };
  if (typeof a.value === 'string' && a.value.startsWith('file://')) return { unsupported: 'a file:// value (promptfoo loads or runs the file)' };
  const rendered = render(a.value, vars);
  if ('unsupported' in rendered) return rendered;
  const value = rendered.value;
  const negated = type.startsWith('not-');
  const base = negated ? type.slice(4) : type;
  const not = (spec: Spec): Spec => (negated ? { type: 'not', scorer: spec } : spec);
  const text = typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
  switch (base) {
    case 'equals':
      if (isRecord(value) || Array.isArray(value)) return { spec: not({ type: 'json_equal' }), expected: value };
      if (value === undefined || value === null) return { unsupported: 'needs a value' };
      return { spec: not({ type: 'exact' }), expected: String(value) };
    case 'contains':
    case 'icontains': {
      if (text === undefined || text === '') return { unsupported: 'needs a non-empty string or number value' };
      const ignore = base === 'icontains' ? { ignore_case: true } : {};
      return { spec: { type: negated ? 'not_contains' : 'contains', value: text, ...ignore } };
    }
    case 'contains-any':
    case 'icontains-any': {
      const values = listValue(base, value);
      if (!strings(values)) return { unsupported: 'needs a non-empty list of non-empty values' };
      const ignore = base === 'icontains-any' ? { ignore_case: true } : {};
      // not-contains-any: none of them, which is not_contains.
      return { spec: { type: negated ? 'not_contains' : 'contains_any', value: values, ...ignore } };
    }
    case 'contains-all':
    case 'icontains-all': {
      const values = listValue(base, value);
      if (!strings(values)) return { unsupported: 'needs a non-empty list of non-empty values' };
      const ignore = base === 'icontains-all' ? { ignore_case: true } : {};
      return { spec: not({ type: 'contains', value: values, ...ignore }) };
    }
    case 'starts-with':
      if (typeof value !== 'string' || value === '') return { unsupported: 'needs a non-empty string value' };
      return { spec: not({ type: 'starts_with', value }) };
    case 'regex':
      if (typeof value !== 'string' || value === '') return { unsupported: 'needs a non-empty string value' };
      if (!compilesInJavaScript(value)) return { unsupported: 'not a JavaScript regex: promptfoo fails it on every output (RE2 might accept it, e.g. (?i))' };
      return { spec: not({ type: 'regex', pattern: value }) };
    case 'is-json':
    case 'contains-json':
      if (value !== undefined && value !== null && value !== '') return { unsupported: 'a JSON schema value is not imported' };
      return { spec: not({ type: base === 'is-json' ? 'json_valid' : 'contains_json' }) };
    case 'levenshtein': {
      // promptfoo's handleLevenshtein ignores the not- prefix: not-levenshtein is levenshtein there.
      if (negated) return { unsupported: 'promptfoo ignores `not-` on levenshtein, so its meaning is unclear' };
      if (typeof value !== 'string') return { unsupported: 'needs a string value' };
      const threshold = a.threshold ?? 5;
      if (typeof threshold !== 'number' || !(threshold >= 0) || !Number.isFinite(threshold)) return { unsupported: 'a threshold that is not a number >= 0' };
      return { spec: { type: 'levenshtein', value, max_distance: Math.floor(threshold) } };
    }
    case 'llm-rubric':
      if (negated) return { unsupported: 'a negated rubric has no judge equivalent' };
      if (typeof value !== 'string' || value.trim() === '') return { unsupported: 'needs a rubric string' };
      return { spec: { type: 'llm_judge', rubric: value, ...(typeof a.threshold === 'number' ? { min_score: a.threshold } : {}) } };
    default:
      return { unsupported: 'no deterministic equivalent' };
  }
}

/** A CSV cell of an `__expected` column to an assertion, as promptfoo's assertionFromString reads it. */
export function assertionFromString(expected: string): Assertion {
  if (/^(javascript:|fn:|eval:)/.test(expected) || /^file:\/\/.*\.(js|cjs|mjs|ts|cts|mts)(:.*)?$/.test(expected)) return { type: 'javascript', value: expected };
  if (expected.startsWith('grade:')) return { type: 'llm-rubric', value: expected.slice(6) };
  if (expected.startsWith('llm-rubric:')) return { type: 'llm-rubric', value: expected.slice(11) };
  if (expected.startsWith('python:') || (expected.startsWith('file://') && (expected.endsWith('.py') || expected.includes('.py:')))) return { type: 'python', value: expected };
  const m = /^(not-)?([a-z][a-z0-9-]*?)(?:\((\d+(?:\.\d+)?)\))?(?::([\s\S]*))?$/.exec(expected);
  if (m && KNOWN_TYPES.has(m[2])) {
    const [, notPrefix, type, thresholdText, value] = m;
    const full = notPrefix ? `not-${type}` : type;
    const parsed = thresholdText ? Number.parseFloat(thresholdText) : NaN;
    const threshold = Number.isFinite(parsed) ? parsed : undefined;
    if (['contains-all', 'contains-any', 'icontains-all', 'icontains-any'].includes(type)) return { type: full, value: value ? value.split(',').map((s) => s.trim()) : value };
    if (type === 'contains-json' || type === 'is-json') return { type: full, value };
    // promptfoo gives these a default threshold of 0.75 in CSV (so levenshtein: then means distance 0).
    if (THRESHOLD_TYPES.has(type)) return { type: full, value: value?.trim(), threshold: threshold ?? (type === 'similar' ? 0.75 : 0.75) };
    return { type: full, value: value?.trim() };
  }
  return { type: 'equals', value: expected };
}

const THRESHOLD_TYPES = new Set(['answer-relevance', 'classifier', 'context-faithfulness', 'context-recall', 'context-relevance', 'cost', 'latency', 'levenshtein', 'perplexity-score', 'perplexity', 'rouge-n', 'similar', 'starts-with']);

/** promptfoo 0.120.0's BaseAssertionTypesSchema: a CSV cell `TYPE:value` is an assertion only for these. */
const KNOWN_TYPES = new Set([
  'answer-relevance', 'bleu', 'classifier', 'contains', 'contains-all', 'contains-any', 'contains-html', 'contains-json', 'contains-sql', 'contains-xml',
  'context-faithfulness', 'context-recall', 'context-relevance', 'conversation-relevance', 'cost', 'equals', 'factuality', 'finish-reason', 'g-eval', 'gleu',
  'guardrails', 'icontains', 'icontains-all', 'icontains-any', 'is-html', 'is-json', 'is-refusal', 'is-sql', 'is-valid-function-call',
  'is-valid-openai-function-call', 'is-valid-openai-tools-call', 'is-xml', 'javascript', 'latency', 'levenshtein', 'llm-rubric', 'meteor', 'model-graded-closedqa',
  'model-graded-factuality', 'moderation', 'perplexity', 'perplexity-score', 'pi', 'python', 'regex', 'rouge-n', 'ruby', 'select-best', 'similar', 'starts-with',
  'trace-error-spans', 'trace-span-count', 'trace-span-duration', 'webhook', 'word-count', 'max-score', 'search-rubric', 'tool-call-f1',
]);

/** A CSV row to a test, as promptfoo's testCaseFromCsvRow: `__expected*` assertions, `__description`, `__threshold`, the rest vars. */
function testFromCsvRow(values: Readonly<Record<string, string>>): TestCase {
  const vars: Record<string, string> = {};
  const assert: Assertion[] = [];
  let description: string | undefined;
  let threshold: number | undefined;
  for (const [key, value] of Object.entries(values)) {
    if (key.startsWith('__expected')) {
      if (value.trim() !== '') assert.push(assertionFromString(value.trim()));
    } else if (key === '__description') description = value;
    else if (key === '__threshold') threshold = Number.parseFloat(value);
    else if (!key.startsWith('__')) vars[key] = value;
  }
  return { vars, assert, ...(description !== undefined ? { description } : {}), ...(threshold !== undefined ? { threshold } : {}) };
}

/** Reads a `tests` value: a list (of tests or file references), a file reference, or a file path. */
export function readTests(source: unknown, dir: string, read: ReadFile): TestCase[] {
  if (source === undefined || source === null) return [];
  if (Array.isArray(source)) return source.flatMap((t) => (typeof t === 'string' ? readTests(t, dir, read) : [t as TestCase]));
  if (typeof source !== 'string') throw new Error('`tests` must be a list of tests or a file reference');
  if (/[*?[\]{}]/.test(source)) throw new Error(`\`tests: ${source}\`: glob patterns are not read; list the files`);
  const file = path.resolve(dir, source.replace(/^file:\/\//, ''));
  const text = read(file);
  const ext = path.extname(file).toLowerCase();
  if (ext === '.csv') return parseCsv(text, file).map((r) => testFromCsvRow(r.values));
  if (ext === '.jsonl') return text.split(/\r?\n/).filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as TestCase);
  const parsed: unknown = ext === '.json' ? JSON.parse(text) : parseYaml(text);
  return readTests(Array.isArray(parsed) ? parsed : [parsed], path.dirname(file), read);
}

function readDefaultTest(value: unknown, dir: string, read: ReadFile): TestCase {
  if (typeof value === 'string') {
    const file = path.resolve(dir, value.replace(/^file:\/\//, ''));
    return parseYaml(read(file)) as TestCase;
  }
  return isRecord(value) ? (value as TestCase) : {};
}

/** A non-empty input: the vars, else the description, else the test's position (an input is never empty, V1). */
function inputOf(vars: Record<string, unknown>, description: string | undefined, index: number): unknown {
  if (Object.keys(vars).length > 0) return vars;
  return description !== undefined && description !== '' ? description : `test ${index}`;
}

export function importPromptfoo(config: unknown, configFile: string, read: ReadFile): PromptfooImport {
  if (!isRecord(config)) throw new Error(`${configFile}: a promptfoo config is a mapping`);
  const dir = path.dirname(configFile);
  const defaults = readDefaultTest(config['defaultTest'], dir, read);
  const tests = readTests(config['tests'], dir, read);
  const leftOut: LeftOut[] = [];
  const mapped = new Map<string, number>();
  if (config['scenarios'] !== undefined) leftOut.push({ index: 0, what: 'scenarios', reason: 'scenarios are not imported' });
  const cases = tests.map((test, i) => {
    const index = i + 1;
    const description = typeof test.description === 'string' ? test.description : undefined;
    const vars = { ...(isRecord(defaults.vars) ? defaults.vars : {}), ...(isRecord(test.vars) ? test.vars : {}) };
    const asserts = [...(Array.isArray(defaults.assert) ? defaults.assert : []), ...(Array.isArray(test.assert) ? test.assert : [])] as Assertion[];
    const leave = (what: string, reason: string) => leftOut.push({ index, ...(description !== undefined ? { description } : {}), what, reason });
    const options = { ...(isRecord(defaults.options) ? defaults.options : {}), ...(isRecord(test.options) ? test.options : {}) };
    if (options['transform'] !== undefined) {
      leave('test', 'options.transform runs code on the output');
      return undefined;
    }
    // promptfoo expands a list var into one test per value (every combination); one case cannot be several.
    const listVar = Object.entries(vars).find(([, v]) => Array.isArray(v));
    if (listVar !== undefined) {
      leave('test', `the list var \`${listVar[0]}\` expands into several tests in promptfoo`);
      return undefined;
    }
    const fileVar = Object.entries(vars).find(([, v]) => typeof v === 'string' && v.startsWith('file://'));
    if (fileVar !== undefined) {
      leave('test', `the var \`${fileVar[0]}\` is a file:// reference (promptfoo loads the file)`);
      return undefined;
    }
    const specs: { spec: Spec; weight: number }[] = [];
    let expected: unknown;
    let judge: Spec | undefined;
    for (const a of asserts) {
      const type = typeof a?.type === 'string' ? a.type : String(a?.type);
      const m = isRecord(a) ? mapAssertion(a, vars) : ({ unsupported: 'not an assertion' } as Mapped);
      if ('unsupported' in m) {
        leave(type, m.unsupported);
        continue;
      }
      if (m.spec['type'] === 'llm_judge') {
        judge = m.spec;
        mapped.set(type, (mapped.get(type) ?? 0) + 1);
        continue;
      }
      if (m.expected !== undefined) {
        if (expected !== undefined) {
          leave(type, 'a second equals on one test (a case has one expected value)');
          continue;
        }
        expected = m.expected;
      }
      const issues = validateScorerSpec(m.spec, expected === undefined ? {} : { expected });
      if (!issues.ok) {
        leave(type, issues.issues.map((x) => x.message).join('; '));
        continue;
      }
      const weight = typeof a.weight === 'number' && a.weight >= 0 ? a.weight : 1;
      specs.push({ spec: m.spec, weight });
      mapped.set(type, (mapped.get(type) ?? 0) + 1);
    }
    const threshold = typeof test.threshold === 'number' ? test.threshold : typeof defaults.threshold === 'number' ? defaults.threshold : undefined;
    const input = inputOf(vars, description, index);
    const named = description !== undefined ? { name: description } : {};
    if (judge !== undefined) {
      if (specs.length > 0) {
        leave('llm-rubric', 'a rubric together with other assertions (the judge scores a case as a whole)');
        return undefined;
      }
      return { ...named, input, scorer: judge };
    }
    if (specs.length === 0) {
      leave('test', asserts.length === 0 ? 'no assertions (promptfoo passes it whatever the output)' : 'no assertion left to import');
      return undefined;
    }
    if (threshold !== undefined && (!(threshold >= 0) || threshold > 1)) {
      leave('test', 'a threshold outside [0, 1]');
      return undefined;
    }
    // promptfoo's `if (this.threshold)`: a threshold of 0 is the all-pass rule. A lone weight-0 assertion
    // always passes there, so it cannot be one bare scorer.
    const weighted = threshold !== undefined && threshold > 0;
    const scorer: Spec =
      specs.length === 1 && !weighted && specs[0].weight !== 0
        ? specs[0].spec
        : { type: 'all', scorers: specs.map((s) => s.spec), ...(specs.some((s) => s.weight !== 1) ? { weights: specs.map((s) => s.weight) } : {}), ...(weighted ? { threshold } : {}) };
    return { ...named, input, ...(expected !== undefined ? { expected } : {}), scorer };
  });
  const title = typeof config['description'] === 'string' ? config['description'] : undefined;
  return { ...(title !== undefined ? { title } : {}), cases, leftOut, mapped };
}
