import type { Document, LineCounter } from 'yaml';
import type * as YamlLibrary from 'yaml';
import { SUITE_ERROR_CODES as E, type SuiteError } from './suite-error';
import { MAX_SUITE_BYTES } from './suite.limits';
import { readJsonSuite } from './suite.json-reader';
import { type SuiteCheck, type SuiteCheckOptions, type SuiteValidation, validateSuite } from './suite.validator';
import { MAX_YAML_NESTING, yamlNestingExceeds } from './yaml-depth';
import { SuiteContentHasher } from './suite-hash';
import type { SuiteCase } from './suite.model';
import { SuiteStreamValidator, type SuiteStreamResult } from './suite.stream-validator';
import { readYamlSubset } from './suite.yaml-subset-reader';

/**
 * The YAML library, loaded by the first suite parsed: a process that parses none - a CLI command whose suite
 * file the service already has, `evals serve` until a suite arrives - does not load it (about 0.1 s of a
 * cold start, issue 15).
 */
let yamlLibrary: typeof YamlLibrary | undefined;
function yaml(): typeof YamlLibrary {
  yamlLibrary ??= require('yaml') as typeof YamlLibrary;
  return yamlLibrary;
}

/** More alias expansions than this is a "billion laughs" document, not a suite. */
const MAX_ALIAS_COUNT = 100;

/**
 * Parses a suite authored as YAML (V3; JSON is YAML too) and validates it. Every problem is reported with
 * the file, the field path and, where the field exists in the file, its line and column. Never throws.
 *
 * YAML 1.2 core schema: `yes`/`no`/`on` are strings, not booleans, and dates stay strings. Duplicate keys,
 * multiple documents and unknown tags are refused rather than resolved silently.
 */
export function parseSuiteYaml(text: string, fileName: string): SuiteValidation;
/** `{ scorers: false }`: the same checks, no compiled scorer kept (validateSuite's option). */
export function parseSuiteYaml(text: string, fileName: string, options: SuiteCheckOptions): SuiteCheck;
export function parseSuiteYaml(text: string, fileName: string, options?: SuiteCheckOptions): SuiteValidation | SuiteCheck {
  const fail = (errors: SuiteError[]): SuiteValidation => ({ ok: false, errors });
  if (typeof text !== 'string') {
    return fail([{ code: E.SUITE_NOT_A_MAPPING, file: fileName, field: '', message: 'the suite text must be a string' }]);
  }
  if (Buffer.byteLength(text, 'utf8') > MAX_SUITE_BYTES) {
    return fail([{ code: E.SUITE_TOO_LARGE, file: fileName, field: '', message: `the suite file is larger than ${MAX_SUITE_BYTES} bytes` }]);
  }
  if (yamlNestingExceeds(text)) {
    return fail([{ code: E.YAML_UNSUPPORTED, file: fileName, field: '', message: `the document is nested more than ${MAX_YAML_NESTING} levels deep` }]);
  }
  // A valid JSON suite is read natively; anything else, and any suite with problems (whose positions come
  // from the YAML syntax tree), goes through the YAML readers below, so results and errors are theirs.
  const json = readJsonSuite(text);
  if (json !== undefined) {
    const result = options ? validateSuite(json, fileName, options) : validateSuite(json, fileName);
    if (result.ok) return result;
  }
  const batched = parseCasesInBatches(text, fileName, options);
  if (batched !== undefined) return batched;
  return parseWhole(text, fileName, options);
}

/** How every suite text is read by the yaml library. Exported for tests only (not from the library's index). */
export const PARSE_OPTIONS = {
  prettyErrors: false,
  version: '1.2',
  schema: 'core',
  uniqueKeys: true,
  // Integers become bigint so that one beyond 2^53 is refused instead of silently rounded.
  intAsBigInt: true,
  // 'error', not 'silent': a library must not write warnings to the process (every problem comes back
  // as a SuiteError), but 'silent' would also drop the multiple-documents error.
  logLevel: 'error',
} as const;

