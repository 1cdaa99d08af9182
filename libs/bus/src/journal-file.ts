import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { crc32c } from './crc32c';

/**
 * The on-disk format of the in-process bus's journal (format 2) and the checks made before a journal is
 * trusted. docs/embedded.md has the reasoning; in short:
 *
 *   {"n":0,"k":"head","v":2,"stream":S,"gen":G,"lastSeq":N,"ck":"1a2b3c4d"}   first line of every file
 *   {"n":1,"k":"pub",...,"ck":"..."}                                           then one record a line
 *
 * Every line is a JSON object whose last member `ck` is the CRC-32C (hex) of the line's bytes before
 * `,"ck":` - a flipped byte anywhere is caught; `n` numbers the records of the file from 0, so a line
 * removed or moved is caught too. The head names the stream (a journal copied over another stream's is
 * caught) and the file's generation `gen`, raised at every rewrite (compaction).
 *
 * Beside each journal, `<STREAM>.state` (written atomically at every rewrite and at a clean close) records the
 * generation and the size the journal had then. The journal only grows between rewrites, so a journal that
 * is missing, shorter, or of another generation than its state says was damaged or replaced: refused. A
 * state file is written only after its journal is in place, so the one mismatch a crash can leave - a
 * journal one generation ahead of its state - is accepted.
 *
 * Format 1 (no `n`, no `ck`, no state file) is still read - strictly, as before - and rewritten in format 2
 * by the compaction every open does, so an old directory is migrated on its first open.
 */
export const JOURNAL_FORMAT = 2;

export type JournalRecord =
  | { readonly k: 'head'; readonly v: number; readonly lastSeq: number; readonly stream?: string; readonly gen?: number }
  | { readonly k: 'pub'; readonly seq: number; readonly s: string; readonly id: string | null; readonly t: number; readonly d: string }
  | { readonly k: 'ack'; readonly c: string; readonly q: readonly number[] }
  | { readonly k: 'dup'; readonly id: string; readonly seq: number; readonly t: number };

/** What a state file says about its journal. */
export interface JournalState {
  readonly stream: string;
  readonly gen: number;
  /** The journal's size when the state was written; it only grows until the next generation. */
  readonly bytes: number;
  /** The stream's last sequence then: a repair never hands out a sequence twice. */
  readonly lastSeq: number;
}

/** A journal that cannot be trusted: which file, what is wrong, what to do (exit 3 from `evals serve`). */
export class JournalDamagedError extends Error {
  readonly code = 'JOURNAL_DAMAGED';
  constructor(
    readonly file: string,
    readonly problem: string,
  ) {
    super(
      `InProcessBus: the bus journal ${file} ${problem}. Nothing was started: opening it would lose or alter ` +
        `the messages it holds (unscored outputs among them) without a word. Restore ${path.basename(file)} and ` +
        `${path.basename(stateFileOf(file))} together from a backup, or run \`evals serve --repair\`, which keeps ` +
        'every intact record, drops the damaged ones and lists what it dropped (docs/embedded.md).',
    );
  }
}

export function journalFileOf(dir: string, stream: string): string {
  return path.join(dir, `${encodeURIComponent(stream)}.journal`);
}

export function stateFileOf(journalFile: string): string {
  return journalFile.replace(/\.journal$/, '') + '.state';
}

const CK = Buffer.from(',"ck":"');
/** `,"ck":"` + 8 hex digits + `"}` */
const CK_TAIL = CK.length + 8 + 2;
const NEWLINE = 0x0a;

/** One line of format 2: the record numbered `n`, sealed with its checksum, newline included. */
export function encodeRecord(record: JournalRecord, n: number): string {
  const json = JSON.stringify(record);
  const open = `{"n":${n},${json.slice(1, -1)}`;
  return `${open},"ck":"${hex(crc32c(Buffer.from(open)))}"}\n`;
}

/**
 * The bytes `encodeRecord(record, 0)` takes for a publish record, without encoding it: a publish's size is
 * counted (towards compaction) as it is published, and its base64 payload (ASCII) is measured, not copied.
 */
export function pubRecordBytes(record: Extract<JournalRecord, { k: 'pub' }>): number {
  // {"n":0,"k":"pub","seq":S,"s":SUBJECT,"id":ID,"t":T,"d":"D","ck":"12345678"}\n
  const id = record.id === null ? 4 : Buffer.byteLength(JSON.stringify(record.id));
  return 47 + String(record.seq).length + Buffer.byteLength(JSON.stringify(record.s)) + id + String(record.t).length + record.d.length + 17;
}

function hex(value: number): string {
  return value.toString(16).padStart(8, '0');
}

/** Whether the line (without its newline) ends in a `ck` member, i.e. is meant to be format 2. */
function isSealed(line: Buffer): boolean {
  return line.length > CK_TAIL && line[line.length - 1] === 0x7d && line[line.length - 2] === 0x22 && line.subarray(line.length - CK_TAIL, line.length - CK_TAIL + CK.length).equals(CK);
}

