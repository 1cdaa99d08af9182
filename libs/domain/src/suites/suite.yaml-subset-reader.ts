/**
 * Issue 31: the yaml library read a newcomer's 10 000-case suite in about 0.9 s of a cold `evals run` (its
 * lexer, parser and composer not yet optimised by V8, and a node with a source range for every scalar), a
 * third of what a first run pays over a run whose suite is already stored, and the garbage of those trees
 * was most of the first run's extra peak. Suites are written in a small part of YAML - block mappings and
 * sequences, plain and quoted scalars, flow mappings on one line, literal and folded block scalars for prompts and rubrics - and
 * that part is read here directly, line by line, into the value the yaml library gives (YAML 1.2 core schema,
 * integers as bigint, the same escapes).
 *
 * The contract is one-sided: a value returned is the value the yaml library would give the text with no
 * error or warning; whenever this reader is not certain of that, it returns undefined and the caller reads
 * the text with the yaml library, which then also reports any problem with its positions. So it refuses far
 * more than YAML does - tabs, carriage returns, anchors, aliases, tags, directives, document markers,
 * multi-line plain or quoted scalars, keep-chomped block scalars, folded ones with more-indented lines,
 * explicit keys, multi-line flow
 * collections, duplicate or non-string keys - and each refusal costs only the normal read.
 * suite.yaml-subset-reader.spec.ts holds it to that contract against the yaml library: the docs' and
 * examples' suites, fixed edge cases, generated suites and thousands of random edits of them.
 */

/** Read results: `{ value }`, or undefined when the text is outside the subset (read it with the yaml library). */
export function readYamlSubset(text: string): { value: unknown } | undefined {
  if (FORBIDDEN.test(text)) return undefined;
  try {
    return { value: new SubsetReader(text.split('\n')).document() };
  } catch {
    // OUTSIDE, or a RangeError of a document nested deeper than the stack: either way the yaml library decides.
    return undefined;
  }
}

/**
 * Outside the subset anywhere in the text: tabs and carriage returns (indentation and line-break rules the
 * reader does not model), characters YAML does not allow or reads as line breaks, a byte-order mark,
 * document markers and directives at the start of a line.
 */
// eslint-disable-next-line no-control-regex
const FORBIDDEN = /[\x00-\x09\x0b-\x1f\x7f-\x9f\ufeff\ufffe\uffff\u2028\u2029]|^(?:---|\.\.\.)(?:[ \n]|$)|^%/m;

/** Thrown (never escapes readYamlSubset) when the text leaves the subset; a constant, so no stack is captured. */
const OUTSIDE = Object.freeze({ outside: true });
function outside(): never {
  throw OUTSIDE;
}

/** The first character of a plain scalar may not be one of these (YAML's c-indicator), bar `-?:` before a non-space. */
const INDICATORS = new Set([...'-?:,[]{}#&*!|>\'"%@`']);
/** Longer implicit keys are an error in YAML (its 1 024-character limit, measured differently); refused well before it. */
const MAX_KEY_LENGTH = 512;

/** The escapes of a double-quoted scalar, as the yaml library decodes them (a tab is refused before this). */
const ESCAPES: Readonly<Record<string, string>> = {
  '0': '\0',
  a: '\x07',
  b: '\b',
  e: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  N: '\u0085',
  _: '\u00a0',
  L: '\u2028',
  P: '\u2029',
  ' ': ' ',
  '"': '"',
  '/': '/',
  '\\': '\\',
};
const HEX_ESCAPE_LENGTH: Readonly<Record<string, number>> = { x: 2, u: 4, U: 8 };

/**
 * A plain scalar's value under the YAML 1.2 core schema, as the yaml library resolves it (its tags in its
 * order: null, bool, octal, decimal and hex integers as bigint, then .inf/.nan, exponent and plain floats).
 */
export function resolvePlainScalar(source: string): unknown {
  if (/^(?:~|[Nn]ull|NULL)?$/.test(source)) return null;
  if (/^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/.test(source)) return source[0] === 't' || source[0] === 'T';
  if (/^0o[0-7]+$/.test(source) || /^[-+]?[0-9]+$/.test(source) || /^0x[0-9a-fA-F]+$/.test(source)) return BigInt(source);
  if (/^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/.test(source)) {
    return source.slice(-3).toLowerCase() === 'nan' ? NaN : source[0] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  }
  if (/^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/.test(source) || /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/.test(source)) return parseFloat(source);
  return source;
}

