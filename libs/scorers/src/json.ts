/**
 * A strict, iterative RFC 8259 JSON reader for `json_valid` and `json_equal` (S1, S5).
 *
 * Why not JSON.parse: `json_equal` compares numbers by their exact decimal value (JSON.parse rounds them
 * to doubles, so 9007199254740993 would equal 9007199254740992), and both scorers must stay total and
 * bounded in memory on any output: this reader keeps an explicit stack (no recursion, so '['.repeat(1e5)
 * cannot overflow the call stack), and `json_equal` compares while it reads instead of building a tree of
 * the output.
 *
 * Grammar: exactly RFC 8259 section 2-7 (the same language as ECMA-404 and JSON.parse):
 * - whitespace is only space, tab, LF and CR, before and after any token; a byte order mark (U+FEFF) is not
 *   whitespace, so a leading BOM makes the text invalid (RFC 8259 section 8.1 lets parsers refuse it);
 * - any value may be the top-level value (`"a"`, `1`, `null` are JSON texts);
 * - numbers: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` - no `+`, no leading zeros, no `.5`,
 *   no `NaN`/`Infinity`, no hex;
 * - strings: no raw control character below U+0020; escapes `\" \\ \/ \b \f \n \r \t \uXXXX`; a lone
 *   surrogate (raw or escaped) is accepted, as RFC 8259 section 8.2 describes and JSON.parse does;
 * - literals `true`, `false`, `null`, lower case;
 * - duplicate object names are valid JSON (RFC 8259 says names SHOULD be unique); see `json_equal` for how
 *   they compare.
 */

/** The kind of a JSON value. */
export type JsonKind = 'object' | 'array' | 'string' | 'number' | 'boolean' | 'null';

/** An exact decimal: `(-1)^negative * digits * 10^(exponent + adjust)`, or zero (sign ignored: -0 == 0). */
export type Decimal =
  | { readonly zero: true }
  | {
      readonly zero: false;
      readonly negative: boolean;
      /** Significant digits, no leading or trailing zeros. */
      readonly digits: string;
      /** The written exponent, sign and digits without leading zeros ('' means 0). */
      readonly expNegative: boolean;
      readonly expDigits: string;
      /** A small correction from the decimal point and stripped trailing zeros (|adjust| <= text length). */
      readonly adjust: number;
    };

/**
 * A value the output is compared against (json_equal's `expected`). Numbers are either exact decimals
 * (from JSON text or a bigint) or doubles (from a YAML/JSON value already parsed into a JS number).
 */
export type ExpectedNode =
  | { readonly kind: 'null' }
  | { readonly kind: 'boolean'; readonly value: boolean }
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'number'; readonly double: number }
  | { readonly kind: 'number'; readonly decimal: Decimal }
  | { readonly kind: 'array'; readonly items: ExpectedNode[] }
  | { readonly kind: 'object'; readonly members: Map<string, ExpectedNode> };

/** Receives the tokens of a JSON text as they are read. Offsets index into the text. */
interface JsonVisitor {
  /** A string, number or literal value; for strings, [start, end) excludes the quotes. */
  scalar(kind: 'string' | 'number' | 'boolean' | 'null', text: string, start: number, end: number, hasEscape: boolean): void;
  open(kind: 'object' | 'array'): void;
  /** An object member name; [start, end) excludes the quotes. */
  key(text: string, start: number, end: number, hasEscape: boolean): void;
  close(kind: 'object' | 'array'): void;
}

const enum Ch {
  Tab = 0x09,
  Lf = 0x0a,
  Cr = 0x0d,
  Space = 0x20,
  Quote = 0x22,
  Plus = 0x2b,
  Comma = 0x2c,
  Minus = 0x2d,
  Dot = 0x2e,
  Slash = 0x2f,
  Zero = 0x30,
  One = 0x31,
  Nine = 0x39,
  Colon = 0x3a,
  UpperE = 0x45,
  OpenBracket = 0x5b,
  Backslash = 0x5c,
  CloseBracket = 0x5d,
  LowerE = 0x65,
  OpenBrace = 0x7b,
  CloseBrace = 0x7d,
}

