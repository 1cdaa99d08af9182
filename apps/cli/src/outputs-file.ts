import * as fs from 'node:fs';
import { isSafeId, MAX_INLINE_OUTPUTS, MAX_MESSAGE_BYTES, MAX_OUTPUT_BYTES, utf8ByteLength } from '@evals/limits';
import { CliError, EXIT } from './exit-codes';

/**
 * The outputs file of `evals score`, `run` and `gate` (docs/cli.md, "Outputs files"): `{case_id, output}`
 * objects as JSON Lines, as one JSON array, or as pretty-printed objects one after another (`jq .`'s
 * output); a UTF-8 byte order mark is ignored (RFC 8259 8.1). Every refusal names the file and the line
 * the object starts on - never an array index, never the output itself (D1). The service's limits are
 * checked here, before anything is sent: an output over MAX_OUTPUT_BYTES names its case and the limit.
 */
export interface OutputRow {
  readonly case_id: string;
  readonly output: string;
  /** 1-based line of the file where the object starts. */
  readonly line: number;
}

export function readOutputsFile(file: string): OutputRow[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    throw new CliError(EXIT.USAGE, `cannot read outputs file ${file}`);
  }
  return parseOutputs(text, file);
}

/** Parses the text of an outputs file; `file` names it in errors. */
export function parseOutputs(text: string, file: string): OutputRow[] {
  const lines = new Lines(text);
  const refuse = (offset: number, why: string): never => {
    throw new CliError(EXIT.USAGE, `${file}:${lines.at(offset)}: ${why}`);
  };
  const start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const first = skipSpace(text, start);
  const spans = first < text.length && text[first] === '[' ? arraySpans(text, first, refuse) : lineOrDocumentSpans(text, start, refuse);
  const rows: OutputRow[] = [];
  const seen = new Map<string, number>();
  for (const [from, to] of spans) {
    const value = parseSpan(text, from, to, refuse);
    rows.push(checkRow(value, from, lines.at(from), seen, refuse));
  }
  return rows;
}

/**
 * One parsed value of the file as an output row, or its refusal at `from`: an object with a string case_id
 * (an id) and a string output within MAX_OUTPUT_BYTES, and no second output for a case (`seen`: case id ->
 * line of its output, filled here).
 */
export function checkRow(value: unknown, from: number, line: number, seen: Pick<Map<string, number>, 'get' | 'set'>, refuse: Refuse): OutputRow {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) refuse(from, `expected an object {"case_id": ..., "output": ...}, got ${Array.isArray(value) ? 'an array' : value === null ? 'null' : `a ${typeof value}`}`);
  const r = value as { case_id?: unknown; output?: unknown };
  if (typeof r.case_id !== 'string' || typeof r.output !== 'string') refuse(from, 'needs a string case_id and a string output');
  const caseId = r.case_id as string;
  const output = r.output as string;
  if (!isSafeId(caseId)) refuse(from, 'case_id must be an id: 1 to 200 letters, digits and . _ : @ -, starting with a letter or digit');
  const earlier = seen.get(caseId);
  if (earlier !== undefined) refuse(from, `second output for case ${caseId} (the first is on line ${earlier})`);
  const bytes = utf8ByteLength(output);
  if (bytes > MAX_OUTPUT_BYTES) {
    refuse(from, `the output of case ${caseId} is ${bytesText(bytes)}; the limit is ${bytesText(MAX_OUTPUT_BYTES)} per output (OUTPUT_TOO_LARGE, docs/contracts.md)`);
  }
  seen.set(caseId, line);
  return { case_id: caseId, output, line };
}

/**
 * The whole request's limits, for the outputs of one run as they will be sent: at most MAX_INLINE_OUTPUTS,
 * and the run's message - the outputs JSON-encoded in its envelope - within MAX_MESSAGE_BYTES. The envelope
 * and the run's other fields are given ENVELOPE_ALLOWANCE; a file that close to the limit is refused here
 * rather than by the bus after it was sent.
 */
export const ENVELOPE_ALLOWANCE = 64 * 1024;

