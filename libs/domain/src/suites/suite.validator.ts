import { isSafeId, isSuiteKey, MAX_ID_LENGTH, MAX_SUITE_KEY_LENGTH } from '@evals/contracts';
import { type CompiledScorer, ScorerIssueCode, validateScorerSpec } from '@evals/scorers';
import { SUITE_ERROR_CODES as E, type SuiteError } from './suite-error';
import {
  MAX_DESCRIPTION_CHARS,
  MAX_SUITE_CASES,
  MAX_TAGS_PER_CASE,
  MAX_VALUE_DEPTH,
  TAG_PATTERN,
} from './suite.limits';
import type { JsonObject, JsonValue, ScorerSpec, SuiteCase, SuiteDefinition } from './suite.model';

export type SuiteValidation =
  | {
      readonly ok: true;
      readonly suite: SuiteDefinition;
      /** The compiled effective scorer of each case, aligned with `suite.cases`. */
      readonly scorers: readonly CompiledScorer[];
    }
  | { readonly ok: false; readonly errors: readonly SuiteError[] };

/** A validation that kept no compiled scorer (`{ scorers: false }`): the suite, or every problem. */
export type SuiteCheck = { readonly ok: true; readonly suite: SuiteDefinition } | { readonly ok: false; readonly errors: readonly SuiteError[] };

export interface SuiteCheckOptions {
  /**
   * false: every case's scorer is still compiled to check it (S4), but none is kept - what a push needs,
   * which stores the suite and scores nothing (issue 15: 100 000 compiled scorers are tens of megabytes).
   */
  readonly scorers: false;
}

export const SUITE_KEYS = [
  'key',
  'description',
  'default_scorer',
  'pass_threshold',
  'regression_threshold',
  'golden_fixtures',
  'cases',
] as const;
const CASE_KEYS = ['id', 'input', 'expected', 'scorer', 'tags'] as const;

/** Hints for keys people will plausibly write. A Map, so that a key such as `constructor` finds nothing. */
const KEY_HINTS: ReadonlyMap<string, string> = new Map([
  ['version', 'versions are assigned by the service when the suite is pushed (V2)'],
  ['name', 'the suite is identified by `key`'],
  ['scorer', 'the suite-wide scorer is `default_scorer`; a case may have its own `scorer`'],
  ['expect', 'did you mean `expected`?'],
  ['expected_output', 'did you mean `expected`?'],
  ['output', 'candidate outputs are submitted with a run, never stored in a suite'],
  ['tag', 'did you mean `tags` (a list)?'],
]);

type Path = ReadonlyArray<string | number>;

export interface CaseRef {
  readonly index: number;
  readonly id?: string;
}

/** Marks a value already refused by the JSON pass, so field checks do not report it twice. */
export const REFUSED: unique symbol = Symbol('refused');
export type Checked = JsonValue | typeof REFUSED | CheckedObject | Checked[];
export interface CheckedObject {
  readonly [key: string]: Checked;
}