function skipWs(text: string, i: number): number {
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === Ch.Space || c === Ch.Lf || c === Ch.Cr || c === Ch.Tab) i++;
    else break;
  }
  return i;
}

function isDigit(c: number): boolean {
  return c >= Ch.Zero && c <= Ch.Nine;
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** Scans a string whose opening quote is at `i`; returns the index after the closing quote, or -1. */
function scanString(text: string, i: number, out: { hasEscape: boolean }): number {
  const n = text.length;
  let hasEscape = false;
  i++;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === Ch.Quote) {
      out.hasEscape = hasEscape;
      return i + 1;
    }
    if (c < 0x20) return -1;
    if (c === Ch.Backslash) {
      hasEscape = true;
      const e = text.charCodeAt(i + 1); // NaN past the end: matches nothing below
      if (
        e === Ch.Quote ||
        e === Ch.Backslash ||
        e === Ch.Slash ||
        e === 0x62 /* b */ ||
        e === 0x66 /* f */ ||
        e === 0x6e /* n */ ||
        e === 0x72 /* r */ ||
        e === 0x74 /* t */
      ) {
        i += 2;
      } else if (e === 0x75 /* u */) {
        if (
          !isHex(text.charCodeAt(i + 2)) ||
          !isHex(text.charCodeAt(i + 3)) ||
          !isHex(text.charCodeAt(i + 4)) ||
          !isHex(text.charCodeAt(i + 5))
        ) {
          return -1;
        }
        i += 6;
      } else {
        return -1;
      }
    } else {
      i++;
    }
  }
  return -1;
}

/** Scans a number starting at `i`; returns the index after it, or -1. */
function scanNumber(text: string, i: number): number {
  if (text.charCodeAt(i) === Ch.Minus) i++;
  const first = text.charCodeAt(i);
  if (first === Ch.Zero) {
    i++;
  } else if (first >= Ch.One && first <= Ch.Nine) {
    i++;
    while (isDigit(text.charCodeAt(i))) i++;
  } else {
    return -1;
  }
  if (text.charCodeAt(i) === Ch.Dot) {
    i++;
    if (!isDigit(text.charCodeAt(i))) return -1;
    while (isDigit(text.charCodeAt(i))) i++;
  }
  const e = text.charCodeAt(i);
  if (e === Ch.LowerE || e === Ch.UpperE) {
    i++;
    const s = text.charCodeAt(i);
    if (s === Ch.Plus || s === Ch.Minus) i++;
    if (!isDigit(text.charCodeAt(i))) return -1;
    while (isDigit(text.charCodeAt(i))) i++;
  }
  return i;
}

const enum State {
  Value,
  AfterValue,
  Key,
}

const ARRAY = 0;
const OBJECT = 1;

/**
 * Reads `text` as one JSON text. Returns the kind of the top-level value, or undefined when the text is
 * not JSON. Iterative; never throws for any string (the only allocation that grows with nesting is a byte
 * per open container).
 */
