import * as fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { CliError, EXIT } from './exit-codes';
import { checkRow, isJson, parseSpan, skipSpace, valueEnd, type OutputRow, type Refuse } from './outputs-file';

/**
 * The outputs file read as a stream (issue 15): the same formats, checks and refusals as `parseOutputs` -
 * the same messages with the same line numbers - but holding only the object being read (and the case ids
 * seen, for the duplicate check), so `evals run` of 100 000 outputs needs the memory of one, not of the file.
 */
export interface TextSource {
  /** The next piece of the text; null at its end. */
  read(): string | null;
}

/**
 * The file in chunks of `chunkBytes`, decoded as UTF-8 (a character split between two chunks is kept whole).
 * 64 KiB, not 1 MiB: V8 puts a string above ~128 KiB straight into the old generation, so every 1 MiB chunk
 * (and the window it is joined to) was garbage that only a full GC frees; on 100 000 outputs the heap grew
 * to ~50 MB for a live set of ~10 MB. Windows of 64 KiB die young (peak heap ~25 MB).
 */
export function fileSource(file: string, chunkBytes = 64 * 1024): TextSource & { close(): void } {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    throw new CliError(EXIT.USAGE, `cannot read outputs file ${file}`);
  }
  const buffer = Buffer.allocUnsafe(chunkBytes);
  const decoder = new StringDecoder('utf8');
  let done = false;
  return {
    read() {
      if (done) return null;
      let n: number;
      try {
        n = fs.readSync(fd, buffer, 0, chunkBytes, null);
      } catch {
        throw new CliError(EXIT.USAGE, `cannot read outputs file ${file}`);
      }
      if (n === 0) {
        done = true;
        const rest = decoder.end();
        return rest === '' ? null : rest;
      }
      return decoder.write(buffer.subarray(0, n));
    },
    close() {
      done = true;
      fs.closeSync(fd);
    },
  };
}

/** The rows of an outputs file, one at a time (see `streamOutputs`). */
export function* streamOutputsFile(file: string, chunkBytes?: number, options: StreamOptions = {}): Generator<OutputRow> {
  const source = fileSource(file, chunkBytes);
  try {
    yield* streamOutputs(source, file, options);
  } finally {
    source.close();
  }
}

export interface StreamOptions {
  /**
   * false: no duplicate check, and no case ids kept - for a second read of a file a first one checked whole
   * (`evals run` sending what it scanned), so that read holds nothing but its window.
   */
  readonly duplicates?: boolean;
}

class Incomplete {}

/** Keeps nothing: the duplicate check off. */
const FORGET: Pick<Map<string, number>, 'get' | 'set'> = { get: () => undefined, set: () => FORGET as Map<string, number> };

/** Rows in file order; `file` names the file in refusals, which throw CliError like `parseOutputs`. */
export function* streamOutputs(source: TextSource, file: string, options: StreamOptions = {}): Generator<OutputRow> {
  let buf = '';
  let baseLine = 1; // the line of buf[0]
  let eof = false;
  const more = (): boolean => {
    if (eof) return false;
    const chunk = source.read();
    if (chunk === null) {
      eof = true;
      return false;
    }
    buf += chunk;
    return true;
  };
  const lineAt = (offset: number): number => {
    let line = baseLine;
    for (let i = buf.indexOf('\n'); i !== -1 && i < offset; i = buf.indexOf('\n', i + 1)) line++;
    return line;
  };
  const drop = (n: number) => {
    baseLine = lineAt(n);
    buf = buf.slice(n);
  };
  const refuse: Refuse = (offset, why) => {
    throw new CliError(EXIT.USAGE, `${file}:${lineAt(offset)}: ${why}`);
  };
  const refuseLine = (line: number, why: string): never => {
    throw new CliError(EXIT.USAGE, `${file}:${line}: ${why}`);
  };
  /** While more text may come, any refusal of valueEnd may just be the end of the window: read on and retry. */
  const maybeIncomplete: Refuse = (offset, why) => {
    if (!eof) throw new Incomplete();
    return refuse(offset, why);
  };
  const skipMore = (at: number): number => {
    for (;;) {
      at = skipSpace(buf, at);
      if (at < buf.length || !more()) return at;
    }
  };
  const endOfValue = (at: number): number => {
    for (;;) {
      try {
        const end = valueEnd(buf, at, maybeIncomplete);
        // A bare scalar cut by the window ends at its end: read on to see all of it.
        if (end < buf.length || eof || buf[at] === '{' || buf[at] === '[' || buf[at] === '"') return end;
        more();
      } catch (error) {
        if (!(error instanceof Incomplete)) throw error;
        more();
      }
    }
  };
  const seen = options.duplicates === false ? FORGET : new Map<string, number>();
  const row = (from: number, to: number): OutputRow => checkRow(parseSpan(buf, from, to, refuse), from, lineAt(from), seen, refuse);

  more();
  let start = 0;
  if (buf.charCodeAt(0) === 0xfeff) start = 1;
  const first = skipMore(start);
  if (first >= buf.length) return;

  if (buf[first] === '[') {
    const openLine = lineAt(first);
    let at = skipMore(first + 1);
    if (buf[at] !== ']') {
      for (;;) {
        if (at >= buf.length) refuseLine(openLine, 'the JSON array is not closed');
        const end = endOfValue(at);
        const r = row(at, end);
        drop(end);
        yield r;
        at = skipMore(0);
        if (buf[at] === ',') {
          at = skipMore(at + 1);
          continue;
        }
        if (buf[at] === ']') break;
        if (at < buf.length) refuse(at, 'expected , or ] between the objects of the array');
        refuseLine(openLine, 'the JSON array is not closed');
      }
    }
    // Nothing but space after the array.
    drop(at + 1);
    const rest = skipMore(0);
    if (rest < buf.length) refuse(rest, 'unexpected text after the JSON array');
    return;
  }

  // JSON Lines when the first line is a value by itself; else pretty-printed values one after another.
  let firstLineEnd = buf.indexOf('\n', first);
  while (firstLineEnd === -1 && more()) firstLineEnd = buf.indexOf('\n', first);
  if (isJson(buf.slice(first, firstLineEnd === -1 ? buf.length : firstLineEnd))) {
    let at = start;
    for (;;) {
      let nl = buf.indexOf('\n', at);
      while (nl === -1 && more()) nl = buf.indexOf('\n', at);
      const end = nl === -1 ? buf.length : nl;
      const from = skipSpace(buf, at, end);
      if (from < end) {
        const r = row(from, end);
        yield r;
      }
      if (nl === -1) return;
      drop(nl + 1);
      at = 0;
    }
  }
  for (let at = first; ; ) {
    const end = endOfValue(at);
    const r = row(at, end);
    drop(end);
    yield r;
    at = skipMore(0);
    if (at >= buf.length) return;
  }
}