/** The whole document at once: any YAML a suite can be written in, with the memory of its full syntax tree. Exported for tests only (not from the library's index). */
export function parseWhole(text: string, fileName: string, options?: SuiteCheckOptions): SuiteValidation | SuiteCheck {
  const fail = (errors: SuiteError[]): SuiteValidation => ({ ok: false, errors });
  const lines = new (yaml().LineCounter)();
  let doc: Document.Parsed;
  let raw: unknown;
  try {
    doc = yaml().parseDocument(text, { lineCounter: lines, ...PARSE_OPTIONS });
    // The yaml library reports a document nested beyond its stack as errors carrying the engine's own
    // RangeError text; one plain problem says what it means (no internal message reaches a user).
    const tooDeep = doc.errors.find((e) => /call stack/i.test(e.message));
    if (tooDeep) return fail([located(E.YAML_UNSUPPORTED, fileName, 'the document is nested too deeply to be read', tooDeep.pos[0], lines)]);
    const problems = [
      ...doc.errors.map((e) => located(E.YAML_SYNTAX, fileName, e.message, e.pos[0], lines)),
      ...doc.warnings.map((w) => located(E.YAML_UNSUPPORTED, fileName, w.message, w.pos[0], lines)),
    ];
    // A mapping or list used as a key would be stringified into a made-up key; no suite field is one.
    yaml().visit(doc, {
      Pair(_, pair) {
        if (yaml().isCollection(pair.key)) {
          problems.push(located(E.YAML_UNSUPPORTED, fileName, 'a key must be a plain scalar, not a mapping or list', pair.key.range?.[0] ?? 0, lines));
        }
      },
    });
    if (problems.length > 0) return fail(problems);
    raw = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    // The yaml library throws on excessive aliases and, for pathological nesting, on stack depth.
    const why = error instanceof ReferenceError ? `more than ${MAX_ALIAS_COUNT} alias expansions` : error instanceof RangeError ? 'the document is nested too deeply to be read' : 'the document could not be read';
    return fail([{ code: E.YAML_UNSUPPORTED, file: fileName, field: '', message: why }]);
  }
  if (raw === null || raw === undefined) {
    return fail([{ code: E.SUITE_NOT_A_MAPPING, file: fileName, field: '', message: 'the suite file is empty' }]);
  }
  const result = options ? validateSuite(raw, fileName, options) : validateSuite(raw, fileName);
  if (result.ok) return result;
  // In file order, as an editor lists problems; errors without a position keep their order, last.
  const positioned = result.errors.map((e, i) => ({ e: withPosition(e, doc, lines), i }));
  positioned.sort((a, b) => rank(a.e) - rank(b.e) || (a.e.column ?? 0) - (b.e.column ?? 0) || a.i - b.i);
  return fail(positioned.map((p) => p.e));
}

/** Cases per parse of the batched reader: the syntax tree of this many cases is held at a time. */
const CASES_PER_BATCH = 50;
/** Anchors and aliases (which may cross slices), directives (which change how every slice reads), tab indentation. */
const NOT_BATCHABLE = /(?:^|[\s[{,])[&*][^\s\]},]|^%|^\t/m;

interface CasesLayout {
  /** Offset of the first item of the `cases:` block sequence (the header is the text before it). */
  readonly start: number;
  /** Offsets where a batch of items starts, then the end of the block. */
  readonly bounds: number[];
  /** The 1-based line of each bound. */
  readonly boundLines: number[];
}

/**
 * Issue 15: a suite of 100 000 cases as one YAML document is a syntax tree of millions of nodes (about a
 * gigabyte). The common layout - top-level fields, then `cases:` as a block sequence that ends the file - is
 * read in slices instead: the header, then CASES_PER_BATCH items at a time, each slice parsed by the same
 * parser with the same options and converted at once, so only one slice's tree is alive. The result is the
 * same value the whole document gives. Anything outside that layout, any YAML problem in a slice (which the
 * whole-document reader then reports with its positions) or an anchor/alias/tag directive (which may cross
 * slices) returns undefined, and the caller reads the whole document as before. Validation problems are
 * positioned by re-parsing only the slice that holds the field.
 */