/** The record of a sealed line, or why it is not one. */
function openSealed(line: Buffer, n: number): { record: JournalRecord } | { problem: string } {
  if (!isSealed(line)) return { problem: 'it has no checksum' };
  const body = line.subarray(0, line.length - CK_TAIL);
  const stored = line.subarray(line.length - CK_TAIL + CK.length, line.length - 2).toString('latin1');
  if (!/^[0-9a-f]{8}$/.test(stored) || Number.parseInt(stored, 16) !== crc32c(body)) return { problem: 'its checksum does not match its content' };
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(line.toString('utf8')) as Record<string, unknown>;
  } catch {
    return { problem: 'it is not JSON' };
  }
  if (parsed.n !== n) return { problem: `it is record ${String(parsed.n)} where record ${n} belongs (records are missing or out of order)` };
  const { n: _n, ck: _ck, ...record } = parsed;
  return { record: record as unknown as JournalRecord };
}

export interface JournalLine {
  readonly record: JournalRecord;
  /** Bytes of the line, newline included. */
  readonly bytes: number;
}

/** A record `--repair` could not keep: where it was and, when its damaged text still says so, what it was. */
export interface DroppedRecord {
  readonly line: number;
  readonly offset: number;
  readonly bytes: number;
  readonly problem: string;
  /** Read from the damaged text itself, so unverified: `pub seq 12 id r1:score:3`. */
  readonly looksLike?: string;
}

export interface JournalContents {
  readonly file: string;
  readonly stream: string;
  /** The records to replay, head first (none for a new stream). */
  readonly records: JournalLine[];
  /** The file's generation: 0 for none, or a format 1 file. */
  readonly gen: number;
  readonly format: 0 | 1 | 2;
  /** The state file's record, when there is one. */
  readonly state: JournalState | undefined;
  /** The journal file's size in bytes (0 when missing). */
  readonly size: number;
  /** Bytes after the last newline: the torn remains of a write a crash interrupted, dropped. */
  readonly tornBytes: number;
  /** With `repair`: what was wrong (nothing refused), and the records dropped. */
  readonly problems: string[];
  readonly dropped: DroppedRecord[];
}

/**
 * Reads and checks the journal of `stream` in `file` and its state file. Refuses (JournalDamagedError) a
 * journal with a damaged record, one shorter than its state says, of another generation or stream, or
 * missing while its state exists; a torn last line (a crash mid-write) is dropped as before. With `repair`
 * nothing is refused: the problems are listed and every intact record is returned.
 */
export async function readJournal(file: string, stream: string, options: { repair?: boolean } = {}): Promise<JournalContents> {
  const problems: string[] = [];
  const dropped: DroppedRecord[] = [];
  const refuse = (problem: string) => {
    if (!options.repair) throw new JournalDamagedError(file, problem);
    problems.push(problem);
  };
  const stateFile = stateFileOf(file);
  let state: JournalState | undefined;
  const stateBytes = await readIfExists(stateFile);
  if (stateBytes !== undefined) {
    state = parseState(stateBytes, stream);
    if (!state) refuse(`has a state file ${path.basename(stateFile)} that is damaged`);
  }
  const data = await readIfExists(file);
  const result = (records: JournalLine[], gen: number, format: 0 | 1 | 2, tornBytes: number): JournalContents => ({
    file,
    stream,
    records,
    gen,
    format,
    state,
    size: data?.length ?? 0,
    tornBytes,
    problems,
    dropped,
  });
  if (data === undefined) {
    if (state) refuse(`is missing, though its state file ${path.basename(stateFile)} records generation ${state.gen} of ${state.bytes} bytes`);
    return result([], 0, 0, 0);
  }
  const lastNewline = data.lastIndexOf(NEWLINE);
  const complete = data.subarray(0, lastNewline + 1);
  const tornBytes = data.length - complete.length;
  const lines = splitLines(complete);

  // Format 1: no state file was ever written for it, and no line of it is sealed.
  if (!state && lines.length > 0 && !lines.some((l) => isSealed(l.line))) {
    const records: JournalLine[] = [];
    for (const { line, index, offset } of lines) {
      try {
        records.push({ record: JSON.parse(line.toString('utf8')) as JournalRecord, bytes: line.length + 1 });
      } catch {
        refuse(`is damaged at line ${index + 1} (byte ${offset}): it is not JSON`);
        dropped.push({ line: index + 1, offset, bytes: line.length + 1, problem: 'not JSON' });
      }
    }
    return result(records, 0, 1, tornBytes);
  }

  const records: JournalLine[] = [];
  let gen = 0;
  let n = 0;
  for (const { line, index, offset } of lines) {
    const opened = openSealed(line, n);
    if ('problem' in opened) {
      refuse(`is damaged at line ${index + 1} (byte ${offset}): ${opened.problem}`);
      // Only with --repair from here. A line whose own checksum holds but whose number is off follows a
      // gap: it is kept, and the numbering resumes from it. Any other is dropped, and takes its number.
      const resumed = openSealedAnyNumber(line);
      if (resumed && resumed.n > 0) {
        records.push({ record: resumed.record, bytes: line.length + 1 });
        n = resumed.n + 1;
      } else {
        dropped.push({ line: index + 1, offset, bytes: line.length + 1, problem: opened.problem, ...looksLike(line) });
        n++;
      }
      continue;
    }
    if (n === 0) {
      const head = opened.record;
      if (head.k !== 'head' || head.v !== JOURNAL_FORMAT || typeof head.gen !== 'number') refuse('does not start with its header');
      else if (head.stream !== stream) refuse(`holds the stream ${String(head.stream)}, not ${stream}`);
      else gen = head.gen;
    }
    records.push({ record: opened.record, bytes: line.length + 1 });
    n++;
  }
  if (state) {
    // The state's size is at a record boundary, and only appends after it can be torn by a crash: a last
    // line that ends short of it was cut, not torn. (A journal one generation ahead is a rewrite whose state
    // was not written yet: complete, synced before its rename, and nothing appended to it.)
    if (gen === state.gen + 1) {
      // accepted
    } else if (complete.length < state.bytes && (gen === state.gen || records.length === 0)) {
      refuse(`is truncated: its records end at byte ${complete.length}, where its state file records ${state.bytes} bytes`);
    } else if (gen !== state.gen) {
      refuse(`is generation ${gen}, where its state file records generation ${state.gen}: a copy from another time`);
    }
  } else if (gen > 1) {
    refuse(`has lost its state file ${path.basename(stateFile)} (generation ${gen})`);
  } else if (data.length === 0) {
    return result([], 0, 0, 0);
  }
  return result(records, gen, 2, tornBytes);
}