/** `cases[3].scorer.pattern`; keys that are not identifiers are quoted: `input["first name"]`. */
export function formatPath(path: Path): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg.length > 60 ? `${seg.slice(0, 60)}...` : seg)}]`;
  }
  return out;
}

export function join(base: string, field: string): string {
  if (field === '') return base;
  return field.startsWith('[') ? `${base}${field}` : `${base}.${field}`;
}

export function quoteId(id: string): string {
  return JSON.stringify(id.length > 60 ? `${id.slice(0, 60)}...` : id);
}

export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'a boolean';
    case 'object':
      return 'a mapping';
    default:
      return typeof value;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export class Collector {
  readonly errors: SuiteError[] = [];

  constructor(private readonly file: string) {}

  add(code: string, field: string, message: string, ref?: CaseRef): void {
    const error: SuiteError = {
      code,
      file: this.file,
      field,
      message,
      ...(ref?.id !== undefined ? { case_id: ref.id } : {}),
      ...(ref !== undefined ? { case_index: ref.index } : {}),
    };
    this.errors.push(error);
  }
}

/**
 * Validates a raw suite (parsed YAML, or a JSON body) from `source` (a file name, for messages), and
 * compiles every case's effective scorer through @evals/scorers (S4: bad scorer config is refused here,
 * never discovered mid-run). Collects every problem. Never throws on a value parsed from YAML or JSON.
 */
export function validateSuite(raw: unknown, source: string): SuiteValidation;
export function validateSuite(raw: unknown, source: string, options: SuiteCheckOptions): SuiteCheck;
export function validateSuite(raw: unknown, source: string, options?: SuiteCheckOptions): SuiteValidation | SuiteCheck {
  const errs = new Collector(source);
  const root = checkJson(raw, [], errs, 0);
  if (!isRecord(root)) {
    if (root !== REFUSED) {
      errs.add(E.SUITE_NOT_A_MAPPING, '', `a suite must be a mapping with key, default_scorer, thresholds and cases; got ${describeType(root)}`);
    }
    return { ok: false, errors: errs.errors };
  }
  unknownKeys(root, SUITE_KEYS, [], errs);

  const key = readKey(root, errs);
  const description = readDescription(root, errs);
  const pass_threshold = readThreshold(root, 'pass_threshold', errs);
  const regression_threshold = readThreshold(root, 'regression_threshold', errs);
  const golden_fixtures = readGoldenFixtures(root, errs);
  const defaultSpec = readScorerSpecShape(root['default_scorer'], ['default_scorer'], true, errs);
  const cases = readCases(root, errs);

  const compiled = compileScorers(defaultSpec, cases, errs, options?.scorers !== false);
  if (
    errs.errors.length > 0 ||
    key === undefined ||
    pass_threshold === undefined ||
    regression_threshold === undefined ||
    defaultSpec === undefined ||
    cases === undefined ||
    compiled === undefined
  ) {
    return { ok: false, errors: errs.errors };
  }
  const suite: SuiteDefinition = {
    key,
    ...(description !== undefined ? { description } : {}),
    default_scorer: defaultSpec,
    pass_threshold,
    regression_threshold,
    golden_fixtures,
    cases: cases.map((c) => c.value as SuiteCase),
  };
  return options?.scorers === false ? { ok: true, suite } : { ok: true, suite, scorers: compiled };
}

/**
 * One pass over the whole tree: converts YAML big integers (parsed as bigint) to numbers, and refuses what
 * JSON cannot carry, so that every later check sees plain JSON values and the hash is well defined.
 *
 * Copy on write (issue 15: a 100 000-case suite must not be held twice): a plain object or list whose
 * members all come back unchanged is returned as it is; only a value with something converted or refused
 * below it is rebuilt (a mapping with a null prototype always is, into a plain one). `path` is one stack
 * shared by the walk (pushed and popped), formatted only when a problem is reported.
 */
export function checkJson(value: unknown, path: Array<string | number>, errs: Collector, depth: number): Checked {
  if (depth > MAX_VALUE_DEPTH) {
    errs.add(E.VALUE_NOT_JSON, formatPath(path), `nested deeper than ${MAX_VALUE_DEPTH} levels`);
    return REFUSED;
  }
  if (typeof value === 'string') {
    const problem = unstorableText(value);
    if (problem === null) return value;
    errs.add(E.VALUE_NOT_JSON, formatPath(path), `the text contains ${problem}, which a suite cannot store`);
    return REFUSED;
  }
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (Number.isFinite(value)) return Object.is(value, -0) ? 0 : value;
    errs.add(E.VALUE_NOT_JSON, formatPath(path), `${String(value)} is not a finite number; JSON cannot express it`);
    return REFUSED;
  }
  if (typeof value === 'bigint') {
    const n = Number(value);
    if (Number.isSafeInteger(n)) return n;
    errs.add(
      E.VALUE_IMPRECISE,
      formatPath(path),
      'an integer beyond 2^53 cannot be stored exactly; quote it as a string (for json_equal, give `expected` as JSON text)',
    );
    return REFUSED;
  }
  if (Array.isArray(value)) {
    let out: Checked[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      path.push(i);
      const checked = checkJson(v, path, errs, depth + 1);
      path.pop();
      if (out === undefined && !Object.is(checked, v)) out = value.slice(0, i) as Checked[];
      if (out !== undefined) out.push(checked);
    }
    return out ?? (value as Checked[]);
  }
  if (typeof value === 'object') {
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto === Object.prototype || proto === null) {
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj);
      let out: Record<string, Checked> | undefined = proto === null ? {} : undefined;
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i]!;
        let problem: string | null = null;
        if (k === '__proto__') {
          errs.add(E.FIELD_INVALID, formatPath(path), 'the key `__proto__` is not allowed');
          problem = k;
        } else if ((problem = unstorableText(k)) !== null) {
          errs.add(E.VALUE_NOT_JSON, formatPath(path), `a key contains ${problem}, which a suite cannot store`);
        }
        if (problem !== null) {
          // Dropped: the rest of the checks see the mapping without it.
          if (out === undefined) out = copyKeys(obj, keys, i);
          continue;
        }
        const v = obj[k];
        path.push(k);
        const checked = checkJson(v, path, errs, depth + 1);
        path.pop();
        if (out === undefined && !Object.is(checked, v)) out = copyKeys(obj, keys, i);
        if (out !== undefined) out[k] = checked;
      }
      return out ?? (obj as CheckedObject);
    }
  }
  const what = value instanceof Uint8Array ? 'binary data (!!binary)' : value instanceof Date ? 'a timestamp' : `a ${typeof value}`;
  errs.add(E.VALUE_NOT_JSON, formatPath(path), `${what} is not a JSON value; use a string`);
  return REFUSED;
}

/** A plain mapping with the first `n` of `keys` of `obj`, all of which came back unchanged. */
function copyKeys(obj: Record<string, unknown>, keys: readonly string[], n: number): Record<string, Checked> {
  const out: Record<string, Checked> = {};
  for (let j = 0; j < n; j++) out[keys[j]!] = obj[keys[j]!] as Checked;
  return out;
}

// A lone surrogate: a high one not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Text JSON can carry but a suite cannot keep: U+0000 (PostgreSQL's text and jsonb refuse it) and lone
 * surrogates (not Unicode, so not UTF-8). Refused with the field, never stored half-way (a candidate's
 * output may contain them: outputs are hashed and scored, never stored).
 */
function unstorableText(text: string): string | null {
  if (text.includes('\u0000')) return 'a NUL character (U+0000)';
  if (LONE_SURROGATE.test(text)) return 'a lone surrogate (not valid Unicode)';
  return null;
}

export function unknownKeys(obj: CheckedObject, allowed: readonly string[], path: Path, errs: Collector, ref?: CaseRef): void {
  for (const k of Object.keys(obj)) {
    if (allowed.includes(k)) continue;
    const hint = KEY_HINTS.get(k);
    errs.add(
      E.FIELD_UNKNOWN,
      formatPath([...path, k]),
      `unknown field ${JSON.stringify(k.slice(0, 60))}${hint !== undefined ? `: ${hint}` : ''}; allowed: ${allowed.join(', ')}`,
      ref,
    );
  }
}

export function has(obj: CheckedObject, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key) && obj[key] !== undefined;
}

export function readKey(root: CheckedObject, errs: Collector): string | undefined {
  if (!has(root, 'key')) {
    errs.add(E.FIELD_REQUIRED, 'key', 'a suite needs a `key`, e.g. `key: support-triage`');
    return undefined;
  }
  const v = root['key'];
  if (v === REFUSED) return undefined;
  if (isSuiteKey(v)) return v;
  errs.add(
    E.FIELD_INVALID,
    'key',
    `\`key\` must be a lowercase slug of 1 to ${MAX_SUITE_KEY_LENGTH} characters (a-z, 0-9, '.', '_', '-', starting with a letter or digit), got ${typeof v === 'string' ? quoteId(v) : describeType(v)}`,
  );
  return undefined;
}