/** A mapping key: a plain scalar that resolves to a string, or a quoted one; never one the JS object treats specially. */
function checkedKey(key: string, plain: boolean, seen: Set<string>): string {
  if (plain && typeof resolvePlainScalar(key) !== 'string') outside();
  if (key === '__proto__' || key === '<<' || key.length > MAX_KEY_LENGTH || seen.has(key)) outside();
  seen.add(key);
  return key;
}

/** The end of a line's content after a complete node: only spaces, or a comment after at least one space. */
function checkLineEnd(line: string, at: number): void {
  let i = at;
  while (line.charCodeAt(i) === 32) i++;
  if (i < line.length && (line[i] !== '#' || i === at)) outside();
}

function indentOf(line: string): number {
  let i = 0;
  while (line.charCodeAt(i) === 32) i++;
  return i;
}

/** A line with nothing to read: blank, or only a comment. */
function isEmptyLine(line: string): boolean {
  const i = indentOf(line);
  return i === line.length || line[i] === '#';
}

function isSequenceEntry(line: string, column: number): boolean {
  return line[column] === '-' && (column + 1 === line.length || line[column + 1] === ' ');
}

/** A quoted scalar starting at `at` and closed on the same line: its value and the offset after the closing quote. */
function readQuoted(line: string, at: number): [string, number] {
  const quote = line[at];
  let value = '';
  for (let i = at + 1; i < line.length; i++) {
    const c = line[i]!;
    if (quote === "'") {
      if (c !== "'") value += c;
      else if (line[i + 1] === "'") {
        value += "'";
        i++;
      } else return [value, i + 1];
    } else if (c === '"') return [value, i + 1];
    else if (c !== '\\') value += c;
    else {
      const e = line[++i];
      if (e === undefined) outside(); // a line continuation: multi-line
      const length = HEX_ESCAPE_LENGTH[e];
      if (length !== undefined) {
        const hex = line.substr(i + 1, length);
        if (hex.length !== length || !/^[0-9a-fA-F]+$/.test(hex)) outside();
        value += String.fromCodePoint(parseInt(hex, 16));
        i += length;
      } else if (ESCAPES[e] !== undefined) value += ESCAPES[e];
      else outside();
    }
  }
  return outside(); // not closed on its line
}

/** Whether a plain scalar may start with line[at] (YAML's ns-plain-first, in block or flow context). */
function plainMayStart(line: string, at: number, flow: boolean): boolean {
  const c = line[at];
  if (c === undefined || !INDICATORS.has(c)) return c !== undefined && c !== ' ';
  if (c !== '-' && c !== '?' && c !== ':') return false;
  const next = line[at + 1];
  return next !== undefined && next !== ' ' && !(flow && ',[]{}'.includes(next));
}

class SubsetReader {
  /** The index of the line being read. */
  private at = 0;

  constructor(private readonly lines: readonly string[]) {}

  document(): unknown {
    this.skipEmpty();
    if (this.at >= this.lines.length) outside(); // an empty document
    const line = this.lines[this.at]!;
    const value = this.block(indentOf(line));
    this.skipEmpty();
    if (this.at < this.lines.length) outside(); // something after the root node
    return value;
  }

  private skipEmpty(): void {
    while (this.at < this.lines.length && isEmptyLine(this.lines[this.at]!)) this.at++;
  }

  /** The indentation of the next line with content, or -1 at the end. */
  private nextIndent(): number {
    this.skipEmpty();
    return this.at < this.lines.length ? indentOf(this.lines[this.at]!) : -1;
  }

  /** A block mapping or sequence whose first entry starts at `column` of the current line. */
  private block(column: number): unknown {
    const line = this.lines[this.at]!;
    if (isSequenceEntry(line, column)) return this.sequence(column);
    if (this.keyAt(line, column) !== undefined) return this.mapping(column);
    return outside(); // a scalar as a block node: multi-line, or a root scalar
  }

  private sequence(column: number): unknown[] {
    const items: unknown[] = [];
    for (;;) {
      const line = this.lines[this.at]!;
      let content = column + 1;
      while (line.charCodeAt(content) === 32) content++;
      if (content >= line.length) {
        this.at++;
        items.push(this.nested(column, false));
      } else if (line[content] === '#' || isSequenceEntry(line, content)) {
        outside(); // a comment after the dash, or a compact nested sequence
      } else if (this.keyAt(line, content) !== undefined) {
        items.push(this.mapping(content));
      } else {
        items.push(this.inline(line, content, column));
      }
      const indent = this.nextIndent();
      if (indent < column) return items;
      if (indent > column) outside();
      if (!isSequenceEntry(this.lines[this.at]!, column)) return items; // a mapping's next key after its compact sequence
    }
  }