export function parseCasesInBatches(text: string, fileName: string, options?: SuiteCheckOptions): SuiteValidation | SuiteCheck | undefined {
  if (NOT_BATCHABLE.test(text)) return undefined;
  const layout = casesLayout(text);
  if (layout === undefined) return undefined;
  const header = parseSlice(text.slice(0, layout.start));
  if (header === undefined) return undefined;
  const root = header.value;
  if (root === null || typeof root !== 'object' || Array.isArray(root) || (root as Record<string, unknown>)['cases'] !== null) return undefined;
  const cases: unknown[] = [];
  for (let b = 0; b + 1 < layout.bounds.length; b++) {
    const slice = parseSlice(text.slice(layout.bounds[b], layout.bounds[b + 1]));
    if (slice === undefined || !Array.isArray(slice.value)) return undefined;
    for (const c of slice.value) cases.push(c);
  }
  (root as Record<string, unknown>)['cases'] = cases;
  const result = options ? validateSuite(root, fileName, options) : validateSuite(root, fileName);
  if (result.ok) return result;
  return { ok: false, errors: positionBatched(text, layout, cases.length, result.errors) };
}

/** Problems of a suite read in slices, positioned by re-parsing only the slice that holds each field, in file order. */
function positionBatched(text: string, layout: CasesLayout, caseCount: number, errors: readonly SuiteError[]): SuiteError[] {
  let header: SliceTree | undefined;
  const position = (e: SuiteError): SuiteError => {
    const path = parseFieldPath(e.field);
    if (path === undefined) return e;
    if (path[0] === 'cases' && typeof path[1] === 'number' && path[1] < caseCount) {
      const b = Math.floor(path[1] / CASES_PER_BATCH);
      const slice = sliceTree(text.slice(layout.bounds[b], layout.bounds[b + 1]));
      if (slice === undefined) return e;
      const located = withPosition({ ...e, field: formatSlicePath([path[1] - b * CASES_PER_BATCH, ...path.slice(2)]) }, slice.doc, slice.lines);
      return located.line === undefined ? e : { ...e, line: located.line + layout.boundLines[b]! - 1, column: located.column };
    }
    if (path[0] === 'cases') return { ...e, line: layout.boundLines[0], column: firstItemColumn(text, layout.start) };
    header ??= sliceTree(text.slice(0, layout.start));
    return header === undefined ? e : withPosition(e, header.doc, header.lines);
  };
  const positioned = errors.map((e, i) => ({ e: position(e), i }));
  positioned.sort((a, b) => rank(a.e) - rank(b.e) || (a.e.column ?? 0) - (b.e.column ?? 0) || a.i - b.i);
  return positioned.map((p) => p.e);
}

/**
 * streamSuiteYaml's answer, with how the text was read: `whole` when it could not be read in slices. A second
 * pass over the same text given `{ whole: true }` then reads it whole at once, never a slice first.
 */
export type StreamedSuite = SuiteStreamResult & { readonly read: 'slices' | 'whole' };

/** Called with each batch of validated cases, in order (`from`: the index of the first). */
export type SuiteCasesSink = (cases: readonly SuiteCase[], from: number) => void | Promise<void>;

/**
 * parseSuiteYaml's answer without holding the suite (issue 31): the common layout (parseCasesInBatches) is
 * read one slice of CASES_PER_BATCH cases at a time through the streaming validator, each slice's cases
 * given to `sink` while nothing is wrong so far and then dropped; the answer is the suite's head, case count
 * and content hash, or the problems parseSuiteYaml reports, in its order with its positions. Anything else
 * (JSON, anchors, another layout, a slice the YAML reader refuses) is read whole by parseSuiteYaml and its
 * cases given to `sink` in batches. On a refusal, cases already given are to be discarded by the caller.
 *
 * A slice the YAML reader refuses is reported as parseSuiteYaml reports the text. Should the whole text then
 * be valid after cases were given (a slice that reads differently alone), they cannot be given again: that
 * throws. A caller that checks first (a pass without a sink) and stores second, with `{ whole: true }` when the
 * first answer was read whole, never sees it.
 */