export function readDescription(root: CheckedObject, errs: Collector): string | undefined {
  const v = root['description'];
  if (v === undefined || v === null || v === REFUSED) return undefined;
  if (typeof v !== 'string') {
    errs.add(E.FIELD_INVALID, 'description', `\`description\` must be a string, got ${describeType(v)}`);
    return undefined;
  }
  if (v.length > MAX_DESCRIPTION_CHARS) {
    errs.add(E.FIELD_INVALID, 'description', `\`description\` is longer than ${MAX_DESCRIPTION_CHARS} characters`);
    return undefined;
  }
  return v;
}

export function readThreshold(root: CheckedObject, name: 'pass_threshold' | 'regression_threshold', errs: Collector): number | undefined {
  if (!has(root, name)) {
    errs.add(E.FIELD_REQUIRED, name, `a suite needs \`${name}\`, a number between 0 and 1`);
    return undefined;
  }
  const v = root[name];
  if (v === REFUSED) return undefined;
  if (typeof v === 'number' && v >= 0 && v <= 1) return v;
  const got =
    typeof v === 'number' ? String(v) : `${describeType(v)}${typeof v === 'string' ? ' (write the number unquoted)' : ''}`;
  errs.add(E.FIELD_INVALID, name, `\`${name}\` must be a number between 0 and 1, got ${got}`);
  return undefined;
}