function readJson(text: string, visitor?: JsonVisitor): JsonKind | undefined {
  const n = text.length;
  let stack = new Uint8Array(64);
  let depth = 0;
  let top: JsonKind | undefined;
  const esc = { hasEscape: false };
  let i = skipWs(text, 0);
  let state: State = State.Value;

  for (;;) {
    if (state === State.Value) {
      const c = text.charCodeAt(i);
      let kind: JsonKind;
      if (c === Ch.OpenBrace || c === Ch.OpenBracket) {
        kind = c === Ch.OpenBrace ? 'object' : 'array';
        if (depth === 0 && top === undefined) top = kind;
        visitor?.open(kind);
        i = skipWs(text, i + 1);
        const close = c === Ch.OpenBrace ? Ch.CloseBrace : Ch.CloseBracket;
        if (text.charCodeAt(i) === close) {
          visitor?.close(kind);
          i++;
          state = State.AfterValue;
        } else {
          if (depth === stack.length) {
            const bigger = new Uint8Array(stack.length * 2);
            bigger.set(stack);
            stack = bigger;
          }
          stack[depth++] = c === Ch.OpenBrace ? OBJECT : ARRAY;
          state = c === Ch.OpenBrace ? State.Key : State.Value;
        }
        continue;
      }
      const start = i;
      if (c === Ch.Quote) {
        const end = scanString(text, i, esc);
        if (end < 0) return undefined;
        kind = 'string';
        visitor?.scalar('string', text, start + 1, end - 1, esc.hasEscape);
        i = end;
      } else if (c === Ch.Minus || isDigit(c)) {
        const end = scanNumber(text, i);
        if (end < 0) return undefined;
        kind = 'number';
        visitor?.scalar('number', text, start, end, false);
        i = end;
      } else if (text.startsWith('true', i) || text.startsWith('false', i)) {
        kind = 'boolean';
        i += c === 0x74 ? 4 : 5;
        visitor?.scalar('boolean', text, start, i, false);
      } else if (text.startsWith('null', i)) {
        kind = 'null';
        i += 4;
        visitor?.scalar('null', text, start, i, false);
      } else {
        return undefined;
      }
      if (depth === 0 && top === undefined) top = kind;
      state = State.AfterValue;
      continue;
    }

    if (state === State.Key) {
      if (text.charCodeAt(i) !== Ch.Quote) return undefined;
      const end = scanString(text, i, esc);
      if (end < 0) return undefined;
      visitor?.key(text, i + 1, end - 1, esc.hasEscape);
      i = skipWs(text, end);
      if (text.charCodeAt(i) !== Ch.Colon) return undefined;
      i = skipWs(text, i + 1);
      state = State.Value;
      continue;
    }

    // State.AfterValue
    i = skipWs(text, i);
    if (depth === 0) return i === n ? top : undefined;
    const c = text.charCodeAt(i);
    const container = stack[depth - 1];
    if (c === Ch.Comma) {
      i = skipWs(text, i + 1);
      state = container === OBJECT ? State.Key : State.Value;
    } else if (c === Ch.CloseBracket && container === ARRAY) {
      depth--;
      i++;
      visitor?.close('array');
    } else if (c === Ch.CloseBrace && container === OBJECT) {
      depth--;
      i++;
      visitor?.close('object');
    } else {
      return undefined;
    }
  }
}

/** Whether `text` is one JSON text (RFC 8259), and the kind of its top-level value. Never throws. */
export function checkJson(text: string): { readonly valid: true; readonly kind: JsonKind } | { readonly valid: false } {
  const kind = readJson(text);
  return kind === undefined ? { valid: false } : { valid: true, kind };
}

/** Decodes the body of a JSON string token (without quotes); the token was validated by the reader. */
export function decodeJsonString(text: string, start: number, end: number, hasEscape: boolean): string {
  if (!hasEscape) return text.slice(start, end);
  let out = '';
  let runStart = start;
  let i = start;
  while (i < end) {
    if (text.charCodeAt(i) !== Ch.Backslash) {
      i++;
      continue;
    }
    out += text.slice(runStart, i);
    const e = text.charCodeAt(i + 1);
    switch (e) {
      case 0x62:
        out += '\b';
        break;
      case 0x66:
        out += '\f';
        break;
      case 0x6e:
        out += '\n';
        break;
      case 0x72:
        out += '\r';
        break;
      case 0x74:
        out += '\t';
        break;
      case 0x75:
        out += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
        i += 4;
        break;
      default:
        out += String.fromCharCode(e); // " \ /
    }
    i += 2;
    runStart = i;
  }
  return out + text.slice(runStart, end);
}

// ---------------------------------------------------------------------------------------------------------
// Exact decimals