export function checkRunSize(rows: readonly OutputRow[], file: string): void {
  if (rows.length > MAX_INLINE_OUTPUTS) {
    throw new CliError(EXIT.USAGE, `${file}: ${rows.length} outputs; one run takes at most ${MAX_INLINE_OUTPUTS.toLocaleString('en-US')} (MAX_INLINE_OUTPUTS, docs/contracts.md): split the suite`);
  }
  const encoded = rows.reduce((n, r) => n + utf8ByteLength(JSON.stringify({ case_id: r.case_id, output: r.output })) + 1, 2);
  const budget = MAX_MESSAGE_BYTES - ENVELOPE_ALLOWANCE;
  if (encoded > budget) {
    throw new CliError(
      EXIT.USAGE,
      `${file}: the outputs come to ${bytesText(encoded)} as JSON; one run's outputs travel in one message of at most ${bytesText(MAX_MESSAGE_BYTES)} (MAX_MESSAGE_BYTES, docs/contracts.md), ${bytesText(budget)} of it for the outputs: split the suite`,
    );
  }
}

/**
 * A refusal of the service naming an output by its index (`outputs[6].output`, `suites[1].outputs[6]`) says
 * which case that is: the index is the request's, which the user never saw.
 */
export function withCaseOfField(error: unknown, outputs: ReadonlyArray<ReadonlyArray<{ readonly case_id: string }>>): unknown {
  const field = (error as { field?: unknown } | null)?.field;
  if (!(error instanceof Error) || typeof field !== 'string') return error;
  const m = /^(?:suites\[(\d+)\]\.)?outputs\[(\d+)\]/.exec(field);
  const list = m ? outputs[m[1] === undefined ? 0 : Number(m[1])] : undefined;
  const row = m && list ? list[Number(m[2])] : undefined;
  if (row) error.message += ` (${m![0]} is case ${row.case_id})`;
  return error;
}

/** `1,048,576 bytes (1 MiB)`. */
export function bytesText(bytes: number): string {
  const exact = `${bytes.toLocaleString('en-US')} bytes`;
  const mib = bytes / (1024 * 1024);
  if (mib >= 1) return `${exact} (${Number.isInteger(mib) ? mib : mib.toFixed(1)} MiB)`;
  const kib = bytes / 1024;
  return kib >= 1 ? `${exact} (${Number.isInteger(kib) ? kib : kib.toFixed(1)} KiB)` : exact;
}

export type Refuse = (offset: number, why: string) => never;
type Span = readonly [number, number];

/** One value per non-empty line (JSON Lines), unless the first value spans several lines (pretty-printed). */
function lineOrDocumentSpans(text: string, start: number, refuse: Refuse): Span[] {
  const first = skipSpace(text, start);
  if (first >= text.length) return [];
  const firstLineEnd = lineEnd(text, first);
  if (isJson(text.slice(first, firstLineEnd))) {
    const spans: Span[] = [];
    for (let at = start; at < text.length; ) {
      const end = lineEnd(text, at);
      const from = skipSpace(text, at, end);
      if (from < end) spans.push([from, end]);
      at = end + 1;
    }
    return spans;
  }
  // Pretty-printed: values one after another, each as long as its brackets say.
  const spans: Span[] = [];
  for (let at = first; at < text.length; at = skipSpace(text, at)) {
    const end = valueEnd(text, at, refuse);
    spans.push([at, end]);
    at = end;
  }
  return spans;
}

/** The elements of a top-level JSON array (`[{...}, {...}]`), each with its own offset. */
function arraySpans(text: string, open: number, refuse: Refuse): Span[] {
  const spans: Span[] = [];
  let at = skipSpace(text, open + 1);
  if (text[at] === ']') return trailing(text, at + 1, refuse, spans);
  for (;;) {
    if (at >= text.length) refuse(open, 'the JSON array is not closed');
    const end = valueEnd(text, at, refuse);
    spans.push([at, end]);
    at = skipSpace(text, end);
    if (text[at] === ',') {
      at = skipSpace(text, at + 1);
      continue;
    }
    if (text[at] === ']') return trailing(text, at + 1, refuse, spans);
    refuse(at < text.length ? at : open, at < text.length ? 'expected , or ] between the objects of the array' : 'the JSON array is not closed');
  }
}