export function readGoldenFixtures(root: CheckedObject, errs: Collector): boolean {
  const v = root['golden_fixtures'];
  if (v === undefined || v === null || v === REFUSED) return false;
  if (typeof v === 'boolean') return v;
  errs.add(E.FIELD_INVALID, 'golden_fixtures', `\`golden_fixtures\` must be true or false, got ${describeType(v)}`);
  return false;
}

/**
 * The part of a scorer spec the suite format owns: it is a mapping (its `type` and options belong to
 * @evals/scorers). Returns undefined when absent or already refused.
 */
export function readScorerSpecShape(value: Checked | undefined, path: Path, required: boolean, errs: Collector, ref?: CaseRef): ScorerSpec | undefined {
  if (value === undefined || (value === null && !required)) {
    if (required) {
      errs.add(E.FIELD_REQUIRED, formatPath(path), 'a suite needs a `default_scorer`, e.g. `{type: contains, value: refund}`', ref);
    }
    return undefined;
  }
  if (value === REFUSED || containsRefused(value)) return undefined;
  // Shape problems (not a mapping, no type) are reported by validateScorerSpec with the rest.
  return value as unknown as ScorerSpec;
}

function containsRefused(value: Checked): boolean {
  if (value === REFUSED) return true;
  if (Array.isArray(value)) return value.some(containsRefused);
  if (isRecord(value)) return Object.values(value).some((v) => containsRefused(v as Checked));
  return false;
}

export interface ReadCase {
  readonly ref: CaseRef;
  /** Undefined when the case itself is refused (its scorer is then not compiled). */
  readonly value: SuiteCase | undefined;
  /** The case's own spec: absent = default; 'refused' = already reported. */
  readonly scorer: ScorerSpec | undefined | 'refused';
}

function readCases(root: CheckedObject, errs: Collector): ReadCase[] | undefined {
  if (!has(root, 'cases')) {
    errs.add(E.FIELD_REQUIRED, 'cases', 'a suite needs `cases`, a non-empty list');
    return undefined;
  }
  const v = root['cases'];
  if (v === REFUSED) return undefined;
  if (!Array.isArray(v)) {
    errs.add(E.FIELD_INVALID, 'cases', `\`cases\` must be a list, got ${describeType(v)}`);
    return undefined;
  }
  if (v.length === 0) {
    errs.add(E.CASES_EMPTY, 'cases', 'a suite needs at least one case');
    return undefined;
  }
  if (v.length > MAX_SUITE_CASES) {
    errs.add(E.CASES_TOO_MANY, 'cases', `a suite holds at most ${MAX_SUITE_CASES} cases, got ${v.length}`);
    return undefined;
  }
  const firstIndexById = new Map<string, number>();
  return v.map((raw, index) => readCase(raw as Checked, index, firstIndexById, errs));
}