/** Parses a number token (JSON grammar, or a bigint's decimal string) into an exact decimal. */
export function parseDecimal(token: string): Decimal {
  let i = 0;
  const negative = token.charCodeAt(0) === Ch.Minus;
  if (negative) i++;
  let ePos = token.indexOf('e', i);
  if (ePos < 0) ePos = token.indexOf('E', i);
  const mantissaEnd = ePos < 0 ? token.length : ePos;
  const dot = token.indexOf('.', i);
  const intPart = token.slice(i, dot >= 0 && dot < mantissaEnd ? dot : mantissaEnd);
  const fracPart = dot >= 0 && dot < mantissaEnd ? token.slice(dot + 1, mantissaEnd) : '';
  const all = intPart + fracPart;
  let lead = 0;
  while (lead < all.length && all.charCodeAt(lead) === Ch.Zero) lead++;
  if (lead === all.length) return { zero: true };
  let trail = all.length;
  while (all.charCodeAt(trail - 1) === Ch.Zero) trail--;
  const digits = all.slice(lead, trail);
  const adjust = all.length - trail - fracPart.length;
  let expNegative = false;
  let expDigits = '';
  if (ePos >= 0) {
    let j = ePos + 1;
    const s = token.charCodeAt(j);
    if (s === Ch.Minus || s === Ch.Plus) {
      expNegative = s === Ch.Minus;
      j++;
    }
    while (j < token.length && token.charCodeAt(j) === Ch.Zero) j++;
    expDigits = token.slice(j);
    if (expDigits === '') expNegative = false;
  }
  return { zero: false, negative, digits, expNegative, expDigits, adjust };
}

/** Largest exponent digit count handled with plain numbers (|exponent| < 1e15, exact in a double). */
const SMALL_EXP_DIGITS = 15;

/** Exact equality of two decimals by value. Bounded: never parses a huge exponent it does not need. */
export function decimalEquals(a: Decimal, b: Decimal): boolean {
  if (a.zero || b.zero) return a.zero && b.zero;
  if (a.negative !== b.negative || a.digits !== b.digits) return false;
  // Equal significant digits: equal iff expA + adjustA === expB + adjustB.
  if (a.expDigits.length <= SMALL_EXP_DIGITS && b.expDigits.length <= SMALL_EXP_DIGITS) {
    const ea = (a.expNegative ? -1 : 1) * Number(a.expDigits || '0');
    const eb = (b.expNegative ? -1 : 1) * Number(b.expDigits || '0');
    return ea + a.adjust === eb + b.adjust;
  }
  // |adjust| is bounded by the text length (< 2^30), so exponents whose digit counts differ by more than
  // 12 (one of them >= 1e15) cannot be reconciled by it: unequal without big-integer work.
  if (Math.abs(a.expDigits.length - b.expDigits.length) > 12) return false;
  const ea = BigInt(a.expDigits || '0') * (a.expNegative ? -1n : 1n) + BigInt(a.adjust);
  const eb = BigInt(b.expDigits || '0') * (b.expNegative ? -1n : 1n) + BigInt(b.adjust);
  return ea === eb;
}

// ---------------------------------------------------------------------------------------------------------
// Expected values

export type ExpectedResult =
  | { readonly ok: true; readonly node: ExpectedNode }
  | { readonly ok: false; readonly path: string; readonly reason: string };

