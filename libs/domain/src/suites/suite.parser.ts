import { type Document, isCollection, isNode, LineCounter, parseDocument, visit } from 'yaml';
import { SUITE_ERROR_CODES as E, type SuiteError } from './suite-error';
import { MAX_SUITE_BYTES } from './suite.limits';
import { type SuiteValidation, validateSuite } from './suite.validator';
import { MAX_YAML_NESTING, yamlNestingExceeds } from './yaml-depth';

/** More alias expansions than this is a "billion laughs" document, not a suite. */
const MAX_ALIAS_COUNT = 100;

/**
 * Parses a suite authored as YAML (V3; JSON is YAML too) and validates it. Every problem is reported with
 * the file, the field path and, where the field exists in the file, its line and column. Never throws.
 *
 * YAML 1.2 core schema: `yes`/`no`/`on` are strings, not booleans, and dates stay strings. Duplicate keys,
 * multiple documents and unknown tags are refused rather than resolved silently.
 */
export function parseSuiteYaml(text: string, fileName: string): SuiteValidation {
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
  const lines = new LineCounter();
  let doc: Document.Parsed;
  let raw: unknown;
  try {
    doc = parseDocument(text, {
      lineCounter: lines,
      prettyErrors: false,
      version: '1.2',
      schema: 'core',
      uniqueKeys: true,
      // Integers become bigint so that one beyond 2^53 is refused instead of silently rounded.
      intAsBigInt: true,
      // 'error', not 'silent': a library must not write warnings to the process (every problem comes back
      // as a SuiteError), but 'silent' would also drop the multiple-documents error.
      logLevel: 'error',
    });
    // The yaml library reports a document nested beyond its stack as errors carrying the engine's own
    // RangeError text; one plain problem says what it means (no internal message reaches a user).
    const tooDeep = doc.errors.find((e) => /call stack/i.test(e.message));
    if (tooDeep) return fail([located(E.YAML_UNSUPPORTED, fileName, 'the document is nested too deeply to be read', tooDeep.pos[0], lines)]);
    const problems = [
      ...doc.errors.map((e) => located(E.YAML_SYNTAX, fileName, e.message, e.pos[0], lines)),
      ...doc.warnings.map((w) => located(E.YAML_UNSUPPORTED, fileName, w.message, w.pos[0], lines)),
    ];
    // A mapping or list used as a key would be stringified into a made-up key; no suite field is one.
    visit(doc, {
      Pair(_, pair) {
        if (isCollection(pair.key)) {
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
  const result = validateSuite(raw, fileName);
  if (result.ok) return result;
  // In file order, as an editor lists problems; errors without a position keep their order, last.
  const positioned = result.errors.map((e, i) => ({ e: withPosition(e, doc, lines), i }));
  positioned.sort((a, b) => rank(a.e) - rank(b.e) || (a.e.column ?? 0) - (b.e.column ?? 0) || a.i - b.i);
  return fail(positioned.map((p) => p.e));
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
    if (isNode(node) && node.range) {
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