export function readCase(raw: Checked, index: number, firstIndexById: Map<string, number>, errs: Collector): ReadCase {
  const path: Path = ['cases', index];
  const at = (field: string): string => formatPath([...path, field]);
  if (!isRecord(raw)) {
    const ref = { index };
    if (raw !== REFUSED) errs.add(E.FIELD_INVALID, formatPath(path), `a case must be a mapping with id and input, got ${describeType(raw)}`, ref);
    return { ref, value: undefined, scorer: 'refused' };
  }
  const obj = raw as CheckedObject;
  let ok = true;

  let id: string | undefined;
  const rawId = obj['id'];
  if (rawId === undefined) {
    errs.add(E.FIELD_REQUIRED, at('id'), `case ${index} needs an \`id\``, { index });
    ok = false;
  } else if (rawId === REFUSED) {
    ok = false;
  } else if (!isSafeId(rawId)) {
    errs.add(
      E.FIELD_INVALID,
      at('id'),
      `case ${index}: \`id\` must be 1 to ${MAX_ID_LENGTH} characters of letters, digits and . _ : @ - (starting with a letter or digit), got ${typeof rawId === 'string' ? quoteId(rawId) : describeType(rawId)}`,
      { index },
    );
    ok = false;
  } else {
    id = rawId;
  }
  const ref: CaseRef = id !== undefined ? { index, id } : { index };
  const name = id !== undefined ? `case ${quoteId(id)}` : `case ${index}`;
  if (id !== undefined) {
    const first = firstIndexById.get(id);
    if (first !== undefined) {
      errs.add(E.CASE_ID_DUPLICATE, at('id'), `${name}: the id is already used by cases[${first}]; case ids must be unique`, ref);
      ok = false;
    } else {
      firstIndexById.set(id, index);
    }
  }

  unknownKeys(obj, CASE_KEYS, path, errs, ref);

  const input = obj['input'];
  if (input === undefined || input === null) {
    errs.add(E.FIELD_REQUIRED, at('input'), `${name} needs an \`input\`: the prompt or context given to the agent (a string or a mapping)`, ref);
    ok = false;
  } else if (containsRefused(input)) {
    ok = false;
  } else if (typeof input === 'string' ? input.length === 0 : !isRecord(input) || Object.keys(input).length === 0) {
    errs.add(E.FIELD_INVALID, at('input'), `${name}: \`input\` must be a non-empty string or a non-empty mapping, got ${typeof input === 'string' ? 'an empty string' : describeType(input)}`, ref);
    ok = false;
  }

  const hasExpected = Object.prototype.hasOwnProperty.call(obj, 'expected') && obj['expected'] !== undefined;
  const expected = obj['expected'];
  if (hasExpected && containsRefused(expected as Checked)) ok = false;

  let scorer: ScorerSpec | undefined | 'refused';
  const rawScorer = obj['scorer'];
  if (rawScorer === undefined || rawScorer === null) scorer = undefined;
  else scorer = readScorerSpecShape(rawScorer, [...path, 'scorer'], false, errs, ref) ?? 'refused';

  const tags = readTags(obj['tags'], at('tags'), name, errs, ref);
  if (tags === undefined) ok = false;

  if (!ok || id === undefined || tags === undefined || scorer === 'refused') return { ref, value: undefined, scorer };
  const value: SuiteCase = {
    id,
    input: input as string | JsonObject,
    ...(hasExpected ? { expected: expected as JsonValue } : {}),
    ...(scorer !== undefined ? { scorer } : {}),
    tags,
  };
  return { ref, value, scorer };
}

function readTags(v: Checked | undefined, field: string, name: string, errs: Collector, ref: CaseRef): string[] | undefined {
  if (v === undefined || v === null) return [];
  if (v === REFUSED) return undefined;
  if (!Array.isArray(v)) {
    errs.add(E.FIELD_INVALID, field, `${name}: \`tags\` must be a list of strings, got ${describeType(v)}`, ref);
    return undefined;
  }
  if (v.length > MAX_TAGS_PER_CASE) {
    errs.add(E.FIELD_INVALID, field, `${name}: at most ${MAX_TAGS_PER_CASE} tags, got ${v.length}`, ref);
    return undefined;
  }
  let ok = true;
  const seen = new Set<string>();
  v.forEach((tag, i) => {
    if (typeof tag !== 'string' || !TAG_PATTERN.test(tag)) {
      errs.add(E.FIELD_INVALID, `${field}[${i}]`, `${name}: a tag is a lowercase word of 1 to 64 characters (a-z, 0-9, . _ : -), got ${typeof tag === 'string' ? quoteId(tag) : describeType(tag)}`, ref);
      ok = false;
    } else if (seen.has(tag)) {
      errs.add(E.FIELD_INVALID, `${field}[${i}]`, `${name}: the tag ${quoteId(tag)} appears twice`, ref);
      ok = false;
    } else {
      seen.add(tag);
    }
  });
  // A set: sorted, so listing the same tags in another order is the same content.
  return ok ? [...seen].sort() : undefined;
}

/**
 * Whether a scorer issue is about the case's `expected` rather than the scorer's own options. By field and
 * code: `expected` written as an option of a scorer that takes none (`{type: exact, expected: x}`) is an
 * unknown option of the scorer, at `cases[i].scorer.expected`, not a problem with the case's `expected`.
 */
function isExpectedIssue(issue: ScorerIssue): boolean {
  const { field } = issue;
  if (issue.code === ScorerIssueCode.OPTION_UNKNOWN) return false;
  return field === 'expected' || field.startsWith('expected.') || field.startsWith('expected[');
}

/**
 * Compiles each case's effective scorer, the default one validated with each case's own `expected` (a
 * `contains` without `value` is fine when the case's expected supplies it). An issue of the default
 * scorer that every case using it shares is reported once at `default_scorer.<field>`, not once per case;
 * issues about `expected` point at `cases[i].expected` and name the case.
 */