function trailing(text: string, at: number, refuse: Refuse, spans: Span[]): Span[] {
  const rest = skipSpace(text, at);
  if (rest < text.length) refuse(rest, 'unexpected text after the JSON array');
  return spans;
}

/** The end of the JSON value starting at `at`: brackets counted outside strings; the value itself is parsed later. */
export function valueEnd(text: string, at: number, refuse: Refuse): number {
  const c = text[at];
  if (c === '"') return stringEnd(text, at, refuse);
  if (c === '{' || c === '[') {
    let depth = 0;
    for (let i = at; i < text.length; i++) {
      const ch = text[i];
      if (ch === '"') i = stringEnd(text, i, refuse) - 1;
      else if (ch === '{' || ch === '[') depth++;
      else if (ch === '}' || ch === ']') {
        depth--;
        if (depth === 0) return i + 1;
      }
    }
    return refuse(at, `this ${c === '{' ? 'object' : 'array'} is not closed`);
  }
  let i = at;
  while (i < text.length && !/[\s,\]}[{"]/.test(text[i])) i++;
  return i === at ? refuse(at, 'not valid JSON') : i;
}

export function stringEnd(text: string, at: number, refuse: Refuse): number {
  for (let i = at + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i + 1;
  }
  return refuse(at, 'a string is not closed');
}

export function parseSpan(text: string, from: number, to: number, refuse: Refuse): unknown {
  try {
    return JSON.parse(text.slice(from, to));
  } catch {
    // JSON.parse's message quotes the text (D1) and has no position: find where the syntax breaks ourselves.
    return refuse(syntaxErrorAt(text, from, to), 'not valid JSON');
  }
}

/**
 * The offset where the JSON value in [from, to) stops being valid JSON (RFC 8259), for the error's line.
 * Only called on text JSON.parse refused; anything unexpected answers `from`.
 */
export function syntaxErrorAt(text: string, from: number, to: number): number {
  let i = from;
  const ws = () => {
    while (i < to && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const fail = (): never => {
    throw i;
  };
  const str = () => {
    if (text[i] !== '"') fail();
    for (i++; i < to; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return;
      }
      if (c < 0x20) fail();
      if (c === 0x5c) {
        i++;
        if (text[i] === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail();
          i += 4;
        } else if (!'"\\/bfnrt'.includes(text[i] ?? '')) fail();
      }
    }
    fail();
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        str();
        ws();
        if (text[i] !== ':') fail();
        i++;
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return;
        }
        fail();
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return;
        }
        fail();
      }
    }
    if (c === '"') return str();
    const m = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(i, Math.min(to, i + 400)));
    if (!m) fail();
    i += m![0].length;
  };
  try {
    value();
    ws();
    return i < to ? i : from;
  } catch (at) {
    return typeof at === 'number' ? Math.min(at, Math.max(from, to - 1)) : from;
  }
}

export function isJson(s: string): boolean {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}

export function skipSpace(text: string, at: number, end = text.length): number {
  let i = at;
  while (i < end && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  return i;
}

export function lineEnd(text: string, at: number): number {
  const nl = text.indexOf('\n', at);
  return nl === -1 ? text.length : nl;
}

/** Offset to 1-based line number. */
class Lines {
  private readonly starts: number[] = [0];

  constructor(text: string) {
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) this.starts.push(i + 1);
  }

  at(offset: number): number {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  }
}

/**
 * The outputs file as the HTTP API takes it, `[{case_id, output}]`, in file order (same checks as loadOutputs),
 * within the limits of one run (checkRunSize): refused here, before anything is sent.
 * A file with no output is refused here too: the service would refuse the run anyway
 * (422 EMPTY_RUN, R7) - an empty file is almost always a step of the pipeline that failed upstream.
 */
export function loadOutputList(file: string): Array<{ case_id: string; output: string }> {
  const rows = readOutputsFile(file);
  if (rows.length === 0) throw new CliError(EXIT.USAGE, `the outputs file is empty: ${file}`);
  checkRunSize(rows, file);
  return rows.map((r) => ({ case_id: r.case_id, output: r.output }));
}