export async function streamSuiteYaml(text: string, fileName: string, sink?: SuiteCasesSink, options: { readonly whole?: boolean } = {}): Promise<StreamedSuite> {
  const whole = async (delivered: number): Promise<StreamedSuite> => {
    const r = parseSuiteYaml(text, fileName, { scorers: false });
    if (!r.ok) return { ...r, read: 'whole' };
    if (delivered > 0) throw new Error('streamSuiteYaml: a slice was refused after cases were given; check the text without a sink first');
    const { cases, ...head } = r.suite;
    const hasher = new SuiteContentHasher();
    for (const c of cases) hasher.addCase(c);
    for (let from = 0; sink && from < cases.length; from += CASES_PER_BATCH) await sink(cases.slice(from, from + CASES_PER_BATCH), from);
    return { ok: true, head, case_count: cases.length, content_hash: hasher.digest(head), read: 'whole' };
  };
  if (options.whole === true || typeof text !== 'string' || Buffer.byteLength(text, 'utf8') > MAX_SUITE_BYTES || NOT_BATCHABLE.test(text) || yamlNestingExceeds(text)) return whole(0);
  const layout = casesLayout(text);
  if (layout === undefined) return whole(0);
  const header = parseSlice(text.slice(0, layout.start));
  if (header === undefined) return whole(0);
  const root = header.value;
  if (root === null || typeof root !== 'object' || Array.isArray(root) || (root as Record<string, unknown>)['cases'] !== null) return whole(0);
  (root as Record<string, unknown>)['cases'] = [];
  const validator = new SuiteStreamValidator(fileName);
  validator.begin(root);
  let delivered = 0;
  let count = 0;
  for (let b = 0; b + 1 < layout.bounds.length; b++) {
    const slice = parseSlice(text.slice(layout.bounds[b], layout.bounds[b + 1]));
    if (slice === undefined || !Array.isArray(slice.value)) return whole(delivered);
    const from = count;
    count += slice.value.length;
    const { cases } = validator.add(slice.value);
    if (sink && validator.valid()) {
      await sink(cases as SuiteCase[], from);
      delivered += cases.length;
    }
  }
  const result = validator.finish();
  if (result.ok) return { ...result, read: 'slices' };
  return { ok: false, errors: positionBatched(text, layout, count, result.errors), read: 'slices' };
}

/** A path relative to a slice (whose root is the list of its items), in the validator's format. */
function formatSlicePath(path: ReadonlyArray<string | number>): string {
  return path.map((seg) => (typeof seg === 'number' ? `[${seg}]` : /^[A-Za-z_][A-Za-z0-9_]*$/.test(seg) ? `.${seg}` : `[${JSON.stringify(seg)}]`)).join('').replace(/^\./, '');
}

function firstItemColumn(text: string, start: number): number {
  let i = start;
  while (text[i] === ' ') i++;
  return i - start + 1;
}

/**
 * One slice's value; undefined on any YAML problem (the whole-document reader reports it). The subset reader
 * (suite.yaml-subset-reader.ts) reads the slices suites are written in, the yaml library the rest; its tree
 * is built again only to position a problem (sliceTree).
 */
function parseSlice(slice: string): { value: unknown } | undefined {
  return readYamlSubset(slice) ?? sliceTree(slice);
}

/** One slice through the yaml library, with its syntax tree and lines for positions; undefined on any YAML problem. */
type SliceTree = { value: unknown; doc: Document.Parsed; lines: LineCounter };