function compileScorers(defaultSpec: ScorerSpec | undefined, cases: ReadCase[] | undefined, errs: Collector, keep: boolean): CompiledScorer[] | undefined {
  if (cases === undefined) {
    if (defaultSpec !== undefined) reportDefaultAlone(defaultSpec, errs);
    return undefined;
  }
  const compilation = new ScorerCompilation(defaultSpec, errs, keep);
  for (const c of cases) compilation.add(c);
  return compilation.finish();
}

/**
 * compileScorers one case at a time, so that the streaming validator (suite.stream-validator.ts) reports
 * exactly what it does. What it keeps across cases is compact: counts, and for each issue of the default
 * scorer the index and id of the cases that hit it (never a case's content).
 */
export class ScorerCompilation {
  readonly compiled: CompiledScorer[] = [];
  private complete = true;
  private usingDefault = 0;
  // Issues of the default scorer, grouped by identity, with the cases that hit them.
  private readonly shared = new Map<string, { issue: ScorerIssue; cases: Array<{ ref: CaseRef; id: string }> }>();

  constructor(
    private readonly defaultSpec: ScorerSpec | undefined,
    private readonly errs: Collector,
    private readonly keep: boolean,
  ) {}

  /** The case's compiled scorer, or undefined when it is refused (or not compiled: refused before). */
  add(c: ReadCase): CompiledScorer | undefined {
    const { defaultSpec, errs } = this;
    if (c.value === undefined) {
      this.complete = false;
      return undefined;
    }
    const own = c.value.scorer;
    if (own === undefined && defaultSpec === undefined) {
      this.complete = false;
      return undefined;
    }
    if (own === undefined) this.usingDefault += 1;
    const spec = own ?? (defaultSpec as ScorerSpec);
    const ctx = Object.prototype.hasOwnProperty.call(c.value, 'expected') ? { expected: c.value.expected } : {};
    const result = validateScorerSpec(spec, ctx);
    if (result.ok) {
      if (this.keep) this.compiled.push(result.scorer);
      return result.scorer;
    }
    this.complete = false;
    const caseField = formatPath(['cases', c.ref.index]);
    const name = `case ${quoteId(c.value.id)}`;
    for (const issue of result.issues) {
      if (isExpectedIssue(issue)) {
        const via = own === undefined ? ' (default scorer)' : '';
        errs.add(issue.code, join(caseField, issue.field), `${name}${via}: ${issue.message}`, c.ref);
      } else if (own !== undefined) {
        errs.add(issue.code, join(`${caseField}.scorer`, issue.field), `${name}: ${issue.message}`, c.ref);
      } else {
        const id = `${issue.code}\u0000${issue.field}\u0000${issue.message}`;
        const group = this.shared.get(id) ?? { issue, cases: [] };
        group.cases.push({ ref: c.ref, id: c.value.id });
        this.shared.set(id, group);
      }
    }
    return undefined;
  }

  /** Reports the default scorer's issues (once when every case using it has them); the compiled scorers when every case compiled. */
  finish(): CompiledScorer[] | undefined {
    const { defaultSpec, errs, usingDefault } = this;
    for (const { issue, cases: hit } of this.shared.values()) {
      const field = join('default_scorer', issue.field);
      if (hit.length === usingDefault && usingDefault > 1) {
        errs.add(issue.code, field, `default_scorer: ${issue.message} (all ${usingDefault} cases that use it)`);
        continue;
      }
      for (const c of hit) {
        errs.add(issue.code, field, `case ${quoteId(c.id)} (default scorer): ${issue.message}`, c.ref);
      }
    }
    if (usingDefault === 0 && defaultSpec !== undefined) reportDefaultAlone(defaultSpec, errs);
    return this.complete ? this.compiled : undefined;
  }
}

export type ScorerIssue = { readonly code: string; readonly field: string; readonly message: string };

/** A default scorer no case uses is still checked, without a case (so without `expected`). */
export function reportDefaultAlone(spec: ScorerSpec, errs: Collector): void {
  const result = validateScorerSpec(spec, {});
  if (result.ok) return;
  for (const issue of result.issues) {
    if (!isExpectedIssue(issue)) errs.add(issue.code, join('default_scorer', issue.field), `default_scorer: ${issue.message}`);
  }
}