/** A sealed line whose checksum holds, whatever its number: how `--repair` keeps what follows a gap. */
function openSealedAnyNumber(line: Buffer): { record: JournalRecord; n: number } | undefined {
  if (!isSealed(line)) return undefined;
  try {
    const n = (JSON.parse(line.toString('utf8')) as { n?: unknown }).n;
    if (typeof n !== 'number') return undefined;
    const opened = openSealed(line, n);
    return 'record' in opened ? { record: opened.record, n } : undefined;
  } catch {
    return undefined;
  }
}

/** What a damaged line still says it was - kind, sequence, message id, never the payload (D1). */
function looksLike(line: Buffer): { looksLike?: string } {
  const text = line.toString('utf8');
  const k = /"k":"(pub|ack|dup|head)"/.exec(text)?.[1];
  if (!k) return {};
  const seq = /"seq":(\d+)/.exec(text)?.[1];
  const id = /"id":"([^"\\]{1,200})"/.exec(text)?.[1];
  const durable = /"c":"([^"\\]{1,200})"/.exec(text)?.[1];
  return { looksLike: [k, seq ? `seq ${seq}` : '', id ? `id ${id}` : '', k === 'ack' && durable ? `durable ${durable}` : ''].filter(Boolean).join(' ') };
}

function splitLines(data: Buffer): Array<{ line: Buffer; index: number; offset: number }> {
  const lines: Array<{ line: Buffer; index: number; offset: number }> = [];
  let start = 0;
  for (let index = 0; start < data.length; index++) {
    const end = data.indexOf(NEWLINE, start);
    lines.push({ line: data.subarray(start, end), index, offset: start });
    start = end + 1;
  }
  return lines;
}

function parseState(data: Buffer, stream: string): JournalState | undefined {
  const line = data[data.length - 1] === NEWLINE ? data.subarray(0, data.length - 1) : data;
  const opened = openSealed(line, 0);
  if (!('record' in opened)) return undefined;
  const s = opened.record as unknown as Partial<JournalState> & { k?: string };
  if (s.k !== 'state' || s.stream !== stream || !isCount(s.gen) || !isCount(s.bytes) || !isCount(s.lastSeq)) return undefined;
  return { stream: s.stream, gen: s.gen, bytes: s.bytes, lastSeq: s.lastSeq };
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** Writes the state file atomically (aside, synced, renamed, directory synced): it is either old or new. */
export async function writeState(journalFile: string, state: JournalState): Promise<void> {
  const file = stateFileOf(journalFile);
  const temp = `${file}${STATE_TEMP_SUFFIX}`;
  await replaceFileDurably(file, temp, encodeRecord({ k: 'state', ...state } as unknown as JournalRecord, 0));
}

/**
 * Replaces `file` by `data` so that a crash leaves either the old or the new file: written aside to `temp`
 * (owner-only: journals carry raw payloads), synced, renamed over it, the directory synced.
 */
export async function replaceFileDurably(file: string, temp: string, data: string): Promise<void> {
  try {
    const out = await fsp.open(temp, 'w', 0o600);
    try {
      await out.writeFile(data);
      await out.sync();
    } finally {
      await out.close();
    }
    await fsp.rename(temp, file);
  } catch (error) {
    await fsp.rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
  await syncDirectory(path.dirname(file));
}

export const STATE_TEMP_SUFFIX = '.writing';

/** Makes a rename durable; some platforms cannot open a directory, where this is best effort. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await fsp.open(dir, 'r').catch(() => undefined);
  if (!handle) return;
  await handle.sync().catch(() => undefined);
  await handle.close();
}

async function readIfExists(file: string): Promise<Buffer | undefined> {
  try {
    return await fsp.readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