  private mapping(column: number): Record<string, unknown> {
    const map: Record<string, unknown> = {};
    const seen = new Set<string>();
    for (;;) {
      const line = this.lines[this.at]!;
      const entry = this.keyAt(line, column) ?? outside();
      const key = checkedKey(entry.key, entry.plain, seen);
      let value = entry.valueAt;
      while (line.charCodeAt(value) === 32) value++;
      if (value >= line.length || line[value] === '#') {
        this.at++;
        map[key] = this.nested(column, true);
      } else {
        map[key] = this.inline(line, value, column);
      }
      const indent = this.nextIndent();
      if (indent < column) return map;
      if (indent > column || isSequenceEntry(this.lines[this.at]!, column)) outside();
    }
  }

  /** The value of a key or dash with nothing after it on its line: a more indented block, a key's compact sequence, or null. */
  private nested(column: number, compactSequence: boolean): unknown {
    const indent = this.nextIndent();
    if (indent > column) return this.block(indent);
    if (indent === column && compactSequence && isSequenceEntry(this.lines[this.at]!, column)) return this.sequence(column);
    return null;
  }

  /**
   * A mapping key at `column`: a plain or quoted scalar followed by `:` and a space or the end of the line;
   * undefined when the line holds no key there.
   */
  private keyAt(line: string, column: number): { key: string; plain: boolean; valueAt: number } | undefined {
    const c = line[column];
    if (c === '"' || c === "'") {
      const [key, end] = readQuoted(line, column);
      if (line[end] !== ':' || (end + 1 < line.length && line[end + 1] !== ' ')) return undefined;
      return { key, plain: false, valueAt: end + 1 };
    }
    if (!plainMayStart(line, column, false)) return undefined;
    for (let i = column + 1; i < line.length; i++) {
      const ch = line[i];
      if (ch === ':' && (i + 1 === line.length || line[i + 1] === ' ')) {
        if (line[i - 1] === ' ') return undefined; // a space before the colon
        return { key: line.slice(column, i), plain: true, valueAt: i + 1 };
      }
      if (ch === '#' && line[i - 1] === ' ') return undefined;
    }
    return undefined;
  }

  /** A value that starts on the current line at `at` (of an entry at `column`); the reader moves past it. */
  private inline(line: string, at: number, column: number): unknown {
    const c = line[at]!;
    let value: unknown;
    if (c === '"' || c === "'") {
      const [text, end] = readQuoted(line, at);
      checkLineEnd(line, end);
      value = text;
    } else if (c === '[' || c === '{') {
      const flow = new FlowReader(line);
      value = flow.node(at);
      checkLineEnd(line, flow.offset);
    } else if (c === '|' || c === '>') {
      return this.blockScalar(line, at, column);
    } else if (!plainMayStart(line, at, false)) {
      outside();
    } else {
      let end = line.indexOf(' #', at);
      if (end < 0) end = line.length;
      const source = line.slice(at, end).trimEnd();
      // `a: b: c` (a mapping in a plain scalar) and `a: b:` are errors, not scalars.
      if (source.includes(': ') || source.endsWith(':')) outside();
      value = resolvePlainScalar(source);
    }
    this.at++;
    this.noContinuation(column);
    return value;
  }

  /** After a scalar of an entry at `column`: a more indented line would continue it (multi-line) or be an error. */
  private noContinuation(column: number): void {
    let i = this.at;
    while (i < this.lines.length && this.lines[i]!.trim() === '') i++;
    if (i < this.lines.length && indentOf(this.lines[i]!) > column) outside();
  }