function memberPath(path: string, key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key.length > 40 ? `${key.slice(0, 40)}...` : key)}]`;
}

/**
 * Builds the expected tree from a JSON text (json_equal's `expected` given as a string). A duplicate object
 * name is refused: the expected value must be unambiguous.
 */
export function expectedFromJsonText(text: string): ExpectedResult {
  const roots: ExpectedNode[] = [];
  const stack: { node: ExpectedNode & { kind: 'array' | 'object' }; key?: string }[] = [];
  let duplicate: string | undefined;
  const attach = (node: ExpectedNode): void => {
    const parent = stack[stack.length - 1];
    if (parent === undefined) roots.push(node);
    else if (parent.node.kind === 'array') parent.node.items.push(node);
    else if (parent.key !== undefined) {
      if (parent.node.members.has(parent.key) && duplicate === undefined) duplicate = parent.key;
      parent.node.members.set(parent.key, node);
    }
  };
  const visitor: JsonVisitor = {
    scalar(kind, t, start, end, hasEscape) {
      switch (kind) {
        case 'string':
          attach({ kind: 'string', value: decodeJsonString(t, start, end, hasEscape) });
          break;
        case 'number':
          attach({ kind: 'number', decimal: parseDecimal(t.slice(start, end)) });
          break;
        case 'boolean':
          attach({ kind: 'boolean', value: t.charCodeAt(start) === 0x74 });
          break;
        default:
          attach({ kind: 'null' });
      }
    },
    open(kind) {
      const node: ExpectedNode & { kind: 'array' | 'object' } =
        kind === 'array' ? { kind: 'array', items: [] } : { kind: 'object', members: new Map() };
      attach(node);
      stack.push({ node });
    },
    key(t, start, end, hasEscape) {
      const frame = stack[stack.length - 1];
      if (frame !== undefined) frame.key = decodeJsonString(t, start, end, hasEscape);
    },
    close() {
      stack.pop();
    },
  };
  if (readJson(text, visitor) === undefined || roots[0] === undefined) {
    return { ok: false, path: 'expected', reason: 'is a string but not valid JSON (RFC 8259)' };
  }
  if (duplicate !== undefined) {
    return { ok: false, path: 'expected', reason: `is JSON with a duplicate object name ${JSON.stringify(duplicate.slice(0, 40))}` };
  }
  return { ok: true, node: roots[0] };
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * Builds the expected tree from a structured value (as parsed from YAML or JSON). Iterative; a value
 * referenced twice (a YAML alias) is converted once and shared; a cycle, a non-finite number, `undefined`,
 * a function, a symbol or a non-plain object (Date, Map, ...) is refused, naming its path.
 */
export function expectedFromValue(value: unknown): ExpectedResult {
  const done = new Map<object, ExpectedNode>();
  const inProgress = new Set<object>();
  type Frame = { src: object; node: ExpectedNode & { kind: 'array' | 'object' }; keys: string[]; index: number; path: string };
  const frames: Frame[] = [];

  type Refusal = { readonly path: string; readonly reason: string };
  // Converts a leaf, or opens a container frame (filled by the loop below); returns the node either way.
  const convert = (v: unknown, path: string): ExpectedNode | Refusal => {
    if (v === null) return { kind: 'null' };
    switch (typeof v) {
      case 'boolean':
        return { kind: 'boolean', value: v };
      case 'string':
        return { kind: 'string', value: v };
      case 'number':
        return Number.isFinite(v) ? { kind: 'number', double: v } : { path, reason: `is ${String(v)}, which JSON cannot express` };
      case 'bigint':
        return { kind: 'number', decimal: parseDecimal(v.toString()) };
      case 'object': {
        const known = done.get(v);
        if (known !== undefined) return known;
        if (inProgress.has(v)) return { path, reason: 'refers to itself (a cycle)' };
        if (Array.isArray(v)) {
          const node: ExpectedNode & { kind: 'array' } = { kind: 'array', items: [] };
          inProgress.add(v);
          frames.push({ src: v, node, keys: [], index: 0, path });
          return node;
        }
        if (!isPlainObject(v)) {
          return { path, reason: 'is not a JSON value (only mappings, lists, strings, numbers, booleans and null)' };
        }
        const node: ExpectedNode & { kind: 'object' } = { kind: 'object', members: new Map() };
        inProgress.add(v);
        frames.push({ src: v, node, keys: Object.keys(v), index: 0, path });
        return node;
      }
      default:
        return { path, reason: `is ${typeof v}, not a JSON value` };
    }
  };

  const root = convert(value, 'expected');
  if ('reason' in root) return { ok: false, ...root };
  while (frames.length > 0) {
    const frame = frames[frames.length - 1] as Frame;
    const src = frame.src as Record<string, unknown> & unknown[];
    const length = frame.node.kind === 'array' ? src.length : frame.keys.length;
    if (frame.index >= length) {
      frames.pop();
      inProgress.delete(frame.src);
      done.set(frame.src, frame.node);
      continue;
    }
    const i = frame.index++;
    let child: ExpectedNode | Refusal;
    if (frame.node.kind === 'array') {
      child = convert(src[i], `${frame.path}[${i}]`);
      if ('reason' in child) return { ok: false, ...child };
      frame.node.items.push(child);
    } else {
      const key = frame.keys[i] as string;
      child = convert(src[key], memberPath(frame.path, key));
      if ('reason' in child) return { ok: false, ...child };
      frame.node.members.set(key, child);
    }
  }
  return { ok: true, node: root };
}

// ---------------------------------------------------------------------------------------------------------
// Comparison while reading

/**
 * Compares a JSON text against an expected tree while reading it: 'invalid' when the text is not JSON,
 * else 'equal' or 'not_equal'. Objects: same set of names, values equal (name order ignored); a duplicate
 * name in the output makes it not equal (RFC 8259 leaves its meaning open). Arrays: same length, equal
 * item by item. Numbers: by value - exactly between two exact decimals (1 == 1.0 == 1e0 == 10e-1, -0 == 0,
 * 9007199254740993 != 9007199254740992); against an expected double (a JS number from YAML/JSON), the
 * output number equals it when it rounds to that same double. Strings: code unit for code unit after
 * unescaping (no normalization).
 * Once a difference is found the rest is only validated (an invalid text is 'invalid', never 'not_equal').
 */
export function compareJson(text: string, expected: ExpectedNode): 'equal' | 'not_equal' | 'invalid' {
  let equal = true;
  /** The expected node the next value must match (undefined: there is none, so the next value differs). */
  let target: ExpectedNode | undefined = expected;
  type Frame = { node: ExpectedNode & { kind: 'array' | 'object' }; index: number; seen: Set<string> | undefined };
  const frames: Frame[] = [];

  const differ = (): void => {
    equal = false;
    frames.length = 0;
  };
  /** Picks the expected node for the next value inside an array frame. */
  const nextInArray = (): void => {
    const frame = frames[frames.length - 1];
    if (frame !== undefined && frame.node.kind === 'array') {
      target = frame.node.items[frame.index++];
    }
  };

  const visitor: JsonVisitor = {
    scalar(kind, t, start, end, hasEscape) {
      if (!equal) return;
      nextInArray();
      const want = target;
      if (want === undefined || want.kind !== kind) return differ();
      switch (want.kind) {
        case 'string':
          if (end - start < want.value.length) return differ(); // escapes only make text longer
          if (decodeJsonString(t, start, end, hasEscape) !== want.value) differ();
          return;
        case 'number': {
          const token = t.slice(start, end);
          if ('double' in want) {
            if (Number(token) !== want.double) differ(); // -0 === 0
          } else if (!decimalEquals(parseDecimal(token), want.decimal)) {
            differ();
          }
          return;
        }
        case 'boolean':
          if ((t.charCodeAt(start) === 0x74) !== want.value) differ();
          return;
        default:
          return; // null
      }
    },
    open(kind) {
      if (!equal) return;
      nextInArray();
      const want = target;
      if (want === undefined || want.kind !== kind) return differ();
      frames.push({ node: want as ExpectedNode & { kind: 'array' | 'object' }, index: 0, seen: kind === 'object' ? new Set() : undefined });
    },
    key(t, start, end, hasEscape) {
      if (!equal) return;
      const frame = frames[frames.length - 1] as Frame;
      const name = decodeJsonString(t, start, end, hasEscape);
      const seen = frame.seen as Set<string>;
      if (seen.has(name)) return differ();
      seen.add(name);
      target = (frame.node as ExpectedNode & { kind: 'object' }).members.get(name);
    },
    close(kind) {
      if (!equal) return;
      const frame = frames.pop() as Frame;
      const complete =
        kind === 'array'
          ? frame.index === (frame.node as ExpectedNode & { kind: 'array' }).items.length
          : (frame.seen as Set<string>).size === (frame.node as ExpectedNode & { kind: 'object' }).members.size;
      if (!complete) differ();
    },
  };

  if (readJson(text, visitor) === undefined) return 'invalid';
  return equal ? 'equal' : 'not_equal';
}
