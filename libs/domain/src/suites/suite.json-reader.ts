/**
 * Issue 15: a suite written as JSON went through the YAML reader, which builds a node for every scalar and
 * was a third of the CPU of a cold `evals run --suite suite.json`. JSON.parse reads the same text natively.
 *
 * The result is used only when it is certain to be what the YAML reader (YAML 1.2 core schema, unique
 * keys, integers as bigint) gives once validated, and undefined is returned - the caller then reads the
 * text as YAML, with its errors and positions - whenever it might not be:
 * - the text, after an optional BOM and whitespace, does not start with `{`, or JSON.parse refuses it;
 * - a key occurs twice in a mapping (YAML refuses it; JSON.parse keeps the last one silently). Every `:`
 *   outside a string in valid JSON ends a key, so fewer own keys in the result than such colons means a
 *   key was collapsed;
 * - an integer literal is not a safe integer (YAML gives a bigint the validator refuses; JSON.parse rounds);
 * - a carriage return not followed by a line feed (JSON whitespace; the yaml library does not read a lone
 *   one as a line break - found by suite.parser.json.spec.ts).
 *
 * Integers come back as numbers where YAML gives bigints, and `-0` as -0 where YAML gives 0n: the
 * validator's first pass turns a safe bigint into the same number and -0 into 0, so the validated suite
 * is the same value either way.
 */
export function readJsonSuite(text: string): Record<string, unknown> | undefined {
  let start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (let c = text.charCodeAt(start); c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = text.charCodeAt(start)) start++;
  if (text.charCodeAt(start) !== 0x7b /* { */) return undefined;
  if (text.includes('\r') && LONE_CR.test(text)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(start === 0 ? text : text.slice(start));
  } catch {
    return undefined;
  }
  const colons = scan(text, start);
  if (colons < 0) return undefined;
  let keys: number;
  try {
    keys = countKeys(value);
  } catch {
    return undefined; // nested beyond the stack: the YAML path reports it
  }
  return keys === colons ? (value as Record<string, unknown>) : undefined;
}

const LONE_CR = /\r(?!\n)/;

/** Colons outside strings in valid JSON text, or -1 when an integer literal is not a safe integer. */
function scan(text: string, from: number): number {
  let colons = 0;
  const n = text.length;
  let i = from;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let q = text.indexOf('"', i + 1);
      for (;;) {
        let backslashes = 0;
        while (text.charCodeAt(q - 1 - backslashes) === 0x5c) backslashes++;
        if (backslashes % 2 === 0) break;
        q = text.indexOf('"', q + 1);
      }
      i = q + 1;
    } else if (c === 0x3a /* : */) {
      colons++;
      i++;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      const s = i;
      let integer = true;
      for (; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x2e || d === 0x65 || d === 0x45) integer = false;
        else if (!(d === 0x2d || d === 0x2b || (d >= 0x30 && d <= 0x39))) break;
      }
      // Up to 15 digits is always safe; longer ones are checked exactly.
      if (integer && i - s > 15 && !Number.isSafeInteger(Number(text.slice(s, i)))) return -1;
    } else {
      i++;
    }
  }
  return colons;
}

function countKeys(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  let count = 0;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) count += countKeys(value[i]);
    return count;
  }
  const obj = value as Record<string, unknown>;
  for (const k in obj) count += 1 + countKeys(obj[k]);
  return count;
}