  /**
   * A block scalar of an entry at `column`, its header at `at` of the current line: literal (`|`, `|-`), or
   * folded (`>`, `>-`) without more-indented lines or leading empty lines, whose folding is then only that a
   * line break between two lines becomes a space and each empty line between them a line break.
   */
  private blockScalar(line: string, at: number, column: number): string {
    const folded = line[at] === '>';
    let header = at + 1;
    const strip = line[header] === '-';
    if (strip) header++;
    checkLineEnd(line, header); // refuses keep (+) and an indentation indicator too
    const start = this.at + 1;
    let first = start;
    while (first < this.lines.length && this.lines[first]!.trim() === '') first++;
    if (first >= this.lines.length) outside();
    const indent = indentOf(this.lines[first]!);
    if (indent <= column) outside(); // an empty block scalar
    let end = first;
    let last = first; // the last line with content
    for (let i = first; i < this.lines.length; i++) {
      const text = this.lines[i]!;
      if (text.trim() === '') {
        if (text.length > indent) outside(); // spaces beyond the indentation on an empty line
        continue;
      }
      if (indentOf(text) < indent) break;
      last = i;
      end = i + 1;
    }
    // Leading empty lines with more spaces than the content's indentation are an error in YAML.
    for (let i = start; i < first; i++) if (this.lines[i]!.length > indent) outside();
    if (last === this.lines.length - 1) outside(); // the text ends without a line break after it
    const body: string[] = [];
    for (let i = start; i < end; i++) body.push(this.lines[i]!.slice(indent));
    this.at = end;
    this.noContinuation(column);
    return (folded ? fold(body, first > start) : body.join('\n')) + (strip ? '' : '\n');
  }
}

/** A folded scalar's lines (without their indentation) as one text; outside the subset for what needs more of YAML's rules. */
function fold(lines: readonly string[], leadingEmpty: boolean): string {
  if (leadingEmpty) outside();
  let text = '';
  let empty = 0;
  for (const line of lines) {
    if (line.startsWith(' ')) outside(); // a more-indented line keeps its breaks
    if (line === '') {
      empty++;
      continue;
    }
    text += text === '' ? line : (empty === 0 ? ' ' : '\n'.repeat(empty)) + line;
    empty = 0;
  }
  return text;
}

/** A flow mapping or sequence that opens and closes on one line. */
class FlowReader {
  offset = 0;

  constructor(private readonly line: string) {}

  node(at: number): unknown {
    this.offset = at;
    this.spaces();
    const c = this.line[this.offset];
    if (c === '{') return this.mapping();
    if (c === '[') return this.sequence();
    if (c === '"' || c === "'") {
      const [text, end] = readQuoted(this.line, this.offset);
      this.offset = end;
      return text;
    }
    return resolvePlainScalar(this.plain());
  }

  private spaces(): void {
    while (this.line.charCodeAt(this.offset) === 32) this.offset++;
  }

  private mapping(): Record<string, unknown> {
    const map: Record<string, unknown> = {};
    const seen = new Set<string>();
    this.offset++;
    this.spaces();
    if (this.line[this.offset] === '}') {
      this.offset++;
      return map;
    }
    for (;;) {
      const c = this.line[this.offset];
      let key: string;
      const plain = c !== '"' && c !== "'";
      if (plain) key = this.plain();
      else [key, this.offset] = readQuoted(this.line, this.offset);
      if (this.line[this.offset] !== ':' || this.line[this.offset + 1] !== ' ') outside();
      checkedKey(key, plain, seen);
      map[key] = this.node(this.offset + 1);
      if (this.separator('}')) return map;
    }
  }

  private sequence(): unknown[] {
    const items: unknown[] = [];
    this.offset++;
    this.spaces();
    if (this.line[this.offset] === ']') {
      this.offset++;
      return items;
    }
    for (;;) {
      items.push(this.node(this.offset));
      if (this.line[this.offset] === ':') outside(); // a single-pair mapping in a sequence
      if (this.separator(']')) return items;
    }
  }

  /** After an entry: true at the closing bracket, false after a comma that another entry follows. */
  private separator(close: string): boolean {
    this.spaces();
    const c = this.line[this.offset];
    this.offset++;
    if (c === close) return true;
    if (c !== ',') outside();
    this.spaces();
    if (this.line[this.offset] === close || this.line[this.offset] === ',') outside(); // a trailing or empty entry
    return false;
  }

  /** A plain scalar in flow context: up to a flow indicator, `: `, or a `:` before one. */
  private plain(): string {
    const start = this.offset;
    if (!plainMayStart(this.line, start, true)) outside();
    let i = start;
    for (; i < this.line.length; i++) {
      const c = this.line[i]!;
      if (c === ',' || c === ']' || c === '}') break;
      if (c === '[' || c === '{') outside();
      if (c === '#' && this.line[i - 1] === ' ') outside(); // a comment inside an open collection
      if (c === ':') {
        const next = this.line[i + 1];
        if (next === undefined || next === ' ' || next === ',' || next === ']' || next === '}') break;
      }
    }
    if (i >= this.line.length) outside(); // not closed on this line
    this.offset = i;
    const source = this.line.slice(start, i).trimEnd();
    if (source === '') outside();
    return source;
  }
}