function sliceTree(slice: string): SliceTree | undefined {
  const lines = new (yaml().LineCounter)();
  try {
    const doc = yaml().parseDocument(slice, { lineCounter: lines, ...PARSE_OPTIONS });
    if (doc.errors.length > 0 || doc.warnings.length > 0) return undefined;
    let collectionKey = false;
    yaml().visit(doc, {
      Pair(_, pair) {
        if (yaml().isCollection(pair.key)) collectionKey = true;
      },
    });
    if (collectionKey) return undefined;
    return { value: doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }), doc, lines };
  } catch {
    return undefined;
  }
}

/**
 * Finds `cases:` at column 0 followed by a block sequence that runs to the end of the text (only blank and
 * comment lines after it), and cuts it into batches at item starts. An item starts on a line indented like
 * the first item and beginning with `-`; any other line at that indentation or less ends the block.
 */
function casesLayout(text: string): CasesLayout | undefined {
  const head = /^cases[ \t]*:[ \t]*(?:#.*)?\r?$/m.exec(text);
  if (head === null) return undefined;
  let pos = text.indexOf('\n', head.index);
  if (pos < 0) return undefined;
  pos += 1;
  let line = lineOf(text, pos);
  let indent = -1;
  let start = -1;
  const bounds: number[] = [];
  const boundLines: number[] = [];
  let items = 0;
  while (pos < text.length) {
    const end = text.indexOf('\n', pos);
    const next = end < 0 ? text.length : end + 1;
    let i = pos;
    while (text.charCodeAt(i) === 32) i++;
    const c = text[i];
    const blank = i >= next - 1 || c === '\r' || c === '\n' || c === undefined;
    if (!blank && c !== '#') {
      const col = i - pos;
      const isItem = c === '-' && (text[i + 1] === ' ' || text[i + 1] === '\n' || text[i + 1] === '\r' || i + 1 >= text.length);
      if (indent < 0) {
        if (!isItem) return undefined;
        indent = col;
        start = pos;
      }
      if (col < indent || (col === indent && !isItem)) return undefined; // something follows the block
      if (col === indent && isItem) {
        if (items % CASES_PER_BATCH === 0) {
          bounds.push(pos);
          boundLines.push(line);
        }
        items++;
      }
    }
    pos = next;
    line++;
  }
  if (start < 0) return undefined;
  bounds.push(text.length);
  boundLines.push(line);
  return { start, bounds, boundLines };
}

function lineOf(text: string, offset: number): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

function rank(e: SuiteError): number {
  return e.line ?? Number.MAX_SAFE_INTEGER;
}

function located(code: string, file: string, message: string, offset: number, lines: LineCounter): SuiteError {
  const { line, col } = lines.linePos(offset);
  return { code, file, field: '', message: `${message} (line ${line}, column ${col})`, line, column: col };
}

/** Points an error at its field in the file, or at the nearest enclosing node that exists. */
function withPosition(error: SuiteError, doc: Document.Parsed, lines: LineCounter): SuiteError {
  const path = parseFieldPath(error.field);
  if (path === undefined) return error;
  for (let n = path.length; n >= 0; n--) {
    const node: unknown = n === 0 ? doc.contents : doc.getIn(path.slice(0, n), true);
    if (yaml().isNode(node) && node.range) {
      const { line, col } = lines.linePos(node.range[0]);
      return { ...error, line, column: col };
    }
  }
  return error;
}

/** The inverse of the validator's path format: `cases[3].scorer["a b"]` -> ['cases', 3, 'scorer', 'a b']. */
export function parseFieldPath(field: string): Array<string | number> | undefined {
  const out: Array<string | number> = [];
  const re = /(?:^|\.)([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/gy;
  let m: RegExpExecArray | null;
  let consumed = 0;
  while (consumed < field.length && (m = re.exec(field)) !== null) {
    if (m[1] !== undefined) out.push(m[1]);
    else if (m[2] !== undefined) out.push(Number(m[2]));
    else if (m[3] !== undefined) out.push(JSON.parse(m[3]) as string);
    consumed = re.lastIndex;
  }
  return consumed === field.length ? out : undefined;
}
